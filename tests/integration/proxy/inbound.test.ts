// What the proxy refuses and what it never forwards: typed 4xx errors in the inbound protocol's
// shape, client aborts that close the upstream socket, and headers that stay on this machine.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { anthropicStream, FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

describe('inbound requests', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    await t.addConnection({ name: 'Claude', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-upstream-zzzzzzzz' });
    await t.addConnection({
      name: 'GPT',
      kind: 'openai',
      baseUrl: fake.openaiUrl,
      secret: 'sk-openai-upstream-zzzz',
      models: ['gpt-only'],
      passthroughModels: false,
    });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${t.proxyUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.clientKey}`, ...headers },
      body,
    });

  it('answers bad JSON with a typed 400 in the Anthropic shape on /v1/messages', async () => {
    const res = await post('/v1/messages', '{"model": "claude-x", ');
    expect(res.status).toBe(400);
    const j = (await res.json()) as { type: string; error: { type: string; code: string; message: string } };
    expect(j.type).toBe('error');
    expect(j.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    expect(fake.requests).toHaveLength(0);
  });

  it('answers bad JSON with a typed 400 in the OpenAI shape on /v1/chat/completions', async () => {
    const res = await post('/v1/chat/completions', 'not json');
    expect(res.status).toBe(400);
    const j = (await res.json()) as { error: { type: string; code: string } };
    expect(j.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('requires a model', async () => {
    const res = await post('/v1/chat/completions', JSON.stringify({ messages: [] }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('missing_model');
  });

  it('answers an unknown model with 404 model_not_found and says why', async () => {
    const openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    const err = (await openai.chat.completions
      .create({ model: 'gpt-unknown', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.NotFoundError>;
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err.code).toBe('model_not_found');
    expect(err.message).toContain('gpt-unknown');
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a missing or unknown client key with 401 in the inbound shape', async () => {
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: 'sk-sy-not-a-real-key', maxRetries: 0 });
    const err = await anthropic.messages
      .create({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    const res = await fetch(`${t.proxyUrl}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_client_key');
    expect(fake.requests).toHaveLength(0);
  });

  it('accepts the client key as x-api-key (Anthropic style) or a bearer token', async () => {
    const body = JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect((await post('/v1/messages', body)).status).toBe(200);
    const viaApiKey = await fetch(`${t.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.clientKey },
      body,
    });
    expect(viaApiKey.status).toBe(200);
  });

  it('refuses an oversized body with 413 before calling any upstream', async () => {
    await t.api.patchSettings({ patch: { 'proxy.maxBodyBytes': 2048 } });
    try {
      const res = await post('/v1/messages', JSON.stringify({ model: 'claude-x', messages: [{ role: 'user', content: 'x'.repeat(5000) }] }));
      expect(res.status).toBe(413);
      const j = (await res.json()) as { error: { type: string; code: string } };
      expect(j.error).toMatchObject({ type: 'request_too_large', code: 'payload_too_large' });
      expect(fake.requests).toHaveLength(0);
    } finally {
      await t.api.patchSettings({ patch: { 'proxy.maxBodyBytes': null } });
    }
  });

  it('refuses requests whose Host is not loopback (DNS rebinding)', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${t.proxyUrl}/v1/messages`,
        { method: 'POST', headers: { host: 'attacker.example:80', 'x-api-key': t.clientKey, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
  });

  it('answers unknown endpoints with 404 and wrong methods with 405', async () => {
    expect((await post('/v1/embeddings', '{}')).status).toBe(404);
    const res = await fetch(`${t.proxyUrl}/v1/messages`, { headers: { authorization: `Bearer ${t.clientKey}` } });
    expect(res.status).toBe(405);
  });

  // Lease headers are checked before routing (a lone or malformed one is a 400); that they never
  // reach an upstream either is tested in tests/integration/affinity/leases.test.ts.
  it('never forwards session headers or the client key upstream', async () => {
    await post('/v1/messages', JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [] }), {
      'X-Session-Id': 'sess-1',
      'x-codex-session-id': 'codex-1',
      'X-Switchyard-Session': 'sy-1',
      'x-omniroute-session': 'or-1',
      cookie: 'a=b',
      'anthropic-beta': 'prompt-caching-2024-07-31',
    });
    const seen = fake.requests.at(-1)!;
    const names = Object.keys(seen.headers).map((h) => h.toLowerCase());
    for (const h of ['x-session-id', 'x-codex-session-id', 'x-switchyard-session', 'x-omniroute-session', 'cookie']) {
      expect(names).not.toContain(h);
    }
    expect(seen.key).toBe('sk-ant-upstream-zzzzzzzz');
    expect(JSON.stringify(seen.headers)).not.toContain(t.clientKey);
    expect(seen.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
  });

  it('a client abort mid-stream closes the upstream socket', async () => {
    let release!: () => void;
    const never = new Promise<void>((r) => (release = r));
    const chunks = anthropicStream('claude-x', ['one', 'two']);
    chunks[3] = { ...chunks[3]!, gate: never };
    fake.script({}, [{ chunks }]);
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const stream = anthropic.messages.stream({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    stream.on('error', () => {});
    stream.on('abort', () => {});
    const settled = stream.done().catch(() => 'aborted');
    await new Promise<void>((resolve) => stream.on('text', () => resolve()));
    stream.abort();
    expect(await settled).toBe('aborted');
    await fake.waitFor(() => fake.requests.length === 1 && fake.requests[0]!.clientClosed && fake.inFlight === 0);
    expect(fake.requests[0]!.clientClosed).toBe(true);
    release();
    const log = await waitForLog(t, (e) => e.requestedModel === 'claude-x' && e.errorCode === 'client_closed_request');
    expect(log.status).toBe(200);
  });
});

async function waitForLog(t: TestEngine, pred: (e: Awaited<ReturnType<TestEngine['api']['getLog']>>) => boolean) {
  for (let i = 0; i < 100; i++) {
    const page = await t.api.listLogs({ limit: 10 });
    const hit = page.entries.find(pred);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('log entry not written');
}
