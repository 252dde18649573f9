// Acceptance for plain words (issue 22): with realistic state seeded through the management API
// and the proxy (a cooling connection after a 429, a model lockout, a tripped breaker, a combo
// whose every target is out, a mapping, a Claude subscription account, a session pin, a lease,
// an operator error rule, request-log rows including failed ones), every page of the dashboard
// and its main dialogs are read as a user reads them (`innerText`) and checked with findJargon.
// Technical names behind TechName ([data-tech-name]) and copyable setup snippets ([data-snippet])
// are not prose and are left out. One test per page, so each page's state is visible on its own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { expect, test, type Page } from '@playwright/test';
import { FakeClaudeAuth } from '../support/fakeClaudeAuth';
import { FakeUpstream } from '../support/fakeUpstream';
import { startServe, type Headless } from './headless';
import { findJargon } from './jargon';
import { clientKey, openDashboard, sendMessage } from './ui';

// The dashboard's routes (src/renderer/hooks/useRoute.ts PAGES; that module needs a browser, so
// the list is repeated here — a page added there and not here fails the sidebar check below).
const PAGES = ['agent', 'connections', 'combos', 'cooldowns', 'breakers', 'errorRules', 'settings', 'prices', 'logs', 'sessions', 'leases', 'app'] as const;
type PageId = (typeof PAGES)[number];

const SESSION = '7a2e4c1b-9d3f-4e8a-b5c6-0f1e2d3c4b5a';
const KEYS = { alpha: 'key-alpha-words-0001', beta: 'key-beta-words-00002', gamma: 'key-gamma-words-0003', delta: 'key-delta-words-0004' };

let fake: FakeUpstream;
let auth: FakeClaudeAuth;
let claudeDir: string;
let app: Headless;

const rateLimited = (unified: boolean) => ({
  status: 429,
  headers: { 'retry-after': '900', ...(unified ? { 'anthropic-ratelimit-unified-status': 'rejected' } : {}) },
  json: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } },
});

