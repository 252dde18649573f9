// Acceptance for the Error rules page (issue 15): the live "test this error text" box runs the
// engine's real restatement and matcher; an operator rule added in the editor changes what the
// tester says and what a real 429 through the proxy does; an out-of-range custom duration is
// refused next to its field; the Cooldown manager's "Error cooldown rules" card shows the same rules.
import { expect, test } from './fixtures';
import { clientKey, goTo, openDashboard, sendMessage } from './ui';

const KEY = 'key-acme-e2e-000001';

test('the rule tester explains an error; a rule added in the UI changes the verdict and the cooldown', async ({ page, app, fake }, info) => {
  await app.api('PATCH', '/api/settings', { 'requestQueue.autoEnableApiKeyProviders': false });
  await app.api('POST', '/api/providers', { name: 'Acme', kind: 'anthropic-compatible', provider: 'acme', baseUrl: fake.anthropicUrl, secret: KEY });
  await openDashboard(page, app);
  await goTo(page, 'Error rules');

  // agentrouter's mis-stated quota: restated 403 → 429 and held against the connection.
  const tester = page.getByRole('region', { name: 'Test an error' });
  await tester.getByRole('combobox', { name: 'Provider' }).fill('agentrouter');
  await tester.getByRole('textbox', { name: 'Status' }).fill('403');
  await tester.getByRole('textbox', { name: 'Error body' }).fill('{"error":{"message":"用户额度不足"}}');
  const result = page.getByTestId('rule-test-result');
  await expect(result).toContainText('Built-in rule');
  await expect(result).toContainText('agentrouter-user-quota-exhausted');
  await expect(result).toContainText('403 → 429');
  await expect(result).toContainText('Retry-After 60 s');
  await expect(page.getByTestId('rule-test-effect')).toContainText('Cools the whole connection');
  await page.screenshot({ path: info.outputPath('tester-agentrouter.png'), fullPage: true });

  // The permanent one keeps its status and locks only the model.
  await tester.getByRole('textbox', { name: 'Error body' }).fill('无权访问模型');
  await expect(result).toContainText('agentrouter-model-access-denied');
  await expect(page.getByTestId('rule-test-effect')).toContainText('Locks this model on this connection for 30 min');

  // Acme before any rule: a plain 429 rests only the model.
  await tester.getByRole('combobox', { name: 'Provider' }).fill('acme');
  await tester.getByRole('textbox', { name: 'Status' }).fill('429');
  await tester.getByRole('textbox', { name: 'Error body' }).fill('{"error":{"message":"key spent for today"}}');
  await expect(result).toContainText('No rule');
  await expect(page.getByTestId('rule-test-effect')).toContainText('Rests only this model');

  // Add a rule: acme, text "key spent", custom 43,201 min is refused in place, 1 h is saved.
  const rules = page.getByRole('group', { name: 'Operator error rules' });
  await rules.getByRole('button', { name: 'Add rule' }).click();
  const rule = rules.getByRole('listitem', { name: 'Rule 1' });
  await rule.getByRole('combobox', { name: 'Provider' }).fill('acme');
  await rule.getByRole('textbox', { name: 'Error text contains' }).fill('KEY SPENT');
  await rule.getByRole('combobox', { name: 'Cooldown', exact: true }).selectOption('custom');
  await rule.getByRole('textbox', { name: 'Cooldown: custom minutes' }).fill('43201');
  await rules.getByRole('button', { name: 'Save rules' }).click();
  await expect(rule.getByRole('alert')).toContainText('between 1 and 43,200 minutes');
  expect((await app.api<{ settings: { key: string; value: unknown }[] }>('GET', '/api/settings')).settings.find((s) => s.key === 'providerErrorRules')!.value).toEqual([]);
  await rule.getByRole('combobox', { name: 'Cooldown', exact: true }).selectOption('1h');
  await rules.getByRole('button', { name: 'Save rules' }).click();
  await expect(rules.getByRole('status')).toHaveText('Saved');

  // The tester now names the rule and what it does.
  await expect(result).toContainText('Your rule');
  await expect(result).toContainText('operator[0]');
  await expect(page.getByTestId('rule-test-effect')).toHaveText('Cools the whole connection for exactly 1 h (never shortening a longer cooldown).');
  await page.screenshot({ path: info.outputPath('tester-operator-rule.png'), fullPage: true });

  // A real 429 through the proxy: the connection cools for an hour.
  fake.script({ key: KEY }, [{ status: 429, json: { error: { message: 'key spent for today', type: 'rate_limit_error' } } }]);
  expect(await sendMessage(app, await clientKey(app), 'acme-model')).toBe(429);
  await goTo(page, 'Cooldown manager');
  const row = page.getByTestId('cooling-row').filter({ hasText: 'Acme' });
  await expect(row).toContainText(/59m|1h/);

  // The same rule in the Cooldown manager's error rules card.
  const card = page.getByRole('region', { name: 'Error cooldown rules' });
  const cardRule = card.getByRole('group', { name: 'Operator error rules' }).getByRole('listitem', { name: 'Rule 1' });
  await expect(cardRule.getByRole('textbox', { name: 'Error text contains' })).toHaveValue('KEY SPENT');
  await expect(cardRule.getByRole('combobox', { name: 'Cooldown', exact: true })).toHaveValue('1h');
  await page.screenshot({ path: info.outputPath('cooldown-error-rules-card.png'), fullPage: true });
});
