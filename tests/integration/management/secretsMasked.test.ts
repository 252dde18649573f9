// Provider secrets never leave the store unmasked: not in any management answer, not in the
// event stream, not in the database column, not in a log line, and not when an upstream quotes the
// key back in its error.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { openEventStream, rawRequest } from './http';

const SECRET = 'sk-proj-Zq8vT3mK9wL2xN7bR4cF6hJ1';
const SECRET_2 = 'sk-ant-api03-Hn5gW8pQ2sV7yB4kM9tD3';
const ECHO_SECRET = 'sk-echo-Pm4rT8vX2zC6nB9qL5wK1';

describe('provider secrets', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  let openaiId: string;
  let anthropicId: string;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    // A failing upstream that does not quote the key: its error lands in health and logs.
    fake.script({ key: SECRET_2 }, [{ status: 500, json: { type: 'error', error: { type: 'api_error', message: 'boom' } } }]);
    t = await startTestEngine();
    openaiId = (await t.addConnection({ name: 'OpenAI', kind: 'openai', baseUrl: fake.openaiUrl, secret: SECRET, priority: 1 })).id;
    anthropicId = (await t.addConnection({ name: 'Claude', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: SECRET_2 })).id;
    // Traffic through the proxy, so logs and health have something in them.
    const client = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] });
    await rawRequest(t.proxyUrl, {
      method: 'POST',
      path: '/v1/messages',
      headers: { 'x-api-key': t.clientKey, 'anthropic-version': '2023-06-01' },
      body: { model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
    t.engine.requestLog.flush();
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const expectNoSecret = (what: string, value: unknown) => expectNoneOf([SECRET, SECRET_2], what, value);

  it('reached the upstream with the real keys (the test traffic is real)', () => {
    expect(fake.requests.some((r) => r.key === SECRET)).toBe(true);
    expect(fake.requests.some((r) => r.key === SECRET_2)).toBe(true);
  });

  it('shows only masks in connection answers', async () => {
    const list = await t.api.listConnections();
    expectNoSecret('GET /api/providers', list);
    const c = list.find((x) => x.id === openaiId)!;
    expect(c.secret).toEqual({ set: true, masked: 'sk-pro…6hJ1' });
    expect(list.find((x) => x.id === anthropicId)!.health.lastError).toBeTruthy();
    expectNoSecret('GET /api/providers/:id', await t.api.getConnection({ id: anthropicId }));
    expectNoSecret('PATCH /api/providers/:id', await t.api.updateConnection({ id: anthropicId, patch: { priority: 2 } }));
    expectNoSecret('PUT /api/providers/:id', await t.api.replaceConnection({ id: anthropicId, patch: { name: 'Claude', kind: 'anthropic', baseUrl: fake.anthropicUrl } }));
  });

  it('keeps the secret out of every read-only answer', async () => {
    const answers = {
      health: await t.api.getHealth(),
      app: await t.api.getAppInfo(),
      cooldowns: await t.api.listCooldowns(),
      breakers: await t.api.listBreakers(),
      lockouts: await t.api.listModelCooldowns(),
      admission: await t.api.getAdmission(),
      models: await t.api.listModels(),
      logs: await t.api.listLogs({ limit: 50 }),
      settings: await t.api.getSettings(),
    };
    for (const [what, value] of Object.entries(answers)) expectNoSecret(what, value);
    const page = answers.logs;
    for (const entry of page.entries ?? []) expectNoSecret(`GET /api/logs/${entry.id}`, await t.api.getLog({ id: entry.id }));
  });

  it('does not store the plaintext in the database', () => {
    const rows = t.engine.db.prepare('SELECT * FROM provider_connections').all() as { secret_enc: string | null }[];
    expect(rows.every((r) => typeof r.secret_enc === 'string' && r.secret_enc.length > 0)).toBe(true);
    expectNoSecret('provider_connections', rows);
    const logs = t.engine.db.prepare('SELECT * FROM proxy_logs').all();
    const attempts = t.engine.db.prepare('SELECT * FROM proxy_log_attempts').all();
    expect(logs.length).toBeGreaterThanOrEqual(2);
    expectNoSecret('proxy_logs', logs);
    expectNoSecret('proxy_log_attempts', attempts);
  });

  it('keeps the secret out of the event stream snapshot', async () => {
    const stream = await openEventStream(t.managementUrl, t.token);
    try {
      await stream.until((e) => e.event === 'health');
      expectNoSecret('GET /api/events', stream.events);
    } finally {
      await stream.close();
    }
  });

  it('keeps every secret out of the log lines', () => {
    expect(t.logs.lines.length).toBeGreaterThan(0);
    expectNoSecret('log', t.logs.lines.join(''));
  });

  it('keeps the management token out of log lines, whatever quotes it', () => {
    t.engine.log.warn('test.quotesToken', { note: `the token is ${t.token}`, url: `/api/x?token=${t.token}` });
    const line = t.logs.lines[t.logs.lines.length - 1]!;
    expect(line).toContain('test.quotesToken');
    expect(line).not.toContain(t.token);
  });

});

function expectNoneOf(secrets: string[], what: string, value: unknown) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  for (const s of secrets) {
    const at = text.indexOf(s);
    expect(at < 0 ? '' : text.slice(Math.max(0, at - 120), at + s.length), `${what} contains a secret`).toBe('');
    // Nor a large piece of it.
    expect(text.includes(s.slice(8, 24)), `${what} contains part of a secret`).toBe(false);
  }
}

describe('an upstream error that quotes the provider key', () => {
  // The pipeline scrubs upstream error text of every known secret before it is relayed to the
  // agent or stored as the connection's last error.
  it('never reaches the agent, the management answers or the database', async () => {
    const fake = await FakeUpstream.start();
    fake.script({ key: ECHO_SECRET }, [
      { status: 401, json: { error: { type: 'invalid_request_error', message: `Incorrect API key provided: ${ECHO_SECRET}` } } },
    ]);
    const t = await startTestEngine();
    try {
      const echo = await t.addConnection({
        name: 'Echo',
        kind: 'openai-compatible',
        provider: 'echo',
        baseUrl: fake.openaiUrl,
        secret: ECHO_SECRET,
        models: ['echo-model'],
        passthroughModels: false,
      });
      const r = await rawRequest(t.proxyUrl, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${t.clientKey}` },
        body: { model: 'echo-model', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(fake.requests.some((x) => x.key === ECHO_SECRET)).toBe(true);
      expectNoneOf([ECHO_SECRET], 'the answer to the agent', r.text);
      expectNoneOf([ECHO_SECRET], 'GET /api/providers/:id', await t.api.getConnection({ id: echo.id }));
      expectNoneOf([ECHO_SECRET], 'GET /api/resilience/cooldowns', await t.api.listCooldowns());
      expectNoneOf([ECHO_SECRET], 'provider_connections', t.engine.db.prepare('SELECT * FROM provider_connections').all());
    } finally {
      await t.stop();
      await fake.close();
    }
  });
});
