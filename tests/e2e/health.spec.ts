// Opening the dashboard: the token link, the token gate, engine health on the first page, and the
// live link indicator across an engine restart.
import { expect, test } from '@playwright/test';
import { startServe, type Headless } from './headless';
import { goTo } from './ui';

let app: Headless;

test.beforeAll(async () => {
  app = await startServe();
});

test.afterAll(async () => {
  await app.stop();
});

test('the dashboard opens with the token link and shows engine health', async ({ page }, info) => {
  await page.goto(`${app.managementUrl}/?token=${app.token}`);
  await expect(page.getByTestId('health-status')).toContainText(/ok|degraded/);
  await expect(page.getByTestId('proxy-url')).toContainText(app.proxyUrl);
  // The token leaves the address bar: it was exchanged for a session cookie the page cannot read.
  expect(page.url()).not.toContain('token=');
  expect(await page.evaluate('document.cookie')).toBe('');
  expect(await page.evaluate('JSON.stringify(window.localStorage)')).not.toContain(app.token);
  expect((await page.context().cookies()).find((c) => c.name.startsWith('switchyard_session'))).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  await page.screenshot({ path: info.outputPath('dashboard-health.png'), fullPage: true });
});

test('without a token the dashboard asks for one and the API refuses', async ({ page, request }) => {
  await page.goto(app.managementUrl);
  await expect(page.getByLabel('Management token')).toBeVisible();
  const res = await request.get(`${app.managementUrl}/api/monitoring/health`);
  expect(res.status()).toBe(401);
});

test('a wrong token is refused at the gate and the right one opens the dashboard', async ({ page }, info) => {
  await page.goto(app.managementUrl);
  await page.getByLabel('Management token').fill('not-the-token');
  await page.getByRole('button', { name: 'Open' }).click();
  await expect(page.getByText('That management token was not accepted.')).toBeVisible();
  await page.screenshot({ path: info.outputPath('token-gate.png') });
  await page.getByLabel('Management token').fill(app.token);
  await page.getByRole('button', { name: 'Open' }).click();
  await expect(page.getByTestId('health-status')).toContainText(/ok|degraded/);
  // The session cookie opens it again after a reload.
  await page.reload();
  await expect(page.getByTestId('link-status')).toHaveText('Live');
});

test('a read of the first load that is refused late does not take back the gate\'s answer', async ({ page }) => {
  // On a loaded machine one of the first load's reads comes back after a token was already tried:
  // held here until the gate has answered, then let through (refused, like every read without a token).
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  await page.route('**/api/logs**', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(app.managementUrl);
  await page.getByLabel('Management token').fill('not-the-token');
  await page.getByRole('button', { name: 'Open' }).click();
  await expect(page.getByText('That management token was not accepted.')).toBeVisible();
  const late = page.waitForResponse((r) => r.url().includes('/api/logs'));
  release();
  const refused = await late;
  expect(refused.status()).toBe(401);
  // Let the page take the answer in: its body read, the refusal handled, React's render done.
  await refused.finished();
  for (let i = 0; i < 3; i++) await page.evaluate('new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))');
  await expect(page.getByText('That management token was not accepted.')).toBeVisible();
});

test('the live link shows reconnecting while the engine is away, and changes show again once it is back', async ({ page }) => {
  await page.goto(`${app.managementUrl}/?token=${app.token}`);
  await goTo(page, 'Connections');
  await expect(page.getByTestId('link-status')).toHaveText('Live');
  const restarted = app.restart();
  await expect(page.getByTestId('link-status')).toHaveText('Reconnecting…');
  await restarted;
  // A change made right after the restart reaches the page (by the resync or by a push).
  await app.api('POST', '/api/providers', { name: 'Added while away', kind: 'local' });
  await expect(page.getByTestId('link-status')).toHaveText('Live', { timeout: 20_000 });
  await expect(page.getByRole('article', { name: 'Added while away' })).toBeVisible();
});
