// Every upstream quotes our own request back (the provider API and the OAuth token endpoint, in its
// raw JSON body, the same fields form-encoded, and the Authorization header). Then no secret the
// engine holds or sends — provider key, Claude access and refresh token, client key — appears in
// any answer, log line, pushed event, or byte of the SQLite file and its WAL, in any of the forms a
// quoting upstream writes it: as is, URL-encoded, form-encoded or JSON-escaped.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../support/fakeUpstream';
import { startClaudeRig, type ClaudeRig } from '../claude/support';
import { openEventStream, rawRequest, type SseEvent } from './http';

// Characters that a URL or form encoding and a JSON string each spell differently.
const PROVIDER_KEY = 'sk-echo+Pm4r/T8vX=2zC6"nB9q&L5';
const ACCESS = 'at-echo+Acc/Tok=Q7"xW2&mK9pL';
const REFRESH = 'rt-echo+Ref/Tok=Z3"yV8&nJ4hD';

/** An upstream that refuses every call by quoting the request back in three spellings. */
const echo = (req: RecordedRequest) => {
  const fields = Object.entries(req.body ?? {}).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]);
  const quoted = `auth ${String(req.headers.authorization ?? req.headers['x-api-key'] ?? '')} form ${new URLSearchParams(fields).toString()} request ${req.rawBody}`;
  return { status: 401, json: { type: 'error', error: { type: 'authentication_error', message: quoted } } };
};

/** Every spelling of a value that a quoting upstream or our own stores could produce. */
function spellings(v: string): string[] {
  const json = JSON.stringify(v).slice(1, -1);
  return [...new Set([v, encodeURIComponent(v), new URLSearchParams({ v }).toString().slice(2), json, JSON.stringify(json).slice(1, -1)])];
}

function expectNoSecret(secrets: string[], what: string, value: unknown) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  for (const s of secrets) {
    for (const form of spellings(s)) {
      const at = text.indexOf(form);
      expect(at < 0 ? '' : text.slice(Math.max(0, at - 80), at + form.length + 20), `${what} holds ${form}`).toBe('');
    }
  }
}

describe('secrets quoted back by every upstream', () => {
  let rig: ClaudeRig;
  const answers: Record<string, unknown> = {};
  let events: SseEvent[] = [];
  let secrets: string[];

  beforeAll(async () => {
    rig = await startClaudeRig();
    rig.auth.echoRequests = true;
    rig.fake.script({}, [echo]);
    const t = rig.t;
    secrets = [PROVIDER_KEY, ACCESS, REFRESH, t.clientKey];
    const stream = await openEventStream(t.managementUrl, t.token);
    const claude = await t.api.createConnection({
      name: 'Claude echo',
      kind: 'claude-subscription',
      baseUrl: rig.fake.anthropicUrl,
      secret: JSON.stringify({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: rig.clock.now() + 3_600_000 }),
      priority: 1,
    });
    const openai = await t.api.createConnection({
      name: 'Echo',
      kind: 'openai-compatible',
      provider: 'echo',
      baseUrl: rig.fake.openaiUrl,
      secret: PROVIDER_KEY,
      models: ['echo-model'],
      passthroughModels: false,
    });
    answers.messages = (
      await rawRequest(t.proxyUrl, {
        method: 'POST',
        path: '/v1/messages',
        headers: { 'x-api-key': t.clientKey, 'anthropic-version': '2023-06-01' },
        body: { model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      })
    ).text;
    answers.chat = (
      await rawRequest(t.proxyUrl, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${t.clientKey}` },
        body: { model: 'echo-model', messages: [{ role: 'user', content: 'hi' }] },
      })
    ).text;
    answers.testClaude = await t.api.testConnection({ id: claude.id });
    answers.testOpenai = await t.api.testConnection({ id: openai.id });
    answers.claudeAccounts = await t.api.listClaudeAccounts();
    answers.refreshUsage = await t.api.refreshClaudeUsage({}).catch((e: unknown) => String(e));
    answers.connections = await t.api.listConnections();
    answers.health = await t.api.getHealth();
    answers.cooldowns = await t.api.listCooldowns();
    t.engine.requestLog.flush();
    const logs = await t.api.listLogs({ limit: 50 });
    answers.logs = logs;
    for (const e of logs.entries ?? []) answers[`log ${e.id}`] = await t.api.getLog({ id: e.id });
    await stream.until((e) => e.event === 'health');
    events = stream.events;
    await stream.close();
  });
  afterAll(async () => {
    await rig?.stop();
  });

  it('really sent the secrets upstream, and the upstreams really quoted them', () => {
    expect(rig.fake.requests.some((r) => r.key === PROVIDER_KEY)).toBe(true);
    expect(rig.fake.requests.some((r) => r.key === ACCESS)).toBe(true);
    expect(rig.auth.tokenCalls.some((c) => c.body?.refresh_token === REFRESH)).toBe(true);
  });

  it('keeps them out of the agent answers, the connection tests and every management answer', () => {
    for (const [what, value] of Object.entries(answers)) expectNoSecret(secrets, what, value);
  });

  it('keeps them out of the pushed events', () => {
    expect(events.length).toBeGreaterThan(0);
    expectNoSecret(secrets, '/api/events', events);
  });

  it('keeps them out of the log lines', () => {
    expect(rig.t.logs.lines.join('')).toContain('claude');
    expectNoSecret(secrets, 'log lines', rig.t.logs.lines.join(''));
  });

  it('keeps them out of the SQLite file and its WAL', () => {
    rig.t.engine.requestLog.flush();
    const files = readdirSync(rig.dataDir).filter((f) => /\.(db|sqlite)(-wal|-shm)?$/.test(f));
    expect(files.some((f) => f.endsWith('-wal'))).toBe(true);
    for (const f of files) expectNoSecret(secrets, f, readFileSync(join(rig.dataDir, f)).toString('latin1'));
  });
});
