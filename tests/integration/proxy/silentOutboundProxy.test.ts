// An outbound proxy that accepts the TCP connection and never answers: a request ends after the
// connection's connect timeout, and "Test connection" after the smaller of that and its own limit,
// each with an error that names the proxy step that hung (the CONNECT, or the SOCKS handshake).
// No timing assertion: each case must end with the right error before vitest's own test timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { SilentProxy } from '../../support/localProxies';
import { rawRequest } from '../management/http';

describe('an outbound proxy that never answers', () => {
  let silent: SilentProxy;
  let fake: FakeUpstream;
  let t: TestEngine;
  beforeAll(async () => {
    silent = await SilentProxy.start();
    fake = await FakeUpstream.start();
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
    await silent.close();
  });

  const add = (name: string, scheme: 'http' | 'socks5', model: string) =>
    t.addConnection({
      name,
      kind: 'openai-compatible',
      provider: name.toLowerCase(),
      baseUrl: fake.openaiUrl,
      secret: `sk-${name.toLowerCase()}-0123456789`,
      models: [model],
      passthroughModels: false,
      outboundProxy: silent.url(scheme),
      timeouts: { connectMs: 300 },
    });

  const ask = (model: string) =>
    rawRequest(t.proxyUrl, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${t.clientKey}` },
      body: { model, messages: [{ role: 'user', content: 'hi' }] },
    });

  it.each([
    ['http' as const, 'the outbound proxy did not answer the CONNECT within 0.3 s'],
    ['socks5' as const, 'the outbound proxy did not answer the SOCKS handshake within 0.3 s'],
  ])('%s: the request and the connection test end with the proxy step named', { timeout: 20_000 }, async (scheme, words) => {
    const model = `hung-${scheme}`;
    const conn = await add(`Hung${scheme}`, scheme, model);
    const before = silent.accepted;
    const r = await ask(model);
    expect(silent.accepted).toBeGreaterThan(before);
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(JSON.stringify((await t.api.getConnection({ id: conn.id })).health)).toContain(words);
    const test = await t.api.testConnection({ id: conn.id });
    expect(test.ok).toBe(false);
    expect(test.message).toContain(words);
    expect(fake.requests).toHaveLength(0);
  });
});