async function seed(): Promise<void> {
  await app.api('PATCH', '/api/settings', {
    'claude.authorizeUrl': auth.authorizeUrl,
    'claude.tokenUrl': auth.tokenUrl,
    'claude.pasteRedirectUri': auth.pasteRedirectUri,
    'claude.apiBaseUrl': auth.apiBase,
    // A breaker that trips on the second failure and stays open for the whole run.
    'providerBreaker.apikey.degradationThreshold': 1,
    'providerBreaker.apikey.failureThreshold': 2,
    'providerBreaker.apikey.resetTimeoutMs': 3_600_000,
    providerErrorRules: [{ provider: 'gamma', match: 'key spent', scope: 'connection', cooldownMs: 3_600_000 }],
  });
  type Conn = { id: string; name: string };
  const alpha = await app.api<Conn>('POST', '/api/providers', { name: 'Alpha', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: KEYS.alpha, priority: 0 });
  const beta = await app.api<Conn>('POST', '/api/providers', { name: 'Beta', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: KEYS.beta, priority: 1 });
  await app.api('POST', '/api/providers', { name: 'Gamma', kind: 'anthropic-compatible', provider: 'gamma', baseUrl: fake.anthropicUrl, secret: KEYS.gamma, models: ['model-g'], passthroughModels: false, priority: 3 });
  await app.api('POST', '/api/providers', { name: 'Delta', kind: 'openai-compatible', provider: 'delta', baseUrl: fake.openaiUrl, secret: KEYS.delta, models: ['model-d'], passthroughModels: false, priority: 3 });
  void alpha;

  // A Claude subscription account imported from Claude Code's credentials file.
  const tok = auth.issue();
  writeFileSync(
    join(claudeDir, '.credentials.json'),
    JSON.stringify({ claudeAiOauth: { accessToken: tok.accessToken, refreshToken: tok.refreshToken, expiresAt: Date.now() + 3_600_000, subscriptionType: 'max' } }),
  );
  await app.api('POST', '/api/oauth/claude/import', { name: 'Claude Max', baseUrl: fake.anthropicUrl, priority: 5 });

  await app.api('POST', '/api/combos', { name: 'pool', targets: [{ provider: 'gamma', model: 'model-g' }, { provider: 'delta', model: 'model-d' }] });
  await app.api('POST', '/api/model-mappings', { pattern: 'gpt-*', combo: 'pool' });

  const key = await clientKey(app);
  // Alpha: an account-wide 429 cools the connection; Beta serves.
  fake.script({ key: KEYS.alpha }, [rateLimited(true)]);
  expect(await sendMessage(app, key)).toBe(200);
  // Gamma: a plain 429 locks the model on that connection.
  fake.script({ key: KEYS.gamma }, [rateLimited(false)]);
  await sendMessage(app, key, 'pool');
  // Delta: 503s until its breaker opens.
  fake.script({ key: KEYS.delta }, [{ status: 503, json: { error: { message: 'upstream overloaded', type: 'server_error' } } }], { repeatLast: true });
  for (let i = 0; i < 4; i++) await sendMessage(app, key, 'delta/model-d');
  // The combo now has every target out: a failed request the log has to explain.
  await sendMessage(app, key, 'pool');
  await sendMessage(app, key, 'gpt-4o');

  // A Claude Code session pinned to the connection that served it.
  const client = new Anthropic({ baseURL: app.proxyUrl, apiKey: key, maxRetries: 0 });
  for (let i = 0; i < 2; i++) {
    await client.messages.create({ model: 'claude-e2e', max_tokens: 8, messages: [{ role: 'user', content: 'ping' }] }, { headers: { 'X-Claude-Code-Session-Id': SESSION } });
  }

  // A worker key that holds an exclusive lease on Beta.
  const worker = await app.api<{ secret: string }>('POST', '/api/keys', { name: 'Worker', scopes: ['lease:exclusive'], allowedConnections: [beta.id] });
  const acquired = await fetch(`${app.proxyUrl}/api/v1/session-leases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${worker.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ action: 'acquire', label: 'nightly batch' }),
  });
  expect(acquired.status).toBe(200);
}

test.beforeAll(async () => {
  fake = await FakeUpstream.start();
  auth = await new FakeClaudeAuth().start();
  claudeDir = mkdtempSync(join(tmpdir(), 'switchyard-e2e-words-'));
  app = await startServe({ CLAUDE_CONFIG_DIR: claudeDir });
  await seed();
});

test.afterAll(async () => {
  await app?.stop();
  await auth?.close();
  await fake?.close();
  rmSync(claudeDir, { recursive: true, force: true });
});

/** What the user reads on the page now, without revealed technical names and copyable snippets. */
async function readableText(page: Page): Promise<string> {
  // A string, so the node typecheck (no DOM lib) does not read browser globals.
  return (await page.evaluate(`(() => {
    const hidden = [...document.querySelectorAll('[data-tech-name], [data-snippet]')];
    const before = hidden.map((el) => el.style.display);
    for (const el of hidden) el.style.display = 'none';
    const text = document.body.innerText;
    hidden.forEach((el, i) => (el.style.display = before[i]));
    return text;
  })()`)) as string;
}

/** Every jargon hit in what the page shows, as "where — rule: text …context…" lines (each once). */
async function jargonOn(page: Page, where: string): Promise<string[]> {
  const text = await readableText(page);
  const lines = findJargon(text).map((h) => {
    const around = text.slice(Math.max(0, h.index - 60), h.index + h.text.length + 40).replace(/\s+/g, ' ').trim();
    return `${where} — ${h.rule}: ${h.text}   …${around}…`;
  });
  return [...new Set(lines)];
}

async function visit(page: Page, id: PageId): Promise<void> {
  await openDashboard(page, app);
  await page.evaluate(`window.location.hash = ${JSON.stringify(`#/${id}`)}`);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  // Let the page finish loading; a page that never does is another test's failure, its words are still read.
  await expect(page.locator('main .spinner')).toHaveCount(0, { timeout: 10_000 }).catch(() => undefined);
}

/** The main dialogs of a page, opened one after the other, each read while open. */
const DIALOGS: Partial<Record<PageId, (page: Page) => Promise<string[]>>> = {
  connections: async (page) => {
    const found: string[] = [];
    await page.getByRole('button', { name: 'Add connection' }).first().click();
    const dialog = page.getByRole('dialog', { name: 'Add connection' });
    await expect(dialog).toBeVisible();
    found.push(...(await jargonOn(page, 'Add connection dialog')));
    await dialog.getByRole('combobox', { name: 'Kind', exact: true }).selectOption({ label: 'Claude subscription' });
    found.push(...(await jargonOn(page, 'Add connection dialog, Claude subscription')));
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    return found;
  },
  combos: async (page) => {
    await page.getByRole('article', { name: 'pool' }).getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit pool' });
    await expect(dialog).toBeVisible();
    const found = await jargonOn(page, 'Edit combo dialog');
    await page.keyboard.press('Escape');
    return found;
  },
  logs: async (page) => {
    // Every row's details open at once (they expand in place).
    const rows = page.getByTestId('log-row');
    await expect(rows.first()).toBeVisible();
    const n = await rows.count();
    for (let i = 0; i < n; i++) await rows.nth(i).getByRole('button', { name: /Details of the/ }).click();
    await expect(page.getByRole('table', { name: 'Attempts' }).first()).toBeVisible();
    return jargonOn(page, 'request details');
  },
  errorRules: async (page) => {
    const tester = page.getByRole('region', { name: 'Test an error' });
    await tester.getByRole('combobox', { name: 'Provider' }).fill('gamma');
    await tester.getByRole('textbox', { name: 'Status' }).fill('429');
    await tester.getByRole('textbox', { name: 'Error body' }).fill('{"error":{"message":"key spent for today"}}');
    await expect(page.getByTestId('rule-test-effect')).toBeVisible();
    const found = await jargonOn(page, 'error-rule tester (your rule)');
    await tester.getByRole('combobox', { name: 'Provider' }).fill('agentrouter');
    await tester.getByRole('textbox', { name: 'Status' }).fill('403');
    await tester.getByRole('textbox', { name: 'Error body' }).fill('{"error":{"message":"用户额度不足"}}');
    await expect(page.getByTestId('rule-test-result')).toContainText('Built-in');
    found.push(...(await jargonOn(page, 'error-rule tester (built-in rule)')));
    return found;
  },
};

test('every page of the sidebar is among those checked', async ({ page }) => {
  await openDashboard(page, app);
  const links = page.getByRole('navigation', { name: 'Main' }).getByRole('link');
  const hrefs = await links.evaluateAll((els) => els.map((el) => el.getAttribute('href') ?? ''));
  const ids = [...new Set(hrefs.filter((h) => h.startsWith('#/')).map((h) => h.slice(2).split(/[/?]/)[0]))];
  expect(ids.sort()).toEqual([...PAGES].sort());
});

for (const id of PAGES) {
  test(`page "${id}" shows no requirement ids, codes or setting keys`, async ({ page }, info) => {
    await visit(page, id);
    const found = await jargonOn(page, `page ${id}`);
    const open = DIALOGS[id];
    if (open) found.push(...(await open(page)));
    await page.screenshot({ path: info.outputPath(`${id}.png`), fullPage: true });
    const unique = [...new Set(found)];
    expect(unique, `words from inside the code on "${id}":\n${unique.join('\n')}`).toEqual([]);
  });
}
