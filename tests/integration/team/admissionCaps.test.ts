// Team mode's admission against a real redis-server (issue 26): a connection's cap and a per-model
// cap hold across instances (Bottleneck's clustering), a queue pause set from a 429 on one instance
// holds the others' requests to that key until it ends, Redis killed under load costs no request
// (caps then hold per instance) and the team caps hold again once it is back, and a connection
// without caps costs Redis nothing.
import Redis from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiCompletion } from '../../support/fakeUpstream';
import type { TestEngine } from '../../support/harness';
import { hasRedisServer } from '../../support/redisServer';
import { startTeamRig, type TeamRig } from '../../support/teamRig';

const KEY = 'sk-team-admission-key-0001';
const slow = (ms: number) => (req: { model: string | null }) => ({ delayMs: ms, json: openaiCompletion(req.model ?? 'gpt-team') });

const until = async (cond: () => boolean | Promise<boolean>, what: string, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** One chat completion through an engine's proxy: its status (and error code, if any). */
async function call(e: TestEngine): Promise<{ status: number; code: string | null }> {
  const res = await fetch(`${e.proxyUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${e.clientKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-team', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
  return { status: res.status, code: body?.error?.code ?? null };
}
const ask = async (e: TestEngine) => (await call(e)).status;

/** `n` requests at once, spread over the rig's engines in turn. */
const burst = (rig: TeamRig, n: number) => Promise.all(Array.from({ length: n }, (_, i) => ask(rig.engines[i % rig.engines.length]!)));

/** A raw client on the rig's Redis, for what the engines left there. */
async function inspect<T>(rig: TeamRig, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(rig.redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

/** Every engine's limiter clients are connected to Redis (client and subscriber each). */
const limitersConnected = (rig: TeamRig) =>
  inspect(rig, async (r) => {
    const list = String(await r.call('CLIENT', 'LIST'));
    return (list.match(/name=switchyard-limits\b/g) ?? []).length >= 2 * rig.engines.length;
  }).catch(() => false);

describe.skipIf(!hasRedisServer())('team admission on a real Redis', () => {
  let rig: TeamRig | null = null;
  afterEach(async () => {
    await rig?.stop();
    rig = null;
  });

  it('holds a connection cap of 2 across three instances: 30 requests at once, never more than 2 upstream, all served', async () => {
    rig = await startTeamRig({ instances: 3, keys: [KEY], connection: { rateLimitOverrides: { maxConcurrent: 2 } } });
    rig.upstream.script({ key: KEY }, [slow(120)]);
    const statuses = await burst(rig, 30);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(rig.upstream.requestsFor({ key: KEY })).toHaveLength(30);
    expect(rig.upstream.maxInFlight).toBe(2);
    // The cap's limiter lives under the team's prefix, keyed by the key's team id (not a local id).
    const teamId = rig.engines[0]!.engine.teamIds.ofId(rig.conns[0]![0]!.id)!;
    const settings = await inspect(rig, (r) => r.hgetall(`b_sy:${rig!.team}:cap:${teamId}_settings`));
    expect(settings.maxConcurrent).toBe('2');
  });

  it('holds a per-model cap across two instances', async () => {
    rig = await startTeamRig({ instances: 2, keys: [KEY], connection: { rateLimitOverrides: { modelConcurrency: { 'gpt-team': 1 } } } });
    rig.upstream.script({ key: KEY }, [slow(100)]);
    const statuses = await burst(rig, 10);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(rig.upstream.maxInFlight).toBe(1);
  });

  it("a queue pause from a 429's Retry-After on one instance holds the other's requests to that key until it ends", async () => {
    rig = await startTeamRig({ instances: 2, keys: [KEY] });
    const [a, b] = rig.engines as [TestEngine, TestEngine];
    const bConn = rig.conns[1]![0]!.id;
    rig.upstream.script(
      { key: KEY },
      [{ status: 429, headers: { 'retry-after-ms': '1500', 'x-ratelimit-remaining': '0' }, json: { error: { type: 'rate_limit_error', message: 'slow down' } } }],
      { repeatLast: false },
    );
    const first = ask(a);
    let pausedUntil: number | null = null;
    await until(async () => {
      const view = (await b.api.getAdmission()).find((v) => v.connectionId === bConn);
      pausedUntil = view?.pausedUntil ?? null;
      return pausedUntil !== null;
    }, "B to learn of A's pause");
    expect(await ask(b)).toBe(200);
    await first;
    const [limited, ...after] = rig.upstream.requestsFor({ key: KEY });
    expect(limited).toBeDefined();
    expect(after.length).toBeGreaterThan(0);
    // Nothing reached the key while the team's pause held it.
    for (const r of after) expect(r.receivedAt).toBeGreaterThanOrEqual(pausedUntil!);
  });

  it("spaces dispatches for the team: after A's dispatch, B's first request must wait out A's spacing", async () => {
    // 5 s between dispatches, and a queue budget too short to wait that long.
    rig = await startTeamRig({ instances: 2, keys: [KEY], connection: { rateLimitOverrides: { minTimeMs: 5_000, maxWaitMs: 300 } } });
    const [a, b] = rig.engines as [TestEngine, TestEngine];
    expect(await ask(a)).toBe(200);
    // Alone, B's queue would dispatch its first request at once; the team's spacing holds it back.
    expect(await call(b)).toMatchObject({ status: 429, code: 'RATE_LIMIT_QUEUE_TIMEOUT' });
    expect(rig.upstream.requestsFor({ key: KEY })).toHaveLength(1);
  });

  it('serves every request while Redis is down (caps per instance), and holds the team cap again once it is back', async () => {
    rig = await startTeamRig({ instances: 3, keys: [KEY], connection: { rateLimitOverrides: { maxConcurrent: 2 } } });
    rig.upstream.script({ key: KEY }, [slow(150)]);
    const load = burst(rig, 30);
    await rig.upstream.waitFor(() => rig!.upstream.requestsFor({ key: KEY }).length >= 4);
    await rig.redis.kill();
    const statuses = await load;
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(rig.upstream.requestsFor({ key: KEY })).toHaveLength(30);
    // Without Redis each instance keeps its own cap.
    expect(rig.upstream.maxInFlight).toBeLessThanOrEqual(2 * rig.engines.length);

    await rig.redis.up();
    await until(() => rig!.engines.every((e) => e.engine.team.status().state === 'connected'), 'the engines to reconnect', 15_000);
    await until(() => limitersConnected(rig!), "the limiters' clients to reconnect", 15_000);
    rig.upstream.reset();
    rig.upstream.script({ key: KEY }, [slow(120)]);
    const again = await burst(rig, 30);
    expect(again.every((s) => s === 200)).toBe(true);
    expect(rig.upstream.maxInFlight).toBe(2);
  });

  it('a connection without caps and without spacing costs Redis nothing: no limiter is made', async () => {
    rig = await startTeamRig({ instances: 2, keys: [KEY] });
    const statuses = await burst(rig, 6);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(await inspect(rig, (r) => r.keys('b_*'))).toEqual([]);
  });
});
