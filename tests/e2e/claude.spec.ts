// Acceptance for Claude subscription accounts (issue 13) in Chromium against the built headless
// shell: "Sign in with Claude" end to end (the fake authorize page redirects to the engine's
// loopback callback and the account appears healthy, then serves with its usage on the card),
// "Import from Claude Code" from a credentials file, and a bad file or a bad code giving a clear
// error with nothing written. The OAuth endpoints are settings pointed at a fake on 127.0.0.1.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base, expect, type Page } from '@playwright/test';
import { FakeClaudeAuth } from '../support/fakeClaudeAuth';
import { FakeUpstream } from '../support/fakeUpstream';
import { startServe, type Headless } from './headless';
import { clientKey, connectionCard, goTo, openDashboard, sendMessage } from './ui';

interface Fixtures {
  fake: FakeUpstream;
  auth: FakeClaudeAuth;
  claudeDir: string;
  app: Headless;
}

const test = base.extend<Fixtures>({
  // eslint-disable-next-line no-empty-pattern
  fake: async ({}, use) => {
    const fake = await FakeUpstream.start();
    await use(fake);
    await fake.close();
  },
  // eslint-disable-next-line no-empty-pattern
  auth: async ({}, use) => {
    const auth = await new FakeClaudeAuth().start();
    await use(auth);
    await auth.close();
  },
  // eslint-disable-next-line no-empty-pattern
  claudeDir: async ({}, use) => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-e2e-claude-'));
    await use(dir);
    rmSync(dir, { recursive: true, force: true });
  },
  app: async ({ auth, claudeDir }, use) => {
    // "Import from Claude Code" reads $CLAUDE_CONFIG_DIR/.credentials.json.
    const app = await startServe({ CLAUDE_CONFIG_DIR: claudeDir });
    await app.api('PATCH', '/api/settings', {
      'claude.authorizeUrl': auth.authorizeUrl,
      'claude.tokenUrl': auth.tokenUrl,
      'claude.pasteRedirectUri': auth.pasteRedirectUri,
      'claude.apiBaseUrl': auth.apiBase,
    });
    await use(app);
    await app.stop();
  },
});

async function openClaudeDialog(page: Page, fake: FakeUpstream, name: string) {
  await page.getByRole('button', { name: 'Add connection' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'Add connection' });
  await dialog.getByRole('combobox', { name: 'Kind', exact: true }).selectOption({ label: 'Claude subscription' });
  await dialog.getByRole('textbox', { name: 'Name', exact: true }).fill(name);
  await dialog.getByRole('textbox', { name: 'Base URL', exact: true }).fill(fake.anthropicUrl);
  await expect(dialog.getByTestId('claude-terms')).toContainText("own terms of use apply");
  return dialog;
}

const connections = (app: Headless) => app.api<{ id: string; name: string; kind: string; providerSpecificData: Record<string, unknown> }[]>('GET', '/api/providers');

test('Sign in with Claude: the authorize page redirects to the loopback callback, the account appears healthy and serves', async ({ page, app, fake, auth }, info) => {
  // The fake Anthropic API answers with the account's usage windows.
  const reset = Math.floor(Date.now() / 1000) + 2 * 3600;
  fake.script({ path: '/v1/messages' }, [
    (req) =>
      req.key && auth.isValidAccess(req.key)
        ? {
            headers: {
              'anthropic-ratelimit-unified-status': 'allowed',
              'anthropic-ratelimit-unified-5h-utilization': '0.42',
              'anthropic-ratelimit-unified-5h-reset': String(reset),
              'anthropic-ratelimit-unified-7d-utilization': '0.1',
              'anthropic-ratelimit-unified-7d-reset': String(reset + 3 * 86400),
            },
            json: { id: 'm', type: 'message', role: 'assistant', model: 'claude-e2e', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } },
          }
        : { status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'Invalid bearer token' } } },
  ]);
  await openDashboard(page, app);
  await goTo(page, 'Connections');
  const dialog = await openClaudeDialog(page, fake, 'Work Max');
  await expect(dialog.getByRole('tab', { name: 'Sign in with Claude' })).toHaveAttribute('aria-selected', 'true');
  // Options set in the dialog are saved onto the account the sign-in makes.
  await dialog.getByRole('switch', { name: 'Automatic session-limit reset' }).check();
  await page.screenshot({ path: info.outputPath('claude-dialog.png'), fullPage: true });

  const popup = page.context().waitForEvent('page');
  await dialog.getByRole('button', { name: 'Sign in with Claude' }).click();
  const browser = await popup;
  await expect(browser.getByRole('heading', { name: 'Signed in' })).toBeVisible();
  expect(auth.codeExchanges).toBe(1);
  expect(auth.authorizeCalls[0]!.query).toMatchObject({ code_challenge_method: 'S256', response_type: 'code', client_id: auth.clientId });
  await browser.close();

  await expect(dialog).toBeHidden();
  const card = connectionCard(page, 'Work Max');
  await expect(card.getByTestId('connection-state')).toHaveText(/Healthy/);
  await expect(card.getByTestId('claude-token')).toContainText(/expires in/);
  await expect.poll(async () => (await connections(app))[0]!.providerSpecificData.autoLimitReset).toBe(true);
  await expect(card.getByRole('switch', { name: 'Auto limit reset' })).toBeChecked();
  await expect(card.getByRole('switch', { name: 'Low-priority lane' })).toBeVisible();
  await expect(card.getByText(/Saved key|\{/)).toHaveCount(0);

  // It serves, and the usage of the answer arrives on the card by push.
  expect(await sendMessage(app, await clientKey(app))).toBe(200);
  await expect(card.getByRole('meter', { name: '5-hour usage' })).toHaveAttribute('aria-valuenow', '42');
  await expect(card.getByRole('meter', { name: '7-day usage' })).toHaveAttribute('aria-valuenow', '10');
  await expect(card.getByText(/resets in 1h 5\dm|resets in 2h 00m/)).toBeVisible();

  // The toggles act: stored in providerSpecificData.
  await card.getByRole('switch', { name: 'Low-priority lane' }).check();
  await expect.poll(async () => (await connections(app))[0]!.providerSpecificData.lowPriorityMode).toBe(true);
  await expect(card.getByTestId('claude-lane')).toContainText('ready, used at the 5-hour limit');
  await page.screenshot({ path: info.outputPath('claude-signed-in.png'), fullPage: true });
});

