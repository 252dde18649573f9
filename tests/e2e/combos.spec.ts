// Acceptance for combos in the dashboard (issue 10): create a combo of two models on two providers
// in the UI, reorder its targets by dragging, send requests through the proxy, and see on the
// Combos page and in the request log which target served, with live eligibility per target.
import { expect, test } from './fixtures';
import { clientKey, goTo, openDashboard, sendMessage } from './ui';

const KEY_A = 'key-alpha-e2e-0001';
const KEY_B = 'key-beta-e2e-00002';

test('a combo created in the UI, reordered by drag, serves from its first target and fails over to the next', async ({ page, app, fake }, info) => {
  await app.api('PATCH', '/api/settings', { 'requestQueue.autoEnableApiKeyProviders': false });
  for (const [name, provider, secret, models] of [
    ['Alpha', 'alpha', KEY_A, ['model-x']],
    ['Beta', 'beta', KEY_B, ['model-y']],
  ] as const) {
    await app.api('POST', '/api/providers', { name, kind: 'anthropic-compatible', provider, baseUrl: fake.anthropicUrl, secret, models, passthroughModels: false });
  }
  await openDashboard(page, app);
  await goTo(page, 'Combos');

  // Create: alpha/model-x, then beta/model-y.
  await page.getByRole('button', { name: 'New combo' }).click();
  const dialog = page.getByRole('dialog', { name: 'New combo' });
  await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill('pool');
  await expect(dialog.getByText('Always tries the targets in the order listed')).toBeVisible();
  const first = dialog.getByRole('listitem', { name: 'Target 1' });
  await first.getByRole('combobox', { name: 'Provider' }).selectOption('alpha');
  await first.getByRole('combobox', { name: 'Model' }).fill('model-x');
  await dialog.getByRole('button', { name: 'Add target' }).click();
  const second = dialog.getByRole('listitem', { name: 'Target 2' });
  await second.getByRole('combobox', { name: 'Provider' }).selectOption('beta');
  await second.getByRole('combobox', { name: 'Model' }).fill('model-y');
  await second.getByRole('textbox', { name: 'Weight' }).fill('3');
  await page.screenshot({ path: info.outputPath('combo-new.png') });
  await dialog.getByRole('button', { name: 'Create combo' }).click();
  await expect(dialog).toBeHidden();

  const card = page.getByRole('article', { name: 'pool' });
  await expect(card.getByTestId('combo-target')).toHaveCount(2);
  await expect(card.getByTestId('combo-target').nth(0)).toContainText('alpha/model-x');
  await expect(card.getByTestId('combo-target').nth(0).getByTestId('target-state')).toHaveText(/Ready/);

  // Edit: drag beta above alpha.
  await card.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit pool' });
  await edit.getByRole('listitem', { name: 'Target 2' }).dragTo(edit.getByRole('listitem', { name: 'Target 1' }));
  await expect(edit.getByRole('listitem', { name: 'Target 1' }).getByRole('combobox', { name: 'Provider' })).toHaveValue('beta');
  await edit.getByRole('combobox', { name: 'Strategy' }).selectOption('weighted');
  await expect(edit.getByText('in proportion to its weight')).toBeVisible();
  await edit.getByRole('combobox', { name: 'Strategy' }).selectOption('priority');
  await edit.getByRole('button', { name: 'Save combo' }).click();
  await expect(edit).toBeHidden();
  await expect(card.getByTestId('combo-target').nth(0)).toContainText('beta/model-y');
  await page.screenshot({ path: info.outputPath('combo-reordered.png'), fullPage: true });

  // A request for the combo is served by its first target, Beta.
  const key = await clientKey(app);
  expect(await sendMessage(app, key, 'pool')).toBe(200);
  expect(fake.requestsFor({ key: KEY_B }).map((r) => r.model)).toEqual(['model-y']);
  await expect(card.getByTestId('combo-last-served')).toContainText('served by Beta with model-y');

  // Beta rate-limits model-y for a minute (a plain 429: that model on that key): the next request
  // fails over to Alpha, and the card shows Beta's target locked.
  fake.script({ key: KEY_B }, [{ status: 429, headers: { 'retry-after': '60' }, json: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } }]);
  expect(await sendMessage(app, key, 'pool')).toBe(200);
  await expect(card.getByTestId('combo-last-served')).toContainText('served by Alpha with model-x');
  await expect(card.getByTestId('combo-target').nth(0).getByTestId('target-state')).toHaveText(/Model locked/);
  await expect(card.getByTestId('combo-target').nth(1).getByTestId('target-state')).toHaveText(/Ready/);

  // Test sends one request through the proxy and says who served it.
  await card.getByRole('button', { name: 'Test' }).click();
  await expect(card.getByTestId('combo-test-result')).toContainText('served by Alpha with model-x');
  await page.screenshot({ path: info.outputPath('combo-failover.png'), fullPage: true });

  // The request log shows the combo, the order and each target's outcome.
  await goTo(page, 'Request log');
  const row = page.getByTestId('log-row').first();
  await expect(row).toContainText('via combo pool');
  await row.getByRole('button', { name: /Details of the/ }).click();
  const order = page.getByRole('table', { name: 'Combo order' });
  await expect(order.getByRole('row').nth(1)).toContainText('beta/model-y');
  await expect(order.getByRole('row').nth(1)).toContainText(/skipped: model locked|failed/);
  await expect(order.getByRole('row').nth(2)).toContainText('alpha/model-x');
  await expect(order.getByRole('row').nth(2)).toContainText('served');
  await page.screenshot({ path: info.outputPath('combo-request-log.png'), fullPage: true });

  // The agent page offers the combo as the model to use.
  await goTo(page, 'Connect your agent');
  await page.getByRole('combobox', { name: 'Model for the snippets' }).selectOption({ label: 'Combo pool' });
  await expect(page.getByText('export ANTHROPIC_MODEL="pool"')).toBeVisible();
});

test('a model mapping added in the UI routes Claude model ids to the combo', async ({ page, app, fake }) => {
  await app.api('POST', '/api/providers', { name: 'Alpha', kind: 'anthropic-compatible', provider: 'alpha', baseUrl: fake.anthropicUrl, secret: KEY_A, models: ['model-x'] });
  await app.api('POST', '/api/combos', { name: 'claude-pool', targets: [{ provider: 'alpha', model: 'model-x' }] });
  await openDashboard(page, app);
  await goTo(page, 'Combos');
  await page.getByRole('textbox', { name: 'Pattern' }).fill('claude-*');
  await page.getByRole('button', { name: 'Add mapping' }).click();
  await expect(page.getByRole('table', { name: 'Model mappings' })).toContainText('claude-*');
  const key = await clientKey(app);
  expect(await sendMessage(app, key, 'claude-opus-4-1')).toBe(200);
  expect(fake.requestsFor({ key: KEY_A }).map((r) => r.model)).toEqual(['model-x']);
  await expect(page.getByRole('article', { name: 'claude-pool' }).getByTestId('combo-last-served')).toContainText('served by Alpha');
});
