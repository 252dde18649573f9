// Hardening of the request pipeline (issue 9): the half-open probe is given back on every exit
// path, retryable answers carry a truthful Retry-After, the request log never stores a query
// string, and a pool whose every target is excluded says so in the log and in the answer.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { anthropicMessage } from '../../support/fakeUpstream';
import { ask, breakerOf, rigPerTest, unavailable, type Rig } from '../resilience/support';

const KA = 'sk-ant-key-aaaaaaaaaaaa';
const KB = 'sk-ant-key-bbbbbbbbbbbb';
/** Open the API-key breaker after two provider failures, so tests reach HALF_OPEN quickly. */
const FAST_BREAKER = {
  SWITCHYARD_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD: '1',
  SWITCHYARD_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD: '2',
};

/** A loopback port nobody listens on (connections are refused). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function post(r: Rig, path: string, body: string) {
  const res = await fetch(`${r.t.proxyUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': r.t.clientKey, 'anthropic-version': '2023-06-01' },
    body,
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as Record<string, unknown> };
}

describe('pipeline hardening', () => {
  const { fake, startRig } = rigPerTest();

  it('a request that breaks inside its half-open probe gives the probe back: the next request probes and closes the breaker', async () => {
    const r = await startRig({ env: FAST_BREAKER });
    await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable(), unavailable(), { json: anthropicMessage('claude-x') }]);
    await ask(r.client);
    await ask(r.client);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('OPEN');
    r.clock.advance(30_000);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('HALF_OPEN');

    // A body too deep to serialise again, sent while the probe is free; the provider prefix makes
    // the proxy rewrite the model, and the nested "model" key forces the slow rewrite path.
    const depth = 20_000;
    const deep = `{"model":"anthropic/claude-x","metadata":{"model":"x"},"max_tokens":5,"messages":[{"role":"user","content":${'['.repeat(depth)}${']'.repeat(depth)}}]}`;
    const broken = await post(r, '/v1/messages', deep);
    expect(broken.status).toBeGreaterThanOrEqual(400);

    const answer = await ask(r.client);
    expect(answer.status).toBe(200);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
  });

  it('an unreachable upstream is a 502 with Retry-After, and a relayed 503 without a hint gets one too', async () => {
    const r = await startRig();
    await r.add('Dead', KA, { baseUrl: `http://127.0.0.1:${await deadPort()}` });
    const refused = await ask(r.client);
    expect(refused.status).toBe(502);
    expect(refused.code).toBe('upstream_unreachable');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);

    const r2 = await startRig();
    await r2.add('Key B', KB);
    fake.script({ key: KB }, [unavailable()]);
    const relayed = await ask(r2.client);
    expect(relayed.status).toBe(503);
    expect(Number(relayed.retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('the request log keeps the path but never the query string', async () => {
    const r = await startRig();
    await r.add('Key A', KA);
    const res = await post(r, '/v1/messages?beta=true&token=sk-should-not-be-kept', JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }));
    expect(res.status).toBe(200);
    const page = await r.t.api.listLogs({});
    expect(page.entries[0]!.path).toBe('/v1/messages');
    expect(JSON.stringify(page.entries)).not.toContain('sk-should-not-be-kept');
  });

  it('when every target is excluded by a timer the log says so once, with reasons and seconds left', async () => {
    const r = await startRig({ env: FAST_BREAKER });
    await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable()]);
    await ask(r.client);
    await ask(r.client);
    const answer = await ask(r.client);
    expect(answer).toMatchObject({ status: 503, code: 'all_targets_cooling_down' });
    const lines = r.t.logs.lines.filter((l) => l.includes('routing.every_target_excluded'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('WARN');
    expect(lines[0]).toMatch(/Key A: circuit_open 30s/);
  });
});
