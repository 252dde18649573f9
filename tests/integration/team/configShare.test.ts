// Team mode's configuration sharing against a real redis-server (issue 26): one engine publishes,
// another follows. The follower gets the publisher's connections (under the same ids), combos,
// model mappings and team settings, serves requests with them (the secret decrypts with the team
// key), refuses edits of what the team manages naming the publisher, follows changes and removals,
// and keeps its last good configuration (saying why) when its key is not the publisher's. No secret
// is ever in Redis in the clear.
import Redis from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView } from '../../../src/shared/model';
import type { TeamView } from '../../../src/shared/team';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { hasRedisServer, RedisServer } from '../../support/redisServer';

const until = async (cond: () => Promise<boolean> | boolean, what: string, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const SECRET_ONE = 'sk-team-secret-one-0123456789';
const SECRET_TWO = 'sk-team-secret-two-9876543210';
const PROXY_PASSWORD = 'proxy-pw-7f3e2a';

let teams = 0;

describe.skipIf(!hasRedisServer())('configuration sharing through a real Redis', () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  const engines: TestEngine[] = [];

  const engine = async (team: string, instanceId: string) => {
    const e = await startTestEngine({ engine: { team: { redisUrl: redis.url, name: team, instanceId } } });
    engines.push(e);
    return e;
  };

  /** A publisher "Alice" with two connections, a combo, a mapping and two saved settings; a follower "Bob" with Alice's key. */
  const publisherAndFollower = async () => {
    const team = `config-${process.pid}-${++teams}`;
    const a = await engine(team, 'A');
    const b = await engine(team, 'B');
    const one = await a.addConnection({ name: 'Team key one', kind: 'openai-compatible', provider: 'openai', baseUrl: upstream.openaiUrl, secret: SECRET_ONE, models: ['gpt-team'] });
    const two = await a.addConnection({
      name: 'Team key two',
      kind: 'openai-compatible',
      provider: 'openai',
      baseUrl: upstream.openaiUrl,
      secret: SECRET_TWO,
      models: ['gpt-team'],
      priority: 2,
    });
    const combo = (await a.api.createCombo({ name: 'team-pool', targets: [{ connectionId: one.id, model: 'gpt-team' }, { connectionId: two.id, model: 'gpt-team' }] })).combo;
    await a.api.createModelMapping({ pattern: 'pool-*', combo: combo.id });
    await a.api.patchSettings({ patch: { 'proxy.maxAttempts': 3, 'logs.retentionDays': 3 } });
    await a.api.updateTeamSettings({ patch: { role: 'publish', displayName: 'Alice' } });
    const key = (await a.api.revealTeamKey()).key;
    const own = await b.addConnection({ name: "Bob's own", kind: 'openai-compatible', provider: 'local', baseUrl: upstream.openaiUrl, secret: 'sk-bob-own-key-123456', models: ['bob-model'] });
    await b.api.updateTeamSettings({ patch: { role: 'follow', key, displayName: 'Bob' } });
    await until(async () => (await b.api.getTeam()).config.state === 'following', 'Bob to follow');
    return { a, b, one, two, combo, key, own, team };
  };

  const chat = (e: TestEngine, model: string) =>
    fetch(`${e.proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${e.clientKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });

  beforeAll(async () => {
    redis = await RedisServer.start();
    upstream = await FakeUpstream.start();
  });
  afterEach(async () => {
    await Promise.allSettled(engines.splice(0).map((e) => e.stop()));
    upstream.reset();
    if (!redis.running) await redis.up();
  });
  afterAll(async () => {
    await upstream?.close();
    await redis?.stop();
  });

  it("gives the follower the publisher's connections, combos, mappings and settings, which serve requests with the team's secret", async () => {
    const { a, b, one, two, combo, own } = await publisherAndFollower();
    const conns = await b.api.listConnections();
    const byId = new Map(conns.map((c) => [c.id, c]));
    expect(byId.get(one.id)).toMatchObject({ name: 'Team key one', baseUrl: upstream.openaiUrl, secret: { set: true } });
    expect(byId.get(two.id)).toMatchObject({ name: 'Team key two', priority: 2 });
    expect(byId.get(own.id)?.name).toBe("Bob's own");
    expect(JSON.stringify(conns)).not.toContain(SECRET_ONE);
    const combos = await b.api.listCombos();
    expect(combos.map((c) => [c.id, c.name])).toEqual([[combo.id, 'team-pool']]);
    expect(combos[0]!.targets.map((t) => t.connectionId)).toEqual([one.id, two.id]);
    expect((await b.api.listModelMappings()).map((m) => [m.pattern, m.comboId])).toEqual([['pool-*', combo.id]]);
    const settings = (await b.api.getSettings()).settings;
    expect(settings.find((s) => s.key === 'proxy.maxAttempts')).toMatchObject({ value: 3, source: 'persisted' });
    // How long each workstation keeps its own request log is its own business.
    expect(settings.find((s) => s.key === 'logs.retentionDays')?.source).toBe('default');

    const view = await b.api.getTeam();
    expect(view.config).toMatchObject({ state: 'following', publisher: { name: 'Alice', instanceId: 'A' } });
    expect(view.managed).toMatchObject({ owner: 'Alice', combos: [combo.id] });
    expect(view.managed.connections.sort()).toEqual([one.id, two.id].sort());
    expect(view.managed.settings).toContain('proxy.maxAttempts');
    expect(view.managed.settings).not.toContain('proxy.port');

    // Bob's agent, Bob's own client key, the team's connection: the upstream sees the team's secret.
    const res = await chat(b, 'pool-anything');
    expect(res.status).toBe(200);
    expect(upstream.requestsFor({ key: SECRET_ONE })).toHaveLength(1);
    expect((await a.api.getTeam()).config).toMatchObject({ state: 'published', publisher: { name: 'Alice' } });
  });

  it('refuses an edit of what the team manages on the follower, naming the publisher, and lets its own additions be', async () => {
    const { b, one, combo, own } = await publisherAndFollower();
    const refusal = { code: 'managed_by_team', message: expect.stringContaining('published by Alice') };
    await expect(b.api.updateConnection({ id: one.id, patch: { name: 'mine now' } })).rejects.toMatchObject(refusal);
    await expect(b.api.deleteConnection({ id: one.id })).rejects.toMatchObject(refusal);
    await expect(b.api.setRateLimitProtection({ connectionId: one.id, mode: 'on' })).rejects.toMatchObject(refusal);
    await expect(b.api.updateCombo({ id: 'team-pool', patch: { strategy: 'round-robin' } })).rejects.toMatchObject(refusal);
    await expect(b.api.deleteCombo({ id: combo.id })).rejects.toMatchObject(refusal);
    const mapping = (await b.api.listModelMappings())[0]!;
    await expect(b.api.deleteModelMapping({ id: mapping.id })).rejects.toMatchObject(refusal);
    await expect(b.api.patchSettings({ patch: { 'proxy.maxAttempts': 5 } })).rejects.toMatchObject(refusal);
    // This workstation's own things stay editable.
    await b.api.patchSettings({ patch: { 'logs.retentionDays': 2 } });
    expect((await b.api.updateConnection({ id: own.id, patch: { name: "Bob's renamed" } })).name).toBe("Bob's renamed");
    // Nothing was changed by the refused calls.
    expect((await b.api.getConnection({ id: one.id })).name).toBe('Team key one');
  });

  it("brings a change made on the publisher to the follower, and removes there what the publisher removed", async () => {
    const { a, b, one, two, combo } = await publisherAndFollower();
    await a.api.updateConnection({ id: one.id, patch: { name: 'Team key one (renamed)', models: ['gpt-team', 'gpt-new'] } });
    await until(async () => (await b.api.getConnection({ id: one.id })).name === 'Team key one (renamed)', 'the rename to reach Bob');
    expect((await b.api.getConnection({ id: one.id })).models).toEqual(['gpt-team', 'gpt-new']);

    await a.api.updateCombo({ id: combo.id, patch: { targets: [{ connectionId: one.id, model: 'gpt-team' }] } });
    await a.api.deleteConnection({ id: two.id });
    await until(async () => !(await b.api.listConnections()).some((c) => c.id === two.id), 'the removal to reach Bob');
    expect((await b.api.getCombo({ id: combo.id })).targets.map((t) => t.connectionId)).toEqual([one.id]);
    expect((await b.api.getTeam()).managed.connections).toEqual([one.id]);

    // A new secret reaches the follower too, and is what its requests carry.
    const fresh = 'sk-team-rotated-key-5555555';
    await a.api.updateConnection({ id: one.id, patch: { secret: fresh } });
    await until(async () => (await b.api.getConnection({ id: one.id })).secret.masked?.endsWith('5555') === true, 'the new secret to reach Bob');
    upstream.reset();
    expect((await chat(b, 'team-pool')).status).toBe(200);
    expect(upstream.requestsFor({ key: fresh })).toHaveLength(1);
  });

  it('never puts a secret in the clear into Redis, nor the key into any answer but its reveal', async () => {
    const { a, b, one, key } = await publisherAndFollower();
    await a.api.updateConnection({ id: one.id, patch: { outboundProxy: `http://user:${PROXY_PASSWORD}@127.0.0.1:9` } });
    await until(async () => (await b.api.getConnection({ id: one.id })).outboundProxy !== null, 'the proxy to reach Bob');
    const client = new Redis(redis.url);
    try {
      const values: string[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'COUNT', 500);
        cursor = next;
        for (const k of keys) {
          const type = await client.type(k);
          if (type === 'string') values.push((await client.get(k)) ?? '');
          else if (type === 'hash') values.push(JSON.stringify(await client.hgetall(k)));
          else if (type === 'list') values.push(JSON.stringify(await client.lrange(k, 0, -1)));
          else if (type === 'set') values.push(JSON.stringify(await client.smembers(k)));
          else if (type === 'zset') values.push(JSON.stringify(await client.zrange(k, 0, -1)));
        }
      } while (cursor !== '0');
      const all = values.join('\n');
      expect(all).toContain('Team key one');
      for (const secret of [SECRET_ONE, SECRET_TWO, PROXY_PASSWORD, key, 'sk-bob-own-key-123456']) expect(all).not.toContain(secret);
    } finally {
      client.disconnect();
    }
    const views = JSON.stringify([await a.api.getTeam(), await b.api.getTeam(), await b.api.listConnections()]);
    for (const secret of [SECRET_ONE, PROXY_PASSWORD, key]) expect(views).not.toContain(secret);
  });

  it('keeps its last good configuration and says why when its team key is not the publisher’s', async () => {
    const { a, b, one } = await publisherAndFollower();
    // Bob's key is replaced by another one: what Alice publishes next cannot be opened here.
    await b.api.generateTeamKey();
    await a.api.updateConnection({ id: one.id, patch: { name: 'Renamed after the key changed' } });
    let view: TeamView | null = null;
    await until(async () => (view = await b.api.getTeam()).config.state === 'failed', 'Bob to notice');
    expect(view!.config.message).toMatch(/team key is not the one Alice published with/);
    expect((await b.api.getConnection({ id: one.id })).name).toBe('Team key one');
    expect(view!.managed.connections).toContain(one.id);
    expect((await chat(b, 'team-pool')).status).toBe(200);
    const feed = await b.api.listNotifications();
    expect(feed.items.find((n) => n.kind === 'team-config')?.body).toMatch(/team key/);
    // Pasting the right key applies what was published meanwhile.
    await b.api.updateTeamSettings({ patch: { key: (await a.api.revealTeamKey()).key } });
    await until(async () => (await b.api.getConnection({ id: one.id })).name === 'Renamed after the key changed', 'the right key to apply it');
    expect((await b.api.getTeam()).config.state).toBe('following');
  });

  it('re-reads the publication when the follower reconnects', async () => {
    const { a, b, one } = await publisherAndFollower();
    await redis.kill();
    await until(async () => (await b.api.getTeam()).status.state === 'degraded', 'Bob to notice Redis is gone');
    // Changed while Redis is down: kept by Alice, written when Redis is back, read by Bob on reconnect.
    await a.api.updateConnection({ id: one.id, patch: { name: 'Renamed during the outage' } });
    await until(async () => (await a.api.getTeam()).status.pendingWrites > 0, 'the publication to wait for Redis');
    await redis.up();
    await until(async () => (await b.api.getConnection({ id: one.id })).name === 'Renamed during the outage', 'Bob to catch up', 15_000);
  });

  it('publishes again after an outage, so a Redis that came back empty still has the configuration for a newcomer', async () => {
    const { a, one, key, team } = await publisherAndFollower();
    await redis.kill();
    await until(async () => (await a.api.getTeam()).status.state === 'degraded', 'Alice to notice Redis is gone');
    await redis.up();
    await until(async () => (await a.api.getTeam()).status.state === 'connected', 'Alice to reconnect', 15_000);
    await a.engine.team.settled();
    const c = await startTestEngine({ env: { SWITCHYARD_TEAM_KEY: key, SWITCHYARD_TEAM_ROLE: 'follow' }, engine: { team: { redisUrl: redis.url, name: team, instanceId: 'C' } } });
    engines.push(c);
    await until(async () => (await c.api.getTeam()).config.state === 'following', 'the newcomer to follow');
    expect((await c.api.getConnection({ id: one.id })).name).toBe('Team key one');
  });

  it('shows the link degraded when Redis dies and connected when it is back, with a notification each way', async () => {
    const team = `link-${process.pid}-${++teams}`;
    const a = await engine(team, 'A');
    expect((await a.api.getTeam()).status).toMatchObject({ state: 'connected', reason: null });
    const pushes: TeamView[] = [];
    const off = a.api.on('team', (v) => pushes.push(v));
    try {
      await redis.kill();
      await until(() => pushes.some((v) => v.status.state === 'degraded'), 'a degraded push');
      const degraded = await a.api.getTeam();
      expect(degraded.status.state).toBe('degraded');
      expect(degraded.status.since).toEqual(expect.any(Number));
      expect(degraded.status.reason).toMatch(/Redis|connection/);
      await redis.up();
      await until(() => pushes.at(-1)?.status.state === 'connected', 'a connected push', 15_000);
      const items = (await a.api.listNotifications()).items.filter((n) => n.kind === 'team-link');
      expect(items.map((n) => n.title)).toEqual([expect.stringMatching(/^Back in touch with the team/), 'Lost the link to the team']);
      expect(items[1]!.severity).toBe('warning');
    } finally {
      off();
    }
  });

  it('is off without an address: the view says so and publishing is refused in words', async () => {
    const e = await startTestEngine();
    engines.push(e);
    const view = await e.api.getTeam();
    expect(view).toMatchObject({ enabled: false, status: { state: 'off' }, config: { state: 'off' }, settings: { address: { value: null, source: 'default' } } });
    await expect(e.api.publishTeamConfig()).rejects.toMatchObject({ code: 'team_off' });
    // Saved here, it applies at the next start (and the view says so).
    const saved = await e.api.updateTeamSettings({ patch: { redisUrl: 'redis://:hunter22@127.0.0.1:6399', name: 'acme' } });
    expect(saved.settings.address).toMatchObject({ value: 'redis://:***@127.0.0.1:6399', source: 'saved' });
    expect(saved.settings.restartNeeded).toMatch(/Restart Switchyard/);
    expect(JSON.stringify(saved)).not.toContain('hunter22');
    await expect(e.api.updateTeamSettings({ patch: { redisUrl: 'http://nope' } })).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/redis:\/\//) });
    expect(e.logs.lines.join('\n')).not.toContain('hunter22');
  });

  it('gives a follower that starts later the configuration at once, under the same ids', async () => {
    const team = `late-${process.pid}-${++teams}`;
    const a = await engine(team, 'A');
    const one: ConnectionView = await a.addConnection({ name: 'Early key', kind: 'openai-compatible', provider: 'openai', baseUrl: upstream.openaiUrl, secret: SECRET_ONE, models: ['gpt-team'] });
    await a.api.updateTeamSettings({ patch: { role: 'publish', displayName: 'Alice' } });
    const key = (await a.api.revealTeamKey()).key;
    await a.engine.team.settled();
    const b = await startTestEngine({ env: { SWITCHYARD_TEAM_KEY: key, SWITCHYARD_TEAM_ROLE: 'follow' }, engine: { team: { redisUrl: redis.url, name: team, instanceId: 'B' } } });
    engines.push(b);
    // Applied while joining the team, before the proxy serves.
    expect((await b.api.getConnection({ id: one.id })).name).toBe('Early key');
    const view = await b.api.getTeam();
    expect(view.settings.key).toMatchObject({ set: true, source: 'env', setBy: 'SWITCHYARD_TEAM_KEY' });
    expect(view.settings.role).toMatchObject({ value: 'follow', source: 'env' });
    await expect(b.api.updateTeamSettings({ patch: { role: 'off' } })).rejects.toMatchObject({ code: 'set_elsewhere' });
  });
});
