// Settings (issue 22): the page is a list of sections (not every setting at once), a search
// narrows it to the matching settings, every value says where it comes from (a command-line
// option, an environment variable), a value set on the command line cannot be saved over, an
// out-of-range value is refused with the range before anything is sent (and no "Saved"), and
// no internal word reaches the page.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { startServe, type Headless } from './headless';
import { findJargon } from './jargon';
import { goTo, openDashboard } from './ui';

/** The text a user reads in the page's main area (laid out, as read), without revealed technical names. */
async function readableText(page: Page): Promise<string> {
  // A string, so the node typecheck (no DOM lib) does not read browser globals.
  return (await page.evaluate(`(() => {
    const main = document.querySelector('main');
    if (!main) return '';
    const hidden = [...main.querySelectorAll('[data-tech-name], [data-snippet]')];
    const before = hidden.map((el) => el.style.display);
    for (const el of hidden) el.style.display = 'none';
    const text = main.innerText;
    hidden.forEach((el, i) => (el.style.display = before[i]));
    return text;
  })()`)) as string;
}

const sections = (page: Page) => page.locator('section[data-section]');
const section = (page: Page, title: string) => page.getByRole('region', { name: title, exact: true });
const row = (page: Page, key: string) => page.locator(`[data-setting="${key}"]`);

test('the page is sectioned, search narrows it, and nothing internal reaches the page', async ({ page, app }, info) => {
  await openDashboard(page, app);
  await goTo(page, 'Resilience settings');

  // Eleven sections, each closed: no setting row is on the page until one is opened.
  await expect(sections(page)).toHaveCount(11);
  await expect(page.getByRole('navigation', { name: 'Setting sections' }).getByRole('link')).toHaveCount(11);
  await expect(page.locator('[data-setting]')).toHaveCount(0);
  for (const t of ['Failover and retries', 'Cooldowns and lockouts', 'Circuit breakers', 'Request queue and concurrency', 'Streams', 'Proxy and network']) {
    await expect(section(page, t)).toBeVisible();
  }
  await page.screenshot({ path: info.outputPath('settings-sections.png'), fullPage: true });

  // The index opens one section: only its rows appear.
  await page.getByRole('navigation', { name: 'Setting sections' }).getByRole('link', { name: /Cooldowns and lockouts/ }).click();
  const cooldowns = section(page, 'Cooldowns and lockouts');
  await expect(cooldowns.getByRole('button', { name: 'Cooldowns and lockouts' })).toHaveAttribute('aria-expanded', 'true');
  await expect(page.locator('[data-setting]')).toHaveCount(13);
  await expect(cooldowns.locator('[data-setting="modelLockout.enabled"]')).toContainText('a 429 without account-wide evidence always pauses just that model on that connection');
  await cooldowns.getByRole('button', { name: 'Cooldowns and lockouts' }).click();
  await expect(page.locator('[data-setting]')).toHaveCount(0);

  // Search: plain words narrow to the matching rows, across sections; a technical name still finds its row.
  const search = page.getByRole('searchbox', { name: 'Search settings' });
  await search.fill('lockout');
  await expect(page.getByRole('status').filter({ hasText: /settings? match/ })).toBeVisible();
  await expect(row(page, 'modelLockout.baseCooldownMs')).toBeVisible();
  await expect(row(page, 'proxy.port')).toHaveCount(0);
  const lockoutHits = await page.locator('[data-setting]').count();
  expect(lockoutHits).toBeGreaterThan(0);
  expect(lockoutHits).toBeLessThan(20);
  await search.fill('requestQueue.maxWaitMs');
  await expect(page.locator('[data-setting]')).toHaveCount(1);
  await expect(row(page, 'requestQueue.maxWaitMs')).toContainText('Matches its technical name');
  await search.fill('zebra crossing');
  await expect(page.getByText('No setting matches')).toBeVisible();
  await expect(sections(page)).toHaveCount(0);
  await page.getByRole('button', { name: 'Clear the search' }).click();
  await expect(sections(page)).toHaveCount(11);

  // Every section open: no requirement id, internal code or setting key in what a user reads.
  await page.getByRole('button', { name: 'Open all' }).click();
  await expect(page.locator('[data-setting]')).toHaveCount(91);
  expect(findJargon(await readableText(page))).toEqual([]);
  // The technical name is one click away.
  await row(page, 'requestQueue.maxWaitMs').getByRole('button', { name: 'Show the technical name' }).click();
  await expect(row(page, 'requestQueue.maxWaitMs').locator('[data-tech-name]').first()).toContainText('requestQueue.maxWaitMs');
});

