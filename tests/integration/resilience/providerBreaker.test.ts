// The provider circuit breaker through HTTP (§1): GET /api/monitoring/health, POST
// /api/resilience/reset, which keys the fake upstream sees, persistence across a restart, env overrides.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../support/fakeClock';
import { anthropicError, ask, breakerOf, keysSeen, rateLimited, unavailable, rigPerTest, type Rig } from './support';

const KA = 'sk-ant-key-aaaaaaaaaaaa';
const KB = 'sk-ant-key-bbbbbbbbbbbb';
const KQ = 'sk-ant-key-qqqqqqqqqqqq';

describe('provider circuit breaker', () => {
  const { fake, startRig } = rigPerTest();

  const start = async (env: Record<string, string> = {}) => startRig({ env });

  /** Sends `n` requests that each reach the failing provider once. */
  const failTimes = async (r: Rig, n: number, model = 'claude-x') => {
    for (let i = 0; i < n; i++) await ask(r.client, model);
  };

  it('API key: DEGRADED after 7 provider failures and still called; OPEN after 12; then skipped with no upstream call', async () => {
    const r = await start();
    await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable()]);
    await failTimes(r, 6);
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'CLOSED', failures: 6, profile: 'apikey' });
    await failTimes(r, 1);
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'DEGRADED', failures: 7 });
    await failTimes(r, 1);
    expect(fake.requests).toHaveLength(8);
    await failTimes(r, 4);
    const open = await breakerOf(r.t, 'anthropic');
    expect(open).toMatchObject({ state: 'OPEN', failures: 12, failureThreshold: 12, resetTimeoutMs: 30_000, lastFailureStatus: 503 });
    expect(open.halfOpenAt! - r.clock.now()).toBe(30_000);
    const answer = await ask(r.client);
    expect(answer).toMatchObject({ status: 503, code: 'all_targets_cooling_down', retryAfter: '30' });
    expect(answer.diagnostics!.excluded).toEqual([expect.objectContaining({ reason: 'circuit_open', retryAfterSec: 30 })]);
    expect(fake.requests).toHaveLength(12);
  });

  it('one breaker per provider: every connection of the provider is skipped, another provider is not', async () => {
    const r = await start();
    await r.add('Key A', KA);
    await r.add('Key B', KB);
    await r.add('Q', KQ, { kind: 'anthropic-compatible', provider: 'kimi' });
    fake.script({ key: KA }, [unavailable()]);
    fake.script({ key: KB }, [unavailable()]);
    await failTimes(r, 6, 'anthropic/claude-x'); // two attempts each
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('OPEN');
    const before = fake.requests.length;
    expect((await ask(r.client, 'anthropic/claude-x')).status).toBe(503);
    expect(fake.requests.length).toBe(before);
    expect((await ask(r.client, 'kimi/kimi-k2')).status).toBe(200);
    expect((await breakerOf(r.t, 'kimi')).state).toBe('CLOSED');
  });

  it('only 408/500/502/503/504 count: each moves the breaker; 400/401/403/404/429 twenty times leave it CLOSED', async () => {
    const r = await start();
    await r.add('Key A', KA);
    const errs = [400, 401, 403, 404, 429];
    for (let i = 0; i < 20; i++) {
      const status = errs[i % errs.length]!;
      fake.reset();
      fake.script({ key: KA }, [anthropicError(status, 'error', `status ${status}`)]);
      await ask(r.client);
      await r.t.api.clearCooldowns({ all: true });
    }
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'CLOSED', failures: 0 });
    let n = 0;
    for (const status of [408, 500, 502, 503, 504]) {
      fake.reset();
      fake.script({ key: KA }, [anthropicError(status, 'api_error', `status ${status}`)]);
      await ask(r.client);
      expect((await breakerOf(r.t, 'anthropic')).failures).toBe(++n);
    }
  });

  it('OPEN reads as HALF_OPEN after the reset timeout (no timer); one probe goes through and a success closes it', async () => {
    const r = await start();
    await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable()]);
    await failTimes(r, 12);
    r.clock.advance(30_000);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('HALF_OPEN');
    fake.reset();
    expect((await ask(r.client)).status).toBe(200);
    expect(fake.requests).toHaveLength(1);
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'CLOSED', failures: 0 });
  });

  it('HALF_OPEN: a failing probe opens the breaker again for a full reset timeout', async () => {
    const r = await start();
    await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable()]);
    await failTimes(r, 12);
    r.clock.advance(30_000);
    await ask(r.client);
    const b = await breakerOf(r.t, 'anthropic');
    expect(b.state).toBe('OPEN');
    expect(b.halfOpenAt! - r.clock.now()).toBe(30_000);
    expect(fake.requests).toHaveLength(13);
  });

  it('HALF_OPEN lets exactly one probe through while it is in flight', async () => {
    const r = await start({ RATE_LIMIT_AUTO_ENABLE: 'false' });
    await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable()]);
    await failTimes(r, 12);
    r.clock.advance(30_000);
    fake.reset();
    let release!: () => void;
    const hold = new Promise<void>((res) => (release = res));
    const body = JSON.stringify({ id: 'msg', type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } });
    fake.script({ key: KA }, [{ status: 200, headers: { 'content-type': 'application/json' }, chunks: [{ data: body, gate: hold }] }]);
    const probe = ask(r.client);
    await fake.waitFor(() => fake.requests.length === 1);
    const others = await Promise.all([ask(r.client), ask(r.client), ask(r.client)]);
    expect(others.map((o) => [o.status, o.code])).toEqual(Array(3).fill([503, 'all_targets_cooling_down']));
    expect(others[0]!.diagnostics!.excluded[0]).toMatchObject({ reason: 'circuit_open' });
    release();
    expect((await probe).status).toBe(200);
    expect(fake.requests).toHaveLength(1);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
  });

  it('a probe abandoned by its client is released, so the next request probes', async () => {
    const r = await start({ RATE_LIMIT_AUTO_ENABLE: 'false' });
    await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable()]);
    await failTimes(r, 12);
    r.clock.advance(30_000);
    fake.reset();
    fake.script({ key: KA }, [{ hang: true }], { repeatLast: false });
    const ctl = new AbortController();
    const gone = r.client.messages.create({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { signal: ctl.signal }).catch(() => null);
    await fake.waitFor(() => fake.requests.length === 1);
    ctl.abort();
    await gone;
    await fake.waitFor(() => fake.requests[0]!.clientClosed);
    expect((await ask(r.client)).status).toBe(200);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
  });

  it('DEGRADED decays back to CLOSED after a quiet window, with no traffic', async () => {
    const r = await start();
    await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable()]);
    await failTimes(r, 7);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('DEGRADED');
    r.clock.advance(29_999);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('DEGRADED');
    r.clock.advance(1);
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'CLOSED', failures: 0 });
  });

  it('DEGRADED goes back to CLOSED after successes, or after a good connection test', async () => {
    const r = await start();
    const a = await r.add('Key A', KA);
    fake.script({ key: KA }, [unavailable()]);
    await failTimes(r, 7);
    fake.reset();
    for (let i = 0; i < 3; i++) expect((await ask(r.client)).status).toBe(200);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
    fake.script({ key: KA, path: '/v1/messages' }, [unavailable()]);
    await failTimes(r, 7);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('DEGRADED');
    expect((await r.t.api.testConnection({ id: a.id })).ok).toBe(true);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
  });

  it('OAuth opens after 8 failures and half-opens after 60 s; Local opens after 2 and half-opens after 15 s', async () => {
    const r = await start();
    await r.add('OAuth', KA, { kind: 'anthropic-compatible', provider: 'claude', authClass: 'oauth' });
    await r.t.addConnection({ name: 'Ollama', kind: 'local', provider: 'ollama', baseUrl: fake.openaiUrl });
    fake.script({ key: KA }, [unavailable()]);
    fake.script({ path: '/v1/chat/completions' }, [{ status: 502, json: { error: { message: 'bad gateway' } } }]);
    await failTimes(r, 4, 'claude/x');
    expect((await breakerOf(r.t, 'claude')).state).toBe('CLOSED');
    await failTimes(r, 1, 'claude/x');
    expect((await breakerOf(r.t, 'claude')).state).toBe('DEGRADED');
    await failTimes(r, 3, 'claude/x');
    expect(await breakerOf(r.t, 'claude')).toMatchObject({ state: 'OPEN', profile: 'oauth', failureThreshold: 8, degradationThreshold: 5 });

    const chat = () =>
      fetch(`${r.t.proxyUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${r.t.clientKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'ollama/llama3', messages: [{ role: 'user', content: 'hi' }] }),
      });
    await chat();
    expect(await breakerOf(r.t, 'ollama')).toMatchObject({ state: 'DEGRADED', profile: 'local', degradationThreshold: 1 });
    await chat();
    expect(await breakerOf(r.t, 'ollama')).toMatchObject({ state: 'OPEN', failureThreshold: 2, resetTimeoutMs: 15_000 });
    r.clock.advance(15_000);
    expect((await breakerOf(r.t, 'ollama')).state).toBe('HALF_OPEN');
    expect((await breakerOf(r.t, 'claude')).state).toBe('OPEN');
    r.clock.advance(45_000);
    expect((await breakerOf(r.t, 'claude')).state).toBe('HALF_OPEN');
  });

  it('a provider whose connections mix classes uses the API-key profile', async () => {
    const r = await start();
    await r.add('OAuth', KA, { authClass: 'oauth' });
    expect((await breakerOf(r.t, 'anthropic')).profile).toBe('oauth');
    await r.add('Key', KB);
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ profile: 'apikey', failureThreshold: 12 });
  });

  it('connection errors count as provider failures (Local opens after two refused connections)', async () => {
    const r = await start();
    await r.t.addConnection({ name: 'Down', kind: 'local', provider: 'ollama', baseUrl: 'http://127.0.0.1:9/v1' });
    const chat = () =>
      fetch(`${r.t.proxyUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${r.t.clientKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'llama3', messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await chat()).status).toBe(502);
    expect((await chat()).status).toBe(502);
    expect(await breakerOf(r.t, 'ollama')).toMatchObject({ state: 'OPEN', lastFailureStatus: null });
    const third = await chat();
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('15');
  });

  it('POST /api/resilience/reset closes an OPEN breaker and the next request reaches the upstream', async () => {
    const r = await start();
    await r.add('Key A', KA);
    await r.add('Q', KQ, { kind: 'anthropic-compatible', provider: 'kimi' });
    fake.script({}, [unavailable()]);
    await failTimes(r, 12, 'anthropic/claude-x');
    await failTimes(r, 12, 'kimi/k2');
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('OPEN');
    expect(await r.t.api.resetResilience({ provider: 'anthropic' })).toEqual({ providers: ['anthropic'], remaining: [] });
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
    expect((await breakerOf(r.t, 'kimi')).state).toBe('OPEN');
    fake.reset();
    expect((await ask(r.client, 'anthropic/claude-x')).status).toBe(200);
    expect(fake.requests).toHaveLength(1);
    expect((await r.t.api.resetResilience({})).providers).toEqual(['anthropic', 'kimi']);
    expect((await breakerOf(r.t, 'kimi')).state).toBe('CLOSED');
    const unknown = await r.t.api.resetResilience({ provider: 'nope' }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'not_found' });
  });

  it('an OPEN breaker survives a restart (domain_circuit_breakers)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-breaker-'));
    const clock = new FakeClock();
    let rig: Rig | null = null;
    try {
      const first = await startRig({ clock, dataDir });
      await first.add('Key A', KA);
      fake.script({ key: KA }, [unavailable()]);
      await failTimes(first, 12);
      await first.stop();
      clock.advance(10_000);
      rig = await startRig({ clock, dataDir });
      const b = await breakerOf(rig.t, 'anthropic');
      expect(b).toMatchObject({ state: 'OPEN', failures: 12 });
      expect(b.halfOpenAt! - clock.now()).toBe(20_000);
      const before = fake.requests.length;
      expect((await ask(rig.client)).status).toBe(503);
      expect(fake.requests.length).toBe(before);
    } finally {
      await rig?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it.each(['SWITCHYARD_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD', 'OMNIROUTE_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD'])(
    'env %s=2 opens an API-key breaker after 2 failures',
    async (name) => {
      const r = await start({ [name]: '2' });
      await r.add('Key A', KA);
      fake.script({ key: KA }, [unavailable()]);
      await failTimes(r, 2);
      expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'OPEN', failureThreshold: 2 });
    },
  );

  it('the thresholds are editable per profile through PATCH /api/resilience', async () => {
    const r = await start();
    await r.add('Key A', KA);
    await r.t.api.patchResilience({ patch: { providerBreaker: { apikey: { degradationThreshold: 1, failureThreshold: 3, resetTimeoutMs: 5_000 } } } });
    fake.script({ key: KA }, [unavailable()]);
    await failTimes(r, 1);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('DEGRADED');
    await failTimes(r, 2);
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'OPEN', resetTimeoutMs: 5_000 });
  });

  it('rate limits never open the breaker, even twenty in a row (they rest the model instead)', async () => {
    const r = await start();
    const a = await r.add('Key A', KA);
    fake.script({ key: KA }, [rateLimited()]);
    for (let i = 0; i < 20; i++) {
      if (i > 0) r.clock.advance(3_600_000);
      await ask(r.client);
    }
    expect(keysSeen(fake)).toHaveLength(20);
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'CLOSED', failures: 0 });
    const entry = (await r.t.api.listCooldowns({})).connections.find((c) => c.connectionId === a.id)!;
    expect(entry.lockouts).toEqual([expect.objectContaining({ model: 'claude-x', origin: 'rate_limit' })]);
  });
});