test('a wrong pasted code gives a clear error and writes nothing; the right one finishes the sign-in', async ({ page, app, fake, auth }) => {
  await openDashboard(page, app);
  await goTo(page, 'Connections');
  const dialog = await openClaudeDialog(page, fake, 'Pasted');
  const popup = page.context().waitForEvent('page');
  await dialog.getByRole('button', { name: 'Browser on another device? Use a code instead' }).click();
  const browser = await popup;
  const shown = (await browser.locator('#paste').textContent())!;
  await browser.close();

  const codeInput = dialog.getByRole('textbox', { name: 'Code from the sign-in page' });
  await codeInput.fill(`not-the-code#${shown.split('#')[1]}`);
  await dialog.getByRole('button', { name: 'Finish sign-in' }).click();
  await expect(dialog.getByRole('alert')).toContainText('Claude refused the sign-in code');
  expect(await connections(app)).toHaveLength(0);

  await codeInput.fill(shown);
  await dialog.getByRole('button', { name: 'Finish sign-in' }).click();
  await expect(dialog).toBeHidden();
  await expect(connectionCard(page, 'Pasted').getByTestId('connection-state')).toHaveText(/Healthy/);
  expect(auth.codeExchanges).toBe(2);
});

test('Import from Claude Code: a bad file is a clear error and writes nothing; a good file adds the account', async ({ page, app, fake, auth, claudeDir }) => {
  await openDashboard(page, app);
  await goTo(page, 'Connections');
  const dialog = await openClaudeDialog(page, fake, 'From Claude Code');
  await dialog.getByRole('tab', { name: 'Import from Claude Code' }).click();

  await dialog.getByRole('button', { name: 'Import from Claude Code' }).click();
  await expect(dialog.getByRole('alert')).toContainText('no Claude Code credentials at');

  writeFileSync(join(claudeDir, '.credentials.json'), '{"claudeAiOauth": {"accessToken": ');
  await dialog.getByRole('button', { name: 'Import from Claude Code' }).click();
  await expect(dialog.getByRole('alert')).toHaveText('the credentials file is not valid JSON');
  expect(await connections(app)).toHaveLength(0);

  const tok = auth.issue();
  writeFileSync(
    join(claudeDir, '.credentials.json'),
    JSON.stringify({ claudeAiOauth: { accessToken: tok.accessToken, refreshToken: tok.refreshToken, expiresAt: Date.now() + 3_600_000, subscriptionType: 'pro' } }),
  );
  await dialog.getByRole('button', { name: 'Import from Claude Code' }).click();
  await expect(dialog).toBeHidden();
  const card = connectionCard(page, 'From Claude Code');
  await expect(card.getByTestId('connection-state')).toHaveText(/Healthy/);
  await expect(card.getByTestId('claude-token')).toContainText('pro');
  expect(await sendMessage(app, await clientKey(app))).toBe(200);
  expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${tok.accessToken}`);
});

test('Paste tokens: an unusable token is refused next to the field, nothing written', async ({ page, app, fake }) => {
  await openDashboard(page, app);
  await goTo(page, 'Connections');
  const dialog = await openClaudeDialog(page, fake, 'Pasted tokens');
  await dialog.getByRole('tab', { name: 'Paste tokens' }).click();
  await dialog.getByLabel('Access token', { exact: true }).fill('not a token');
  await dialog.getByRole('button', { name: 'Add connection' }).click();
  await expect(dialog.getByText('does not look like a token')).toBeVisible();
  expect(await connections(app)).toHaveLength(0);
  await dialog.getByLabel('Access token', { exact: true }).fill('sk-ant-oat01-pasted-token-value');
  await dialog.getByRole('button', { name: 'Add connection' }).click();
  await expect(dialog).toBeHidden();
  await expect(connectionCard(page, 'Pasted tokens').getByText(/sk-ant…alue/)).toBeVisible();
});
