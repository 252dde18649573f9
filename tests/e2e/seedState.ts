// Realistic dashboard state for the plain-words check and the screenshot run: four API-key
// connections against the fake upstream (one cooling after an account-wide 429, one with a model
// locked after a plain 429, one whose breaker tripped on 503s), a Claude subscription account
// imported from Claude Code's credentials file, a combo whose every target is out and a mapping to
// it, an operator error rule, a session pin, an exclusive lease and request-log rows including
// failed ones. Everything goes through the management API and the proxy, as a user's would.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { expect } from '@playwright/test';
import { FakeClaudeAuth } from '../support/fakeClaudeAuth';
import { FakeUpstream } from '../support/fakeUpstream';
import { startServe, type Headless } from './headless';
import { clientKey, sendMessage } from './ui';

export interface Seeded {
  app: Headless;
  fake: FakeUpstream;
  stop(): Promise<void>;
}

const SESSION = '7a2e4c1b-9d3f-4e8a-b5c6-0f1e2d3c4b5a';
const KEYS = { alpha: 'key-alpha-words-0001', beta: 'key-beta-words-00002', gamma: 'key-gamma-words-0003', delta: 'key-delta-words-0004' };


const rateLimited = (unified: boolean) => ({
  status: 429,
  headers: { 'retry-after': '900', ...(unified ? { 'anthropic-ratelimit-unified-status': 'rejected' } : {}) },
  json: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' } },
});

async function seed(app: Headless, fake: FakeUpstream, auth: FakeClaudeAuth, claudeDir: string): Promise<void> {
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

/** A headless shell with the state above; `stop()` ends it and its fakes. */
export async function startSeeded(): Promise<Seeded> {
  const fake = await FakeUpstream.start();
  const auth = await new FakeClaudeAuth().start();
  const claudeDir = mkdtempSync(join(tmpdir(), 'switchyard-e2e-seeded-'));
  const app = await startServe({ CLAUDE_CONFIG_DIR: claudeDir });
  await seed(app, fake, auth, claudeDir);
  return {
    app,
    fake,
    async stop() {
      await app.stop();
      await auth.close();
      await fake.close();
      rmSync(claudeDir, { recursive: true, force: true });
    },
  };
}
