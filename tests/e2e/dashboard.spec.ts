// The dashboard against the built headless shell and a fake upstream: every page, driven as a
// user would (labels and roles), with a screenshot of each page saved to the test's output.
import { expect, test } from './fixtures';
import { addConnection, clientKey, connectionCard, goTo, openDashboard, sendMessage } from './ui';

test('connections are added, tested, toggled and deleted through the dashboard', async ({ page, app, fake }, info) => {
  await openDashboard(page, app);
  await goTo(page, 'Connections');
  await expect(page.getByText('No connections yet')).toBeVisible();

  // A form error stays next to its field and nothing is saved.
  await page.getByRole('button', { name: 'Add connection' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Add connection' });
  await dialog.getByRole('combobox', { name: 'Kind', exact: true }).selectOption({ label: 'OpenAI-compatible endpoint' });
  await dialog.getByRole('button', { name: 'Add connection' }).click();
  await expect(dialog.getByText('give the connection a name')).toBeVisible();
  await expect(dialog.getByText('a short provider id is required for this kind')).toBeVisible();
  await expect(dialog.getByText('the endpoint URL is required for this kind')).toBeVisible();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect(await app.api<unknown[]>('GET', '/api/providers')).toHaveLength(0);

  await addConnection(page, { name: 'Alpha', baseUrl: fake.anthropicUrl, apiKey: 'key-alpha', priority: 0 });
  await addConnection(page, {
    kind: 'OpenAI-compatible endpoint',
    name: 'Beta',
    provider: 'fakeoai',
    baseUrl: fake.openaiUrl,
    apiKey: 'key-beta',
  });
  await expect(page.getByRole('dialog')).toHaveCount(0);

  // The Claude toggles belong to Claude subscription connections (tests/e2e/claude.spec.ts), not to API keys.
  const alpha = connectionCard(page, 'Alpha');
  await expect(alpha.getByTestId('connection-state')).toHaveText(/Healthy/);
  await expect(alpha.getByRole('switch', { name: 'Low-priority lane' })).toHaveCount(0);
  await expect(connectionCard(page, 'Beta').getByRole('switch', { name: 'Low-priority lane' })).toHaveCount(0);

  // Rate-limit protection goes through its own write path.
  await alpha.getByRole('radiogroup', { name: 'Rate-limit protection' }).getByRole('radio', { name: 'On', exact: true }).check();
  await expect
    .poll(async () => (await app.api<{ name: string; rateLimitProtection: boolean }[]>('GET', '/api/providers')).find((c) => c.name === 'Alpha')?.rateLimitProtection)
    .toBe(true);

  await alpha.getByRole('button', { name: 'Test Alpha' }).click();
  await expect(alpha.getByText('the upstream accepted the credentials')).toBeVisible();

  // Edit: per-model concurrency and max concurrent.
  await alpha.getByRole('button', { name: 'Edit Alpha' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit Alpha' });
  await edit.getByLabel('Max concurrent requests', { exact: true }).fill('0');
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await expect(edit.getByText('must be between 1 and 100,000')).toBeVisible();
  await edit.getByLabel('Max concurrent requests', { exact: true }).fill('2');
  await edit.getByRole('button', { name: 'Add model cap' }).click();
  await edit.getByLabel('Model 1', { exact: true }).fill('claude-e2e');
  await edit.getByLabel('Max at once for model 1').fill('1');
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await expect(edit).toBeHidden();
  await expect(alpha.getByText('max 2')).toBeVisible();
  await expect(alpha.getByText('claude-e2e ≤ 1')).toBeVisible();

  // An edit that touches neither cap leaves both where they are: a strict cap set through the API
  // (rateLimitOverrides.maxConcurrent) is not turned into max_concurrent, and nothing is dropped.
  type Stored = { id: string; name: string; priority: number; maxConcurrent: number | null; rateLimitOverrides: Record<string, unknown>; providerSpecificData: Record<string, unknown> };
  const alphaRow = async () => (await app.api<Stored[]>('GET', '/api/providers')).find((c) => c.name === 'Alpha')!;
  const overrides = { maxConcurrent: 1, modelConcurrency: { 'claude-e2e': 1 }, requestsPerMinute: 600 };
  await app.api('PATCH', `/api/providers/${(await alphaRow()).id}`, { maxConcurrent: null, rateLimitOverrides: overrides });
  await expect(alpha.getByText('strict cap 1')).toBeVisible();
  await alpha.getByRole('button', { name: 'Edit Alpha' }).click();
  const again = page.getByRole('dialog', { name: 'Edit Alpha' });
  await expect(again.getByLabel('Max concurrent requests', { exact: true })).toHaveValue('');
  await expect(again.getByLabel('Strict cap, all models', { exact: true })).toHaveValue('1');
  await again.getByRole('textbox', { name: 'Priority', exact: true }).fill('3');
  await again.getByRole('button', { name: 'Save changes' }).click();
  await expect(again).toBeHidden();
  await expect(alpha.getByText(/priority 3/)).toBeVisible();
  expect(await alphaRow()).toMatchObject({ priority: 3, maxConcurrent: null, rateLimitOverrides: overrides, providerSpecificData: {} });
  expect((await alphaRow()).rateLimitOverrides).toEqual(overrides);

  await connectionCard(page, 'Beta').getByRole('switch', { name: 'Enabled' }).uncheck();
  await expect(connectionCard(page, 'Beta').getByTestId('connection-state')).toHaveText(/Disabled/);
  await page.screenshot({ path: info.outputPath('connections.png'), fullPage: true });

  await connectionCard(page, 'Beta').getByRole('button', { name: 'Delete Beta' }).click();
  await page.getByRole('dialog', { name: 'Delete Beta?' }).getByRole('button', { name: 'Delete connection' }).click();
  await expect(connectionCard(page, 'Beta')).toHaveCount(0);
  expect((await app.api<{ name: string }[]>('GET', '/api/providers')).map((c) => c.name)).toEqual(['Alpha']);
});

test('agent setup, client keys, settings, breakers, request log and app pages', async ({ page, app, fake }, info) => {
  await openDashboard(page, app);

  // Connect your agent: the proxy URL and copy-paste setup with the client key.
  await expect(page.getByRole('heading', { level: 1, name: 'Connect your agent' })).toBeVisible();
  await expect(page.getByTestId('proxy-url')).toHaveText(app.proxyUrl);
  await page.getByRole('tab', { name: 'Claude Code' }).click();
  await expect(page.getByRole('tabpanel')).toContainText(`ANTHROPIC_BASE_URL="${app.proxyUrl}"`);
  await expect(page.getByRole('tabpanel')).toContainText('ANTHROPIC_AUTH_TOKEN=');
  const key = await clientKey(app);
  await page.getByRole('button', { name: 'Show', exact: true }).first().click();
  await expect(page.getByTestId('agent-key')).toHaveText(key);
  await expect(page.getByRole('tabpanel')).toContainText(`ANTHROPIC_AUTH_TOKEN="${key}"`);
  // Apply / Restore for the CLI agents: the file it would write is named; Restore waits for an Apply.
  await expect(page.getByTestId('agent-apply')).toContainText('.claude/settings.json');
  await expect(page.getByTestId('agent-apply').getByRole('button', { name: 'Restore' })).toBeDisabled();
  await page.getByRole('tab', { name: 'Codex CLI' }).click();
  await expect(page.getByRole('tabpanel')).toContainText(`base_url = "${app.proxyUrl}/v1"`);
  await expect(page.getByTestId('agent-apply')).toContainText('.codex/config.toml');
  await page.getByRole('tab', { name: 'opencode' }).click();
  await expect(page.getByRole('tabpanel')).toContainText('"@ai-sdk/openai-compatible"');
  await page.getByRole('tab', { name: 'Gemini CLI' }).click();
  await expect(page.getByRole('tabpanel')).toContainText(`GOOGLE_GEMINI_BASE_URL="${app.proxyUrl}"`);
  await expect(page.getByRole('tabpanel')).toContainText('"selectedType": "gemini-api-key"');
  await page.getByRole('tab', { name: 'aider' }).click();
  await expect(page.getByRole('tabpanel')).toContainText(`OPENAI_API_BASE="${app.proxyUrl}/v1"`);

  // Client keys: create (shown in full once), revoke after confirming.
  await page.getByLabel('New key name').fill('CI agent');
  await page.getByRole('button', { name: 'Create key' }).click();
  await expect(page.getByTestId('created-key')).toHaveText(/^sk-sy-/);
  const keysTable = page.getByRole('table', { name: 'Client keys' });
  await expect(keysTable.getByRole('row', { name: /CI agent/ })).toContainText('Active');
  await page.screenshot({ path: info.outputPath('agent.png'), fullPage: true });
  await keysTable.getByRole('button', { name: 'Revoke CI agent' }).click();
  await page.getByRole('dialog', { name: 'Revoke CI agent?' }).getByRole('button', { name: 'Revoke key' }).click();
  await expect(keysTable.getByRole('row', { name: /CI agent/ })).toContainText('Revoked');

  // A request through the proxy shows up in the request log, live, with its attempt.
  await goTo(page, 'Connections');
  await addConnection(page, { name: 'Alpha', baseUrl: fake.anthropicUrl, apiKey: 'key-alpha' });
  await goTo(page, 'Request log');
  await expect(page.getByText('No requests yet')).toBeVisible();
  expect(await sendMessage(app, key)).toBe(200);
  const row = page.getByTestId('log-row').first();
  await expect(row).toContainText('Alpha');
  await expect(row).toContainText('200');
  await row.getByRole('button', { name: /Details of the/ }).click();
  await expect(page.getByRole('table', { name: 'Attempts' })).toContainText('served');
  await page.screenshot({ path: info.outputPath('request-log.png'), fullPage: true });

  // Resilience settings: invalid input shows the error as it is typed and saves nothing; a saved value can be reset.
  await goTo(page, 'Resilience settings');
  await page.getByRole('button', { name: 'Cooldowns and lockouts' }).click();
  const field = page.getByLabel('First cooldown (API-key and local connections)', { exact: true });
  const saveButton = page.getByRole('button', { name: 'Save First cooldown (API-key and local connections)' });
  const before = await field.inputValue();
  await field.fill('soon');
  await expect(page.getByText('must be a number')).toBeVisible();
  await expect(saveButton).toBeDisabled();
  await field.fill('99999999999');
  await expect(page.getByText(/must be between/)).toBeVisible();
  await expect(saveButton).toBeDisabled();
  const saved = await app.api<{ settings: { key: string; source: string; value: unknown }[] }>('GET', '/api/settings');
  expect(saved.settings.find((s) => s.key === 'connectionCooldown.apikeyBaseMs')).toMatchObject({ source: 'default', value: Number(before) });
  await field.fill('4000');
  await saveButton.click();
  const rowEl = page.locator('[data-setting="connectionCooldown.apikeyBaseMs"]');
  await expect(rowEl.getByText('Saved', { exact: true }).first()).toBeVisible();
  await page.screenshot({ path: info.outputPath('settings.png'), fullPage: true });
  await page.getByRole('button', { name: 'Reset First cooldown (API-key and local connections)' }).click();
  await expect(rowEl.getByText('Default', { exact: true })).toBeVisible();
  await expect(field).toHaveValue(before);

  await goTo(page, 'Provider breakers');
  await expect(page.getByTestId('breaker-row').filter({ hasText: 'anthropic' })).toContainText('CLOSED');
  await expect(page.getByRole('heading', { name: 'How a breaker decides' })).toBeVisible();
  await page.screenshot({ path: info.outputPath('breakers.png'), fullPage: true });

  await goTo(page, 'Cooldown manager');
  await expect(page.getByText('Nothing is cooling down')).toBeVisible();
  await expect(page.getByLabel('Cool a connection whose stream stalls')).toBeVisible();
  await page.screenshot({ path: info.outputPath('cooldowns.png'), fullPage: true });

  // App & token: the data folder and the management token.
  await goTo(page, 'App & token');
  await expect(page.getByTestId('data-dir')).toHaveText(app.dataDir);
  await page.getByRole('button', { name: 'Show token' }).click();
  await expect(page.getByTestId('management-token')).toHaveText(app.token);
  await page.screenshot({ path: info.outputPath('app.png'), fullPage: true });
});
