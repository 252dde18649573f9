// Translation in the dashboard: a connection card says which agents it serves and how, the
// Responses switch of an OpenAI-compatible connection is saved, and the request log shows that
// an attempt was translated.
import { expect, test } from './fixtures';
import { addConnection, clientKey, connectionCard, goTo, openDashboard, sendMessage } from './ui';

test('connection cards name the agents they serve; translated attempts are marked in the request log', async ({ page, app, fake }, info) => {
  await openDashboard(page, app);
  await goTo(page, 'Connections');
  await addConnection(page, { name: 'Claude', baseUrl: fake.anthropicUrl, apiKey: 'key-claude' });
  await addConnection(page, { kind: 'OpenAI-compatible endpoint', name: 'Kimi', provider: 'kimi', baseUrl: fake.openaiUrl, apiKey: 'key-kimi' });

  await expect(connectionCard(page, 'Claude').getByTestId('connection-agents')).toHaveText(
    'Claude Code native · Codex CLI via translation (as anthropic/<model>) · Chat clients via translation (as anthropic/<model>) · Gemini CLI via translation (as anthropic/<model>)',
  );
  const kimi = connectionCard(page, 'Kimi');
  await expect(kimi.getByTestId('connection-agents')).toHaveText('Claude Code via translation (as kimi/<model>) · Codex CLI via Chat · Chat clients native · Gemini CLI via translation (as kimi/<model>)');

  // The Responses switch: off for an OpenAI-compatible endpoint; turning it on sends Codex there natively.
  await kimi.getByRole('button', { name: 'Edit Kimi' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit Kimi' });
  const responses = edit.getByRole('switch', { name: /Serves the Responses API/ });
  await expect(responses).not.toBeChecked();
  await responses.check();
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await expect(edit).toBeHidden();
  await expect(kimi.getByTestId('connection-agents')).toContainText('Codex CLI native');
  expect((await app.api<{ name: string; servesResponses: boolean }[]>('GET', '/api/providers')).find((c) => c.name === 'Kimi')?.servesResponses).toBe(true);
  await page.screenshot({ path: info.outputPath('connections-agents.png'), fullPage: true });

  // Claude Code asks for kimi/kimi-k2: served by the Chat connection through translation.
  const key = await clientKey(app);
  expect(await sendMessage(app, key, 'kimi/kimi-k2')).toBe(200);
  expect(fake.requests.at(-1)!.path).toBe('/v1/chat/completions');
  await goTo(page, 'Request log');
  const row = page.getByTestId('log-row').first();
  await expect(row).toContainText('Kimi');
  await row.getByRole('button', { name: /Details of the/ }).click();
  await expect(page.getByTestId('attempt-translated')).toHaveText('translated Anthropic Messages → Chat Completions');
  await page.screenshot({ path: info.outputPath('request-log-translated.png'), fullPage: true });
});
