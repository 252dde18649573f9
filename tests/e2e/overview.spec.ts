// Acceptance for issue 23's Overview page on the built headless shell: it is the landing page once
// a connection exists (agent setup before); with no requests every chart shows its empty text;
// after requests sent with the real Anthropic SDK through the proxy to the fake upstream, the
// figures count them and the charts draw (uPlot puts a <canvas> inside `.uplot`); the exports
// download the period asked for, as CSV and as JSON (Playwright's download event).
import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';
import type { Headless } from './headless';
import { findJargon } from './jargon';
import { clientKey, openDashboard, sendMessage } from './ui';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function addAlpha(app: Headless, baseUrl: string): Promise<void> {
  await app.api('PATCH', '/api/settings', { 'requestQueue.autoEnableApiKeyProviders': false });
  await app.api('POST', '/api/providers', { name: 'Alpha', kind: 'anthropic', baseUrl, secret: 'key-alpha-overview-23' });
}

/** The export asked for the period: its length (give or take one bucket, if the engine aligns to buckets), ending about now. */
function expectSpan(url: URL, span: number, bucket: number): void {
  const from = Number(url.searchParams.get('from'));
  const to = Number(url.searchParams.get('to'));
  expect(to - from).toBeGreaterThanOrEqual(span - bucket);
  expect(to - from).toBeLessThanOrEqual(span + bucket);
  expect(Math.abs(Date.now() - to)).toBeLessThan(10 * 60_000);
}

const overviewHeading = (page: Page) => page.getByRole('heading', { level: 1, name: 'Overview', exact: true });
const chart = (page: Page, id: 'requests' | 'latency' | 'models' | 'timeline') => page.getByTestId(`chart-${id}`);

test('agent setup is the landing page until a connection exists, then the Overview', async ({ page, app, fake }) => {
  await openDashboard(page, app);
  await expect(page.getByRole('heading', { level: 1, name: 'Connect your agent' })).toBeVisible();
  await expect(page).toHaveURL(/#\/agent$/);

  await addAlpha(app, fake.anthropicUrl);
  await openDashboard(page, app);
  await expect(overviewHeading(page)).toBeVisible();
  await expect(page).toHaveURL(/#\/overview$/);
  // First in the sidebar.
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link').first()).toHaveText('Overview');
});

test('with no requests the charts show their empty text and the page points to agent setup', async ({ page, app, fake }, info) => {
  await addAlpha(app, fake.anthropicUrl);
  await openDashboard(page, app);
  await expect(overviewHeading(page)).toBeVisible();
  await expect(page.getByTestId('figure-requests')).toContainText('0');
  for (const id of ['requests', 'latency', 'models', 'timeline'] as const) {
    await expect(chart(page, id).getByTestId('chart-empty')).toBeVisible();
    await expect(chart(page, id).locator('.uplot')).toHaveCount(0);
  }
  await expect(chart(page, 'requests')).toHaveAttribute('aria-label', /Requests and errors over time/);
  await expect(page.getByRole('link', { name: 'Connect your agent' }).last()).toHaveAttribute('href', '#/agent');
  const words = findJargon(await page.locator('main').innerText());
  expect(words).toEqual([]);
  await page.screenshot({ path: info.outputPath('overview-empty.png'), fullPage: true });
});

test('after requests through the proxy the figures count them and the charts draw', async ({ page, app, fake }, info) => {
  await addAlpha(app, fake.anthropicUrl);
  const key = await clientKey(app);
  for (let i = 0; i < 3; i++) expect(await sendMessage(app, key)).toBe(200);

  await openDashboard(page, app);
  await expect(overviewHeading(page)).toBeVisible();
  await expect(page.getByTestId('figure-requests')).toContainText('3');
  await expect(page.getByTestId('figure-success')).toContainText('100%');
  for (const id of ['requests', 'latency', 'models'] as const) {
    await expect(chart(page, id).locator('.uplot canvas')).toHaveCount(1);
    await expect(chart(page, id).getByTestId('chart-empty')).toHaveCount(0);
  }
  // The model's row in the breakdown.
  await page.getByRole('tab', { name: 'Model' }).click();
  await expect(page.getByRole('table', { name: 'Usage by model' }).getByTestId('breakdown-row')).toHaveCount(1);

  // Live: one more request moves the figure without a reload.
  expect(await sendMessage(app, key)).toBe(200);
  await expect(page.getByTestId('figure-requests')).toContainText('4');
  await page.screenshot({ path: info.outputPath('overview-data.png'), fullPage: true });
});

test('export downloads usage and the request log for the period asked for', async ({ page, app, fake }) => {
  await addAlpha(app, fake.anthropicUrl);
  const key = await clientKey(app);
  expect(await sendMessage(app, key)).toBe(200);
  await openDashboard(page, app);
  await expect(overviewHeading(page)).toBeVisible();

  // The last hour, as CSV.
  await page.getByRole('radio', { name: 'Last hour' }).click();
  await expect(page.getByRole('radio', { name: 'Last hour' })).toHaveAttribute('aria-checked', 'true');
  await expect(page.getByTestId('figure-requests')).toContainText('1');
  const asked = page.waitForRequest((r) => r.url().includes('/api/export/usage'));
  const csv = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export usage' }).click();
  const usageUrl = new URL((await asked).url());
  expect(usageUrl.searchParams.get('format')).toBe('csv');
  expectSpan(usageUrl, HOUR, 60_000);
  const csvFile = await csv;
  expect(csvFile.suggestedFilename()).toMatch(/\.csv$/);
  const csvText = await readFile((await csvFile.path())!, 'utf8');
  expect(csvText.split('\n').filter((l) => l.trim()).length).toBeGreaterThan(1);

  // The last day's request log, as JSON.
  await page.getByRole('radio', { name: 'Last day' }).click();
  await expect(page.getByRole('radio', { name: 'Last day' })).toHaveAttribute('aria-checked', 'true');
  await page.getByRole('combobox', { name: 'Export format' }).selectOption('json');
  const askedLog = page.waitForRequest((r) => r.url().includes('/api/export/logs'));
  const json = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export request log' }).click();
  const logUrl = new URL((await askedLog).url());
  expect(logUrl.searchParams.get('format')).toBe('json');
  expectSpan(logUrl, DAY, 15 * 60_000);
  const jsonFile = await json;
  expect(jsonFile.suggestedFilename()).toMatch(/\.json$/);
  const parsed: unknown = JSON.parse(await readFile((await jsonFile.path())!, 'utf8'));
  expect(JSON.stringify(parsed)).toContain('claude-e2e');
  await expect(page.getByTestId('export-error')).toHaveCount(0);
});
