// Setting up a connection without typing it all (issue 22): a provider preset fills the form, a
// connection test that lists models offers to add them, and the rate-limit protection control
// shows Automatic / On / Off with what the engine does now, and does what it shows.
import { expect, test } from './fixtures';
import { findJargon } from './jargon';
import { connectionCard, goTo, openDashboard } from './ui';

interface AdmissionRow {
  connectionId: string;
  protected: boolean;
  protectionMode: string;
}
interface ConnRow {
  id: string;
  name: string;
  provider: string;
  models: string[];
  rateLimitProtectionMode: string;
}

test('a preset fills the form, a test imports the listed models, and protection Off turns protection off', async ({ page, app, fake }, info) => {
  await openDashboard(page, app);
  await goTo(page, 'Connections');

  await page.getByRole('button', { name: 'Add connection' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Add connection' });
  await dialog.getByRole('combobox', { name: 'Start from a preset' }).selectOption({ label: 'DeepSeek' });

  // The form is filled from the preset, and the hint links to where a key is made.
  await expect(dialog.getByRole('combobox', { name: 'Kind', exact: true })).toHaveValue('openai-compatible');
  await expect(dialog.getByRole('textbox', { name: 'Name', exact: true })).toHaveValue('DeepSeek');
  await expect(dialog.getByRole('textbox', { name: 'Provider', exact: true })).toHaveValue('deepseek');
  await expect(dialog.getByRole('textbox', { name: 'Base URL', exact: true })).toHaveValue('https://api.deepseek.com/v1');
  await expect(dialog.getByRole('textbox', { name: 'Models', exact: true })).toHaveValue('deepseek-chat\ndeepseek-reasoner');
  await expect(dialog.getByRole('link', { name: 'Get a DeepSeek API key' })).toHaveAttribute('href', 'https://platform.deepseek.com/api_keys');
  await page.screenshot({ path: info.outputPath('preset-filled.png'), fullPage: true });

  // Point it at the fake upstream (never the internet) and save.
  await dialog.getByRole('textbox', { name: 'Base URL', exact: true }).fill(fake.openaiUrl);
  await dialog.getByRole('textbox', { name: 'API key', exact: true }).fill('sk-deepseek-e2e-0001');
  await dialog.getByRole('button', { name: 'Add connection' }).click();
  await expect(dialog).toBeHidden();
  const card = connectionCard(page, 'DeepSeek');
  await expect(card).toBeVisible();
  const [saved] = await app.api<ConnRow[]>('GET', '/api/providers');
  expect(saved).toMatchObject({ name: 'DeepSeek', provider: 'deepseek', models: ['deepseek-chat', 'deepseek-reasoner'] });

  // The test lists the fake's two models; both are offered, one is unticked, the other added.
  await card.getByRole('button', { name: 'Test DeepSeek' }).click();
  await expect(card.getByText('2 models available')).toBeVisible();
  await card.getByRole('button', { name: 'Add models to DeepSeek' }).click();
  const picker = card.getByRole('group', { name: 'Models to add to DeepSeek' });
  await expect(picker.getByRole('checkbox')).toHaveCount(2);
  await picker.getByRole('checkbox', { name: 'fake-model-b' }).uncheck();
  await picker.getByRole('button', { name: 'Add 1 model' }).click();
  await expect
    .poll(async () => (await app.api<ConnRow[]>('GET', '/api/providers'))[0]?.models)
    .toEqual(['deepseek-chat', 'deepseek-reasoner', 'fake-model-a']);
  // The one left out is still offered; adding it too leaves nothing to offer.
  await card.getByRole('button', { name: 'Add models to DeepSeek' }).click();
  await expect(picker.getByRole('checkbox')).toHaveCount(1);
  await picker.getByRole('button', { name: 'Add 1 model' }).click();
  await expect(card.getByText('all listed on this connection')).toBeVisible();
  expect((await app.api<ConnRow[]>('GET', '/api/providers'))[0]?.models).toEqual(['deepseek-chat', 'deepseek-reasoner', 'fake-model-a', 'fake-model-b']);

  // Protection: three choices, Automatic to start with, protected now because it uses an API key.
  const protection = card.getByRole('radiogroup', { name: 'Rate-limit protection' });
  for (const name of ['Automatic', 'On', 'Off']) await expect(protection.getByRole('radio', { name, exact: true })).toBeVisible();
  await expect(protection.getByRole('radio', { name: 'Automatic', exact: true })).toBeChecked();
  await expect(card.getByTestId('protection-effective')).toHaveText(/Protected now: on automatically/);
  const admission = async () => (await app.api<AdmissionRow[]>('GET', '/api/rate-limits')).find((r) => r.connectionId === saved!.id);
  expect(await admission()).toMatchObject({ protected: true, protectionMode: 'auto' });

  // Off: the engine reports no protection, and the card says so.
  await protection.getByRole('radio', { name: 'Off', exact: true }).check();
  await expect.poll(async () => (await admission())?.protected).toBe(false);
  expect(await admission()).toMatchObject({ protectionMode: 'off' });
  await expect(protection.getByRole('radio', { name: 'Off', exact: true })).toBeChecked();
  await expect(card.getByTestId('protection-effective')).toHaveText('Not protected now: switched off');

  // It survives a reload, and the edit form shows the same choice.
  await page.reload();
  await expect(connectionCard(page, 'DeepSeek').getByRole('radio', { name: 'Off', exact: true })).toBeChecked();
  await connectionCard(page, 'DeepSeek').getByRole('button', { name: 'Edit DeepSeek' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit DeepSeek' });
  await expect(edit.getByRole('radio', { name: 'Off', exact: true })).toBeChecked();
  // Back to Automatic from the form: protected again.
  await edit.getByRole('radio', { name: 'Automatic', exact: true }).check();
  await edit.getByRole('button', { name: 'Save changes' }).click();
  await expect(edit).toBeHidden();
  await expect.poll(async () => (await admission())?.protected).toBe(true);
  expect((await app.api<ConnRow[]>('GET', '/api/providers'))[0]?.rateLimitProtectionMode).toBe('auto');
  await expect(connectionCard(page, 'DeepSeek').getByTestId('protection-effective')).toHaveText(/Protected now: on automatically/);

  expect(findJargon(await page.locator('main').innerText())).toEqual([]);
  await page.screenshot({ path: info.outputPath('connections-protection.png'), fullPage: true });
});

test('the Google AI Studio preset adds a native Gemini connection that tests, lists its models and says whom it serves', async ({ page, app, fake }, info) => {
  await openDashboard(page, app);
  await goTo(page, 'Connections');

  await page.getByRole('button', { name: 'Add connection' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Add connection' });
  await dialog.getByRole('combobox', { name: 'Start from a preset' }).selectOption({ label: 'Google AI Studio (Gemini)' });

  // Google's own API: the kind, its provider, its address and well-known models; no OpenAI-only switch.
  await expect(dialog.getByRole('combobox', { name: 'Kind', exact: true })).toHaveValue('gemini');
  await expect(dialog.getByText('Speaks the Gemini protocol.')).toBeVisible();
  await expect(dialog.getByRole('textbox', { name: 'Provider', exact: true })).toHaveValue('gemini');
  await expect(dialog.getByRole('textbox', { name: 'Base URL', exact: true })).toHaveValue('https://generativelanguage.googleapis.com');
  await expect(dialog.getByRole('textbox', { name: 'Models', exact: true })).toHaveValue('gemini-2.5-pro\ngemini-2.5-flash\ngemini-2.5-flash-lite');
  await expect(dialog.getByRole('link', { name: 'Get a Google AI Studio (Gemini) API key' })).toHaveAttribute('href', 'https://aistudio.google.com/apikey');
  await expect(dialog.getByRole('switch', { name: /Serves the Responses API/ })).toHaveCount(0);
  expect(findJargon(await dialog.innerText())).toEqual([]);

  // Google's OpenAI-compatible address is refused for this kind, next to the base URL; the fake's address is taken.
  await dialog.getByRole('textbox', { name: 'API key', exact: true }).fill('AIzaSy-e2e-gemini-0001');
  await dialog.getByRole('textbox', { name: 'Base URL', exact: true }).fill('https://generativelanguage.googleapis.com/v1beta/openai');
  await dialog.getByRole('button', { name: 'Add connection' }).click();
  await expect(dialog.getByText(/Google's OpenAI-compatible address/)).toBeVisible();
  await dialog.getByRole('textbox', { name: 'Base URL', exact: true }).fill(fake.geminiUrl);
  await dialog.getByRole('button', { name: 'Add connection' }).click();
  await expect(dialog).toBeHidden();

  const name = 'Google AI Studio (Gemini)';
  const card = connectionCard(page, name);
  await expect(card).toBeVisible();
  await expect(card.getByText('Google AI Studio API key (Gemini)')).toBeVisible();
  await expect(card.getByTestId('connection-agents')).toHaveText(
    'Claude Code via translation (its listed models or gemini/<model>) · Codex CLI via translation (its listed models or gemini/<model>) · ' +
      'Chat clients via translation (its listed models or gemini/<model>) · Gemini CLI native',
  );
  const [saved] = await app.api<(ConnRow & { kind: string; baseUrl: string })[]>('GET', '/api/providers');
  expect(saved).toMatchObject({ kind: 'gemini', provider: 'gemini', baseUrl: fake.geminiUrl, models: ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite'] });

  // The test asks Google's model list with the key in Google's header, and offers what it found.
  await card.getByRole('button', { name: `Test ${name}` }).click();
  await expect(card.getByText('2 models available')).toBeVisible();
  const asked = fake.requestsFor({ path: '/v1beta/models' });
  expect(asked).toHaveLength(1);
  expect(asked[0]!.headers['x-goog-api-key']).toBe('AIzaSy-e2e-gemini-0001');
  await card.getByRole('button', { name: `Add models to ${name}` }).click();
  const picker = card.getByRole('group', { name: `Models to add to ${name}` });
  await expect(picker.getByRole('checkbox', { name: 'fake-model-a' })).toBeVisible();
  await expect(picker.getByRole('checkbox', { name: 'fake-model-b' })).toBeVisible();

  expect(findJargon(await page.locator('main').innerText())).toEqual([]);
  await page.screenshot({ path: info.outputPath('connections-gemini.png'), fullPage: true });
});
