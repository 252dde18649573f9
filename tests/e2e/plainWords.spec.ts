// Acceptance for plain words (issue 22): with realistic state seeded through the management API
// and the proxy (a cooling connection after a 429, a model lockout, a tripped breaker, a combo
// whose every target is out, a mapping, a Claude subscription account, a session pin, a lease,
// an operator error rule, request-log rows including failed ones), every page of the dashboard
// and its main dialogs are read as a user reads them (`innerText`) and checked with findJargon.
// Technical names behind TechName ([data-tech-name]) and copyable setup snippets ([data-snippet])
// are not prose and are left out. One test per page, so each page's state is visible on its own.
import { expect, test, type Page } from '@playwright/test';
import type { Headless } from './headless';
import { findJargon } from './jargon';
import { startSeeded, type Seeded } from './seedState';
import { openDashboard } from './ui';

// The dashboard's routes (src/renderer/hooks/useRoute.ts PAGES; that module needs a browser, so
// the list is repeated here — a page added there and not here fails the sidebar check below).
const PAGES = ['overview', 'agent', 'connections', 'combos', 'cooldowns', 'breakers', 'errorRules', 'settings', 'prices', 'logs', 'sessions', 'leases', 'team', 'app'] as const;
type PageId = (typeof PAGES)[number];

let seeded: Seeded;
let app: Headless;

test.beforeAll(async () => {
  seeded = await startSeeded();
  app = seeded.app;
});

test.afterAll(async () => {
  await seeded?.stop();
});

/** What the user reads on the page now, without revealed technical names and copyable snippets. */
async function readableText(page: Page): Promise<string> {
  // A string, so the node typecheck (no DOM lib) does not read browser globals.
  return (await page.evaluate(`(() => {
    const hidden = [...document.querySelectorAll('[data-tech-name], [data-snippet]')];
    const before = hidden.map((el) => el.style.display);
    for (const el of hidden) el.style.display = 'none';
    const text = document.body.innerText;
    hidden.forEach((el, i) => (el.style.display = before[i]));
    return text;
  })()`)) as string;
}

/** Every jargon hit in what the page shows, as "where — rule: text …context…" lines (each once). */
async function jargonOn(page: Page, where: string): Promise<string[]> {
  const text = await readableText(page);
  const lines = findJargon(text).map((h) => {
    const around = text.slice(Math.max(0, h.index - 60), h.index + h.text.length + 40).replace(/\s+/g, ' ').trim();
    return `${where} — ${h.rule}: ${h.text}   …${around}…`;
  });
  return [...new Set(lines)];
}

async function visit(page: Page, id: PageId): Promise<void> {
  await openDashboard(page, app);
  await page.evaluate(`window.location.hash = ${JSON.stringify(`#/${id}`)}`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  // Let the page finish loading; a page that never does is another test's failure, its words are still read.
  await expect(page.locator('main .spinner')).toHaveCount(0, { timeout: 10_000 }).catch(() => undefined);
}

/** The main dialogs of a page, opened one after the other, each read while open. */
const DIALOGS: Partial<Record<PageId, (page: Page) => Promise<string[]>>> = {
  connections: async (page) => {
    const found: string[] = [];
    await page.getByRole('button', { name: 'Add connection' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add connection' });
    await expect(dialog).toBeVisible();
    found.push(...(await jargonOn(page, 'Add connection dialog')));
    await dialog.getByRole('combobox', { name: 'Kind', exact: true }).selectOption({ label: 'Claude subscription' });
    found.push(...(await jargonOn(page, 'Add connection dialog, Claude subscription')));
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    return found;
  },
  combos: async (page) => {
    await page.getByRole('article', { name: 'pool' }).getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit pool' });
    await expect(dialog).toBeVisible();
    const found = await jargonOn(page, 'Edit combo dialog');
    await page.keyboard.press('Escape');
    return found;
  },
  logs: async (page) => {
    // Every row's details open at once (they expand in place).
    const rows = page.getByTestId('log-row');
    await expect(rows.first()).toBeVisible();
    const n = await rows.count();
    for (let i = 0; i < n; i++) await rows.nth(i).getByRole('button', { name: /Details of the/ }).click();
    await expect(page.getByRole('table', { name: 'Attempts' }).first()).toBeVisible();
    return jargonOn(page, 'request details');
  },
  errorRules: async (page) => {
    const tester = page.getByRole('region', { name: 'Test an error' });
    await tester.getByRole('combobox', { name: 'Provider' }).fill('gamma');
    await tester.getByRole('textbox', { name: 'Status' }).fill('429');
    await tester.getByRole('textbox', { name: 'Error body' }).fill('{"error":{"message":"key spent for today"}}');
    await expect(page.getByTestId('rule-test-effect')).toBeVisible();
    const found = await jargonOn(page, 'error-rule tester (your rule)');
    await tester.getByRole('combobox', { name: 'Provider' }).fill('agentrouter');
    await tester.getByRole('textbox', { name: 'Status' }).fill('403');
    await tester.getByRole('textbox', { name: 'Error body' }).fill('{"error":{"message":"用户额度不足"}}');
    await expect(page.getByTestId('rule-test-result')).toContainText('Built-in');
    found.push(...(await jargonOn(page, 'error-rule tester (built-in rule)')));
    return found;
  },
};

test('every page of the sidebar is among those checked', async ({ page }) => {
  await openDashboard(page, app);
  const links = page.getByRole('navigation', { name: 'Main' }).getByRole('link');
  const hrefs = await links.evaluateAll((els) => els.map((el) => el.getAttribute('href') ?? ''));
  const ids = [...new Set(hrefs.filter((h) => h.startsWith('#/')).map((h) => h.slice(2).split(/[/?]/)[0]))];
  expect(ids.sort()).toEqual([...PAGES].sort());
});

for (const id of PAGES) {
  test(`page "${id}" shows no requirement ids, codes or setting keys`, async ({ page }, info) => {
    await visit(page, id);
    const found = await jargonOn(page, `page ${id}`);
    const open = DIALOGS[id];
    if (open) found.push(...(await open(page)));
    await page.screenshot({ path: info.outputPath(`${id}.png`), fullPage: true });
    const unique = [...new Set(found)];
    expect(unique, `words from inside the code on "${id}":\n${unique.join('\n')}`).toEqual([]);
  });
}
