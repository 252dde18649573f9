// Team mode for the resilience layers against a real redis-server (issue 26): engines of one team
// share what they learn about a key (a 429's cooldown, a model lockout), a provider's breaker and
// its single half-open probe, and an operator's clear; while Redis is down they serve on their own
// state and what they learnt meanwhile reaches the others once it is back.
import { afterEach, describe, expect, it } from 'vitest';
import { ONE_ANSWER_ENV, type TestEngine } from '../../support/harness';
import { hasRedisServer } from '../../support/redisServer';
import { startTeamRig, type TeamRig } from '../../support/teamRig';

const K1 = 'sk-team-key-one-1111';
const K2 = 'sk-team-key-two-2222';

const until = async (cond: () => boolean | Promise<boolean>, what: string, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

async function ask(e: TestEngine, model = 'gpt-team'): Promise<number> {
  const res = await fetch(`${e.proxyUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${e.clientKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** A 429 that speaks for the whole key (x-ratelimit-remaining: 0) and asks for a minute. */
const keyRateLimited = () => ({
  status: 429,
  headers: { 'retry-after': '60', 'x-ratelimit-remaining': '0' },
  json: { error: { type: 'rate_limit_error', message: 'Rate limit reached for requests' } },
});

const rateLimitedFor = (seconds: number) => ({ ...keyRateLimited(), headers: { 'retry-after': String(seconds), 'x-ratelimit-remaining': '0' } });

/** A 429 for one model (no account-wide evidence): only that model on that key rests. */
const modelRateLimited = () => ({
  status: 429,
  headers: { 'retry-after': '60' },
  json: { error: { type: 'rate_limit_error', message: 'Rate limit reached for gpt-team on requests per min' } },
});

const unavailable = (delayMs = 0) => ({ status: 503, delayMs, json: { error: { type: 'server_error', message: 'overloaded' } } });

/** Sends requests from `e` until the upstream has seen one more call with `key` (each is served). */
async function hitKey(rig: TeamRig, e: TestEngine, key: string) {
  const n = rig.upstream.requestsFor({ key }).length + 1;
  for (let i = 0; i < 40 && rig.upstream.requestsFor({ key }).length < n; i++) expect(await ask(e)).toBe(200);
  expect(rig.upstream.requestsFor({ key })).toHaveLength(n);
}

async function cooling(e: TestEngine, connectionId: string): Promise<boolean> {
  const v = await e.api.listCooldowns({});
  const c = v.connections.find((x) => x.connectionId === connectionId);
  return c?.status === 'cooling' && (c.rateLimitedUntil ?? 0) > Date.now() + 30_000;
}

describe.skipIf(!hasRedisServer())('resilience shared across a team', () => {
  let rig: TeamRig | null = null;
  afterEach(async () => {
    await rig?.stop();
    rig = null;
  });

  for (const instances of [2, 3]) {
    it(`a 429 with Retry-After on one instance cools the key on the others (${instances} instances): they spend no call on it`, async () => {
      rig = await startTeamRig({ instances, keys: [K1, K2], env: ONE_ANSWER_ENV });
      const [a, ...others] = rig.engines;
      rig.upstream.script({ key: K1 }, [keyRateLimited()]);
      await hitKey(rig, a!, K1);
      for (const [i, e] of others.entries()) {
        await until(() => cooling(e, rig!.conns[i + 1]![0]!.id), `instance ${i + 1} to show key 1 cooling`);
        const v = await e.api.listCooldowns({});
        expect(v.connections.find((x) => x.connectionId === rig!.conns[i + 1]![0]!.id)).toMatchObject({ status: 'cooling', lastErrorType: 'rate_limit_exceeded' });
      }
      for (const e of others) for (let n = 0; n < 6; n++) expect(await ask(e)).toBe(200);
      expect(rig.upstream.requestsFor({ key: K1 })).toHaveLength(1);
      expect(rig.upstream.requestsFor({ key: K2 }).length).toBeGreaterThanOrEqual(6 * others.length);
    });
  }

  it('claims a half-open probe once: concurrent requests from three instances send exactly one probe', async () => {
    rig = await startTeamRig({
      instances: 3,
      keys: [K1, K2],
      env: {
        ...ONE_ANSWER_ENV,
        SWITCHYARD_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD: '1',
        SWITCHYARD_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD: '2',
        SWITCHYARD_CIRCUIT_BREAKER_API_KEY_RESET_TIMEOUT_MS: '1500',
      },
    });
    const [a] = rig.engines;
    rig.upstream.script({ key: K1 }, [unavailable()]);
    rig.upstream.script({ key: K2 }, [unavailable()]);
    // One request fails on both keys: the breaker opens on A, and through the team on B and C.
    expect(await ask(a!)).toBe(503);
    for (const e of rig.engines) {
      await until(async () => (await e.api.listBreakers()).find((b) => b.provider === 'openai')?.state === 'OPEN', 'the breaker to be open everywhere');
    }
    const before = rig.upstream.requests.length;
    expect(await ask(rig.engines[2]!)).toBe(503);
    expect(rig.upstream.requests.length).toBe(before);
    for (const e of rig.engines) {
      await until(async () => (await e.api.listBreakers()).find((b) => b.provider === 'openai')?.state === 'HALF_OPEN', 'half-open everywhere');
    }
    // The probe is slow to answer (and fails): every other request meets it in flight.
    rig.upstream.script({ key: K1 }, [unavailable(1_000)]);
    rig.upstream.script({ key: K2 }, [unavailable(1_000)]);
    const start = rig.upstream.requests.length;
    const answers = await Promise.all(rig.engines.flatMap((e) => [ask(e), ask(e), ask(e)]));
    expect(answers.every((s) => s === 503)).toBe(true);
    expect(rig.upstream.requests.length - start).toBe(1);
    for (const e of rig.engines) {
      await until(async () => (await e.api.listBreakers()).find((b) => b.provider === 'openai')?.state === 'OPEN', 'the failed probe to reopen it everywhere');
    }
  });

  it('a model lockout learnt on one instance keeps that model off that key on another', async () => {
    rig = await startTeamRig({ instances: 2, keys: [K1, K2], env: ONE_ANSWER_ENV });
    const [a, b] = rig.engines;
    rig.upstream.script({ key: K1 }, [modelRateLimited()]);
    await hitKey(rig, a!, K1);
    const bKey1 = rig.conns[1]![0]!.id;
    await until(async () => (await b!.api.listModelCooldowns()).lockouts.some((l) => l.connectionId === bKey1 && l.model === 'gpt-team'), 'B to hold the lockout');
    const v = await b!.api.listCooldowns({});
    const entry = v.connections.find((x) => x.connectionId === bKey1)!;
    // Only the model rests: the key itself is not cooling.
    expect(entry.status).toBe('active');
    expect(entry.lockouts).toEqual([expect.objectContaining({ model: 'gpt-team', origin: 'rate_limit' })]);
    for (let n = 0; n < 6; n++) expect(await ask(b!)).toBe(200);
    expect(rig.upstream.requestsFor({ key: K1 })).toHaveLength(1);
  });

  it('an operator clearing a cooldown on one instance lifts it on the others', async () => {
    // Without rate-limit protection: the Retry-After pauses no request queue (admission's own state), only the key cools.
    rig = await startTeamRig({ instances: 2, keys: [K1, K2], env: ONE_ANSWER_ENV, connection: { rateLimitProtectionMode: 'off' } });
    const [a, b] = rig.engines;
    rig.upstream.script({ key: K1 }, [keyRateLimited(), () => undefined]);
    await hitKey(rig, a!, K1);
    await until(() => cooling(b!, rig!.conns[1]![0]!.id), 'B to show key 1 cooling');
    const res = await b!.api.clearCooldowns({ connectionIds: [rig.conns[1]![0]!.id] });
    expect(res.cleared).toEqual([rig.conns[1]![0]!.id]);
    const aKey1 = rig.conns[0]![0]!.id;
    await until(async () => (await a!.api.listCooldowns({})).connections.find((x) => x.connectionId === aKey1)?.status === 'active', 'A to see key 1 cleared');
    // A calls key 1 again: with key 2 failing, a request fails over to it and is served.
    rig.upstream.script({ key: K2 }, [unavailable()]);
    expect(await ask(a!)).toBe(200);
    expect(rig.upstream.requestsFor({ key: K1 })).toHaveLength(2);
  });

  it('keeps serving on local state while Redis is down, and shares what it learnt meanwhile once Redis is back', async () => {
    rig = await startTeamRig({ instances: 2, keys: [K1, K2], env: ONE_ANSWER_ENV });
    const [a, b] = rig.engines;
    for (const e of rig.engines) expect(await ask(e)).toBe(200);
    await rig.redis.kill();
    await until(() => a!.engine.team.status().state === 'degraded' && b!.engine.team.status().state === 'degraded', 'both to notice Redis is gone');
    // Key 1 is rate-limited: two minutes for the first caller (A), half a minute for any later one.
    rig.upstream.script({ key: K1 }, [rateLimitedFor(120), rateLimitedFor(30)]);
    await hitKey(rig, a!, K1);
    const aKey1 = (await a!.api.listCooldowns({})).connections.find((x) => x.connectionId === rig!.conns[0]![0]!.id)!;
    expect(aKey1.remainingMs).toBeGreaterThan(100_000);
    // Both keep serving on what they know (B may meet key 1's limit itself: it fails over).
    for (let n = 0; n < 4; n++) {
      expect(await ask(a!)).toBe(200);
      expect(await ask(b!)).toBe(200);
    }
    expect(a!.engine.team.status().pending).toBeGreaterThan(0);
    await rig.redis.up();
    const bKey1 = rig.conns[1]![0]!.id;
    // B holds A's two minutes (not only what it may have learnt alone).
    await until(
      async () => ((await b!.api.listCooldowns({})).connections.find((x) => x.connectionId === bKey1)?.remainingMs ?? 0) > 90_000,
      'B to learn the cooldown once Redis is back',
      15_000,
    );
    const calls = rig.upstream.requestsFor({ key: K1 }).length;
    for (let n = 0; n < 6; n++) expect(await ask(b!)).toBe(200);
    expect(rig.upstream.requestsFor({ key: K1 })).toHaveLength(calls);
  });
});
