// Team mode's core against a real redis-server (issue 26): records published by one instance
// reach another (pub/sub) and are newest-version-wins in Redis too; a record written while Redis
// is down reaches the team once it is back (reconcile); claims are granted once across instances
// and only their holder releases them; while Redis is down claims are 'local' and nothing waits.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/main/engine/clock';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { createTeam, type Team } from '../../../src/main/engine/team';
import { hasRedisServer, RedisServer } from '../../support/redisServer';

const log = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => Date.now() });
const until = async (cond: () => boolean, what: string, ms = 3000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe.skipIf(!hasRedisServer())('team core on a real Redis', () => {
  let redis: RedisServer;
  const teams: Team[] = [];
  const team = async (name = 'core') => {
    const t = await createTeam({ url: redis.url, name, clock: systemClock, log });
    teams.push(t);
    return t;
  };

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterEach(async () => {
    await Promise.all(teams.splice(0).map((t) => t.close()));
    if (!redis.running) await redis.up();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('delivers a published record to the other instance, and a later write wins everywhere', async () => {
    const a = await team();
    const b = await team();
    const seenA = new Map<string, unknown>();
    const seenB = new Map<string, unknown>();
    const ta = a.table<{ until: number }>('health', (k, v) => seenA.set(k, v));
    const tb = b.table<{ until: number }>('health', (k, v) => seenB.set(k, v));
    await a.start();
    await b.start();
    expect(a.status().state).toBe('connected');
    ta.publish('conn-1', { until: 111 }, 60_000);
    await until(() => seenB.has('conn-1'), 'b to see conn-1');
    expect(seenB.get('conn-1')).toEqual({ until: 111 });
    // The instance that wrote it is not told about its own write.
    expect(seenA.has('conn-1')).toBe(false);
    tb.publish('conn-1', null);
    await until(() => seenA.get('conn-1') === null, 'a to see the delete');
    // A third instance joining later reads the tombstone, not the old record.
    const c = await team();
    const seenC = new Map<string, unknown>();
    c.table('health', (k, v) => seenC.set(k, v));
    await c.start();
    expect(seenC.get('conn-1')).toBeNull();
  });

  it('writes what was published while Redis was down once it is back, and reads back what others wrote meanwhile', async () => {
    const a = await team('reconcile');
    const b = await team('reconcile');
    const seenA = new Map<string, unknown>();
    const seenB = new Map<string, unknown>();
    const ta = a.table<number>('t', (k, v) => seenA.set(k, v));
    b.table<number>('t', (k, v) => seenB.set(k, v));
    await a.start();
    await b.start();
    await redis.kill();
    await until(() => a.status().state === 'degraded', 'a to notice');
    ta.publish('k', 42, 60_000);
    expect(a.status().pending).toBe(1);
    await redis.up();
    await until(() => a.status().state === 'connected' && b.status().state === 'connected', 'both to reconnect', 10_000);
    await until(() => seenB.get('k') === 42, 'b to get the record written during the outage', 5_000);
    expect(a.status().pending).toBe(0);
  });

  it('grants a claim to one instance, lets only the holder release it, and answers at once while Redis is down', async () => {
    const a = await team('claims');
    const b = await team('claims');
    await a.start();
    await b.start();
    const [ra, rb] = await Promise.all([a.claim('probe:anthropic', 'A', 5_000), b.claim('probe:anthropic', 'B', 5_000)]);
    expect([ra, rb].sort()).toEqual(['granted', 'held']);
    const winner = ra === 'granted' ? 'A' : 'B';
    const loser = winner === 'A' ? 'B' : 'A';
    await (winner === 'A' ? b : a).release('probe:anthropic', loser);
    expect(await (winner === 'A' ? b : a).claim('probe:anthropic', loser, 5_000)).toBe('held');
    await (winner === 'A' ? a : b).release('probe:anthropic', winner);
    expect(await b.claim('probe:anthropic', 'B', 5_000)).toBe('granted');
    await redis.kill();
    await until(() => a.status().state === 'degraded', 'a to notice');
    // Decided here, without asking Redis: the caller applies its single-process rule.
    expect(await a.claim('probe:openai', 'A', 5_000)).toBe('local');
  });

  it('authenticates with a password in the address, and says so in words when it is wrong', async () => {
    const secured = await RedisServer.start({ password: 's3cret-pw' });
    try {
      const ok = await createTeam({ url: secured.url, name: 'auth', clock: systemClock, log });
      const bad = await createTeam({ url: `redis://:wrong@127.0.0.1:${secured.port}`, name: 'auth', clock: systemClock, log });
      teams.push(ok, bad);
      await ok.start();
      await bad.start();
      expect(ok.status().state).toBe('connected');
      expect(ok.status().address).not.toContain('s3cret-pw');
      expect(bad.status().state).toBe('degraded');
      expect(bad.status().lastError).toMatch(/credentials/);
    } finally {
      await secured.stop();
    }
  });
});

describe.skipIf(!hasRedisServer())('engines joined to a team', () => {
  it('start connected to the team, give the same key the same team id on each, and serve', async () => {
    const { startTeamRig } = await import('../../support/teamRig');
    const rig = await startTeamRig({ instances: 2, keys: ['sk-team-key-one'] });
    try {
      for (const e of rig.engines) expect(e.engine.team.status()).toMatchObject({ state: 'connected', team: rig.team });
      const [a, b] = rig.engines.map((e, i) => e.engine.teamIds.ofId(rig.conns[i]![0]!.id));
      expect(a).toMatch(/^c_/);
      expect(b).toBe(a);
      const res = await fetch(`${rig.engines[1]!.proxyUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rig.engines[1]!.clientKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-team', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
    } finally {
      await rig.stop();
    }
  });
});

describe.skipIf(!hasRedisServer())('a Redis that answers too slowly', () => {
  it('degrades the link while it is slow and finds it again when it answers, with no reconnect', async () => {
    const redis = await RedisServer.start();
    const t = await createTeam({ url: redis.url, name: 'slow', clock: systemClock, log });
    const { default: Redis } = await import('ioredis');
    const admin = new Redis(redis.url);
    try {
      await t.start();
      expect(t.status().state).toBe('connected');
      // Redis is busy for 1.5 s: a claim asked meanwhile runs past the command's time bound.
      void admin.call('DEBUG', 'SLEEP', '1.5').catch(() => {});
      await new Promise((r) => setTimeout(r, 50));
      expect(await t.claim('slow:probe', 'A', 5_000)).toBe('local');
      expect(t.status().state).toBe('degraded');
      expect(t.status().lastError).toMatch(/in time/);
      await until(() => t.status().state === 'connected', 'the link to recover', 6_000);
      expect(await t.claim('slow:probe', 'A', 5_000)).toBe('granted');
    } finally {
      admin.disconnect();
      await t.close();
      await redis.stop();
    }
  });
});

describe.skipIf(!hasRedisServer())('two writes of one record at the same version', () => {
  it('end the same on every instance and in Redis: the greater author wins the tie', async () => {
    const { FakeClock } = await import('../../support/fakeClock');
    const redis = await RedisServer.start();
    // One frozen clock: both instances stamp the same version.
    const clock = new FakeClock();
    const a = await createTeam({ url: redis.url, name: 'tie', clock, log, instanceId: 'instance-a' });
    const b = await createTeam({ url: redis.url, name: 'tie', clock, log, instanceId: 'instance-b' });
    try {
      const seen = { a: new Map<string, unknown>(), b: new Map<string, unknown>() };
      const ta = a.table<string>('t', (k, v) => seen.a.set(k, v));
      const tb = b.table<string>('t', (k, v) => seen.b.set(k, v));
      await a.start();
      await b.start();
      ta.publish('k', 'from a');
      tb.publish('k', 'from b');
      await a.settled();
      await b.settled();
      // b's write wins everywhere: a applies it, b keeps it, Redis holds it.
      await until(() => seen.a.get('k') === 'from b', 'a to take b’s write');
      expect(seen.b.has('k')).toBe(false);
      const { default: Redis } = await import('ioredis');
      const admin = new Redis(redis.url);
      const stored = JSON.parse((await admin.get('sy:tie:t:k'))!) as { v: string; by: string };
      admin.disconnect();
      expect(stored).toMatchObject({ v: 'from b', by: 'instance-b' });
    } finally {
      await a.close();
      await b.close();
      await redis.stop();
    }
  });
});
