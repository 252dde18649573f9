// Screenshots of every page in the sidebar (read from the sidebar itself, so a new page is never
// missed) at 1440 and 800 px, after the seeded state of tests/e2e/seedState.ts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { startSeeded } from '../e2e/seedState';
import { openDashboard } from '../e2e/ui';

const OUT = process.env.SCREENSHOTS_DIR ?? join(process.cwd(), 'docs', 'screenshots');

test('every page at 1440 and 800 px', async ({ browser }) => {
  mkdirSync(OUT, { recursive: true });
  const seeded = await startSeeded();
  try {
    for (const width of [1440, 800]) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await openDashboard(page, seeded.app);
      const hrefs = await page.locator('nav a[href^="#/"]').evaluateAll((els) => els.map((e) => e.getAttribute('href') ?? ''));
      const routes = [...new Set(hrefs.map((h) => h.replace(/^#\//, '').split(/[/?]/)[0]!).filter(Boolean))];
      expect(routes.length).toBeGreaterThan(5);
      for (const route of routes) {
        await page.evaluate(`window.location.hash = ${JSON.stringify(`#/${route}`)}`);
        await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
        // The event stream keeps a request open, so "network idle" never comes: let the page settle.
        await expect(page.locator('.spinner')).toHaveCount(0, { timeout: 5_000 }).catch(() => undefined);
        await page.waitForTimeout(600);
        await page.screenshot({ path: join(OUT, `${route}-${width}.png`), fullPage: true });
      }
      await page.close();
    }
  } finally {
    await seeded.stop();
  }
});
