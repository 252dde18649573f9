import { expect, test } from '@playwright/test';
import { startServe, type Headless } from './headless';

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
  // The token leaves the address bar once it is saved.
  expect(page.url()).not.toContain('token=');
  await page.screenshot({ path: info.outputPath('dashboard-health.png'), fullPage: true });
});

test('without a token the dashboard asks for one and the API refuses', async ({ page, request }) => {
  await page.goto(app.managementUrl);
  await expect(page.getByLabel('Management token')).toBeVisible();
  const res = await request.get(`${app.managementUrl}/api/monitoring/health`);
  expect(res.status()).toBe(401);
});
