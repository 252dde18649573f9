// Acceptance for issue 22's routes: every page renders from a direct load of its address, a reload
// and a new tab (its heading, no error toast, no uncaught error); Sessions and Leases follow the
// engine without a reload; at 800 px the sidebar is a rail that opens and closes, and each page's
// header actions are fully on screen.
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { clientKey, openDashboard, type PageName } from './ui';

/** The router's pages, read from its source (it uses the DOM, so this Node-side spec cannot import it). */
const PAGES = [...readFileSync(new URL('../../src/renderer/hooks/useRoute.ts', import.meta.url), 'utf8').match(/PAGES = \[([^\]]*)\]/)![1]!.matchAll(/'(\w+)'/g)].map(
  (m) => m[1] as PageId,
);

const HEADINGS = {
  overview: 'Overview',
  agent: 'Connect your agent',
  connections: 'Connections',
  combos: 'Combos',
  cooldowns: 'Cooldown manager',
  breakers: 'Provider breakers',
  errorRules: 'Error rules',
  settings: 'Resilience settings',
  prices: 'Prices',
  logs: 'Request log',
  sessions: 'Sessions',
  leases: 'Leases',
  team: 'Team',
  app: 'App & token',
} satisfies Record<string, PageName>;
type PageId = keyof typeof HEADINGS;

/** Collects uncaught page errors (a white page is usually one of these). */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/** The page shows its heading and its content, not a spinner forever, and no error toast. */
async function expectRendered(page: Page, id: PageId, errors: string[]): Promise<void> {
  await expect(page.getByRole('heading', { level: 1, name: HEADINGS[id], exact: true })).toBeVisible();
  await expect(page.getByTestId('link-status')).toHaveText('Live');
  await expect(page.locator('.spinner')).toHaveCount(0);
  await expect(page.getByTestId('load-error')).toHaveCount(0);
  await expect(page.locator('.toast-error')).toHaveCount(0);
  expect(errors).toEqual([]);
}

test('every page renders from a direct load, a reload and a new tab', async ({ page, app, context }) => {
  test.setTimeout(260_000); // 36 page loads
  expect(PAGES).toHaveLength(Object.keys(HEADINGS).length);
  for (const id of PAGES) {
    const errors = watchErrors(page);
    await page.goto(`${app.managementUrl}/?token=${app.token}#/${id}`);
    await expectRendered(page, id, errors);
    await page.reload();
    await expectRendered(page, id, errors);

    // A new tab (a bookmark): the session cookie from the first load, no token in the address.
    const tab = await context.newPage();
    const tabErrors = watchErrors(tab);
    await tab.goto(`${app.managementUrl}/#/${id}`);
    await expectRendered(tab, id, tabErrors);
    await tab.close();
    page.removeAllListeners('pageerror');
  }
});

test('Sessions and Leases update while the page is open', async ({ page, app, fake }) => {
  await app.api('PATCH', '/api/settings', { 'requestQueue.autoEnableApiKeyProviders': false });
  await app.api('POST', '/api/providers', { name: 'Alpha', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'key-alpha-e2e-0022' });
  const providers = await app.api<{ id: string }[]>('GET', '/api/providers');
  const keys = await app.api<{ id: string; revokedAt: number | null }[]>('GET', '/api/keys');
  const keyId = keys.find((k) => k.revokedAt === null)!.id;
  await app.api('PATCH', `/api/keys/${keyId}`, { scopes: ['lease:exclusive'], allowedConnections: [providers[0]!.id] });
  const key = await clientKey(app);

  await page.goto(`${app.managementUrl}/?token=${app.token}#/sessions`);
  await expect(page.getByText('No pinned sessions')).toBeVisible();
  const client = new Anthropic({ baseURL: app.proxyUrl, apiKey: key, maxRetries: 0 });
  await client.messages.create(
    { model: 'claude-e2e', max_tokens: 8, messages: [{ role: 'user', content: 'ping' }] },
    { headers: { 'X-Claude-Code-Session-Id': '0b7d2c4e-1a3f-4e5d-9c8b-7a6f5e4d3c22' } },
  );
  await expect(page.getByTestId('session-row')).toHaveCount(1);
  await expect(page.getByTestId('session-row')).toContainText('Alpha');
  // Forgotten through the API, not the page: the row leaves by itself.
  const pins = await app.api<{ sessions: { id: string }[] }>('GET', '/api/sessions');
  await app.api('DELETE', `/api/sessions/${pins.sessions[0]!.id}`);
  await expect(page.getByText('No pinned sessions')).toBeVisible();

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leases' }).click();
  await expect(page.getByText('No active leases')).toBeVisible();
  const acquire = await fetch(`${app.proxyUrl}/api/v1/session-leases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'acquire', label: 'live worker' }),
  });
  expect(acquire.status).toBe(200);
  const { lease } = (await acquire.json()) as { lease: { owner: string; generation: number } };
  await expect(page.getByTestId('lease-row')).toHaveCount(1);
  await expect(page.getByTestId('lease-row')).toContainText('live worker');
  const release = await fetch(`${app.proxyUrl}/api/v1/session-leases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'release', owner: lease.owner, generation: lease.generation }),
  });
  expect(release.status).toBe(200);
  await expect(page.getByText('No active leases')).toBeVisible();
});

test('at 800 px the sidebar is a rail that opens and closes, and every page header action is on screen', async ({ page, app, fake }, info) => {
  test.setTimeout(120_000);
  // A connection, so pages show their full header (Combos' New combo needs one to be enabled).
  await app.api('POST', '/api/providers', { name: 'Alpha', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'key-alpha-e2e-0023' });
  await page.setViewportSize({ width: 800, height: 900 });
  await openDashboard(page, app);
  const sidebar = page.getByTestId('sidebar');
  const toggle = page.getByTestId('sidebar-toggle');
  await expect(sidebar).toHaveClass(/collapsed/);
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');
  expect((await sidebar.boundingBox())!.width).toBeLessThan(100);
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByRole('navigation', { name: 'Main' }).getByText('Cooldown manager')).toBeVisible();
  expect((await sidebar.boundingBox())!.width).toBeGreaterThan(200);
  await toggle.click();
  await expect(sidebar).toHaveClass(/collapsed/);

  const primary: Partial<Record<PageId, string>> = {
    connections: 'Add connection',
    combos: 'New combo',
    breakers: 'Reset all',
    prices: 'Add a price',
  };
  for (const id of PAGES) {
    // Through the rail: its links keep their names.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: HEADINGS[id], exact: true }).click();
    await expect(page.getByRole('heading', { level: 1, name: HEADINGS[id], exact: true })).toBeVisible();
    const name = primary[id];
    if (name) await expect(page.locator('.page-header').getByRole('button', { name, exact: true })).toBeInViewport({ ratio: 1 });
    for (const action of await page.locator('.page-header .page-actions > *').all()) {
      await expect(action).toBeInViewport({ ratio: 1 });
    }
    // Nothing pushes the page sideways (wide tables scroll inside their own box).
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(800);
    await page.screenshot({ path: info.outputPath(`800-${id}.png`), fullPage: true });
  }
});