test('a value given on the command line shows that source and cannot be saved over', async ({ page, app }, info) => {
  // The headless shell of the fixtures is started with --proxy-port (tests/e2e/headless.ts).
  await openDashboard(page, app);
  await page.goto(`${app.managementUrl}/#/settings/network`);
  const port = row(page, 'proxy.port');
  await expect(port.getByTestId('setting-source')).toContainText('Command line');
  await expect(port.getByTestId('setting-source')).toContainText('--proxy-port');
  const field = page.getByLabel('Proxy port', { exact: true });
  await expect(field).toHaveAttribute('readonly', '');
  await field.press('5');
  await expect(port.getByRole('alert')).toContainText('cannot be changed here');
  await expect(port.getByRole('button', { name: 'Save Proxy port' })).toHaveCount(0);
  await page.screenshot({ path: info.outputPath('settings-command-line.png'), fullPage: true });
  // The engine refuses it too, and nothing was saved.
  await expect(app.api('PATCH', '/api/settings', { 'proxy.port': 9999 })).rejects.toThrow(/409/);
  const view = await app.api<{ settings: { key: string; source: string; persisted: unknown }[] }>('GET', '/api/settings');
  expect(view.settings.find((s) => s.key === 'proxy.port')).toMatchObject({ source: 'cli', persisted: null });
  expect(findJargon(await readableText(page))).toEqual([]);
});

test('an out-of-range value shows the allowed range, is not sent, and never leaves a stale "Saved"', async ({ page, app }) => {
  await openDashboard(page, app);
  await page.goto(`${app.managementUrl}/#/settings/failover`);
  const r = row(page, 'proxy.maxAttempts');
  const field = page.getByLabel('Attempts per request', { exact: true });
  const save = r.getByRole('button', { name: 'Save Attempts per request' });

  await field.fill('6');
  await save.click();
  await expect(r.getByRole('status')).toHaveText('Saved');
  await expect(r.getByTestId('setting-source')).toContainText('Saved');

  // Typing again removes "Saved"; an out-of-range value is refused as it is typed, with the range.
  await field.fill('99');
  await expect(r.getByRole('status')).toHaveCount(0);
  await expect(r.getByRole('alert')).toHaveText('must be between 1 and 20');
  await expect(save).toBeDisabled();
  await field.press('Enter');
  await expect(field).toHaveValue('99');
  const view = await app.api<{ settings: { key: string; value: unknown; source: string }[] }>('GET', '/api/settings');
  expect(view.settings.find((s) => s.key === 'proxy.maxAttempts')).toMatchObject({ value: 6, source: 'persisted' });
  await expect(r.getByRole('status')).toHaveCount(0);

  // Back in range: the error goes, and the next save is the one "Saved" speaks for.
  await field.fill('5');
  await expect(r.getByRole('alert')).toHaveCount(0);
  await save.click();
  await expect(r.getByRole('status')).toHaveText('Saved');
  await expect(field).toHaveValue('5');
  await r.getByRole('button', { name: 'Reset Attempts per request' }).click();
  await expect(r.getByTestId('setting-source')).toContainText('Default');
  await expect(field).toHaveValue('4');
});

test.describe('a value from the environment', () => {
  let app: Headless;
  test.beforeEach(async () => {
    app = await startServe({ SWITCHYARD_SAME_TARGET_RETRIES: '3' });
  });
  test.afterEach(async () => {
    await app.stop();
  });

  test('names the variable, and a saved value wins over it', async ({ page }, info) => {
    await openDashboard(page, app);
    await page.goto(`${app.managementUrl}/#/settings/failover`);
    const r = row(page, 'sameTargetRetry.maxRetries');
    await expect(r.getByTestId('setting-source')).toContainText('Environment');
    await expect(r.getByTestId('setting-source')).toContainText('SWITCHYARD_SAME_TARGET_RETRIES');
    await expect(page.getByLabel('Retries on the same connection', { exact: true })).toHaveValue('3');
    expect(findJargon(await readableText(page))).toEqual([]);
    await page.screenshot({ path: info.outputPath('settings-environment.png'), fullPage: true });

    await page.getByLabel('Retries on the same connection', { exact: true }).fill('2');
    await r.getByRole('button', { name: 'Save Retries on the same connection' }).click();
    await expect(r.getByTestId('setting-source')).toContainText('wins over the environment variable');
    await r.getByRole('button', { name: 'Reset Retries on the same connection' }).click();
    await expect(r.getByTestId('setting-source')).toContainText('Environment');
    await expect(page.getByLabel('Retries on the same connection', { exact: true })).toHaveValue('3');
  });
});
