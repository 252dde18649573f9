// The Prices page in Chromium against the built headless shell: a price entered in the dashboard
// prices the next request in the request log; a negative price is refused with a message and
// nothing is sent; and what the page says passes the jargon check.
import { expect, test } from './fixtures';
import { findJargon } from './jargon';
import { clientKey, goTo, openDashboard, sendMessage } from './ui';

test('a price edited in the dashboard prices the next request; invalid input is refused with a message', async ({ page, app, fake }) => {
  await app.api('POST', '/api/providers', { name: 'Claude', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-prices-xxxxxxxx' });
  const key = await clientKey(app);
  // The fake answers with 12 input and 7 output tokens; "claude-e2e" has no built-in price.
  expect(await sendMessage(app, key)).toBe(200);

  await openDashboard(page, app);
  await goTo(page, 'Prices');
  await expect(page.getByTestId('price-row').filter({ hasText: 'claude-sonnet-4-5' }).first()).toBeVisible();
  expect(findJargon(await page.locator('main').innerText())).toEqual([]);

  await page.getByTestId('price-add').click();
  const form = page.getByTestId('price-form');
  await form.getByRole('textbox', { name: /^Model/ }).fill('claude-e2e');
  await form.getByRole('textbox', { name: /^Input/ }).fill('-5');
  await form.getByRole('textbox', { name: /^Output/ }).fill('2000');
  await form.getByRole('button', { name: 'Save price' }).click();
  await expect(page.getByTestId('price-error')).toHaveText('The input price cannot be negative.');
  expect((await app.api<{ entries: { model: string }[] }>('GET', '/api/prices')).entries.some((e) => e.model === 'claude-e2e')).toBe(false);

  await form.getByRole('textbox', { name: /^Input/ }).fill('1000');
  await form.getByRole('button', { name: 'Save price' }).click();
  await expect(form).toBeHidden();
  const row = page.locator('[data-testid="price-row"][data-model="claude-e2e"]');
  await expect(row).toContainText('$1000');
  await expect(row).toContainText('edited');

  expect(await sendMessage(app, key)).toBe(200);
  await goTo(page, 'Request log');
  const tokens = page.getByTestId('log-tokens');
  await expect(tokens).toHaveCount(2);
  // Newest first: 12 × $1000 + 7 × $2000 per million = $0.026; the request before the price has no cost.
  await expect(tokens.first()).toContainText('12 in · 7 out · $0.0260');
  await expect(tokens.nth(1)).not.toContainText('$');

  // Reset: the edited price goes, and with it the model's price.
  await goTo(page, 'Prices');
  await page.getByRole('button', { name: 'Reset the price of claude-e2e' }).click();
  await expect(row).toHaveCount(0);
});
