// Session pins across a team (issue 26) against a real redis-server: a session pinned on one
// instance is routed the same way on another (same client key, same session; each instance names
// the key and the connection by its own ids); the first success wins when two instances serve a
// new session at once; a pin moved on one instance is followed on the other; following a pin costs
// no Redis command; and while Redis is down pinned requests are served, the books agreeing again
// when it returns.
import Redis from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { chat, startSessionsRig, until, type SessionsRig } from './leasesRig';
import { hasRedisServer } from '../../support/redisServer';

const KEYS = ['sk-pin-team-one-00001', 'sk-pin-team-two-00002', 'sk-pin-team-three-003'];

describe.skipIf(!hasRedisServer())('session pins across a team', () => {
  let rig: SessionsRig | null = null;
  afterEach(async () => {
    await rig?.stop();
    rig = null;
  });

  const session = (id: string) => ({ 'x-session-id': id });
  /** The API key (index) that served a request on engine i. */
  const account = (r: SessionsRig, i: number, selected: string | null) => r.keyIndexOf(i, selected);
  const pinned = async (r: SessionsRig, i: number) => {
    const view = await r.engines[i]!.api.listSessions();
    return new Map(view.sessions.map((s) => [s.session, r.keyIndexOf(i, s.connectionId)]));
  };

  it('a session pinned on A is followed on B (same client key and session, other local ids)', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS });
    const r = rig;
    const [A, B] = r.engines as [SessionsRig['engines'][0], SessionsRig['engines'][0]];
    const sessions = ['s-1', 's-2', 's-3', 's-4', 's-5', 's-6'];
    const where = new Map<string, number>();
    for (const s of sessions) {
      const served = await chat(A, r.clientKey, session(s));
      expect(served.status).toBe(200);
      where.set(s, account(r, 0, served.selected));
    }
    // Round-robin spread them over the accounts on A.
    expect(new Set(where.values()).size).toBeGreaterThan(1);
    await until(async () => (await pinned(r, 1)).size === sessions.length, 'B to hold the six pins');
    expect(await pinned(r, 1)).toEqual(where);
    for (const s of sessions) {
      for (let n = 0; n < 2; n++) {
        const served = await chat(B, r.clientKey, session(s));
        expect(served.status).toBe(200);
        expect(account(r, 1, served.selected)).toBe(where.get(s));
      }
    }
    // Another client key with the same session id is another session: B's own key is the shared one, so a new key on B starts fresh.
    const { secret } = await B.api.createClientKey({ name: 'Other' });
    const other = await chat(B, secret, session('s-1'));
    expect(other.status).toBe(200);
    expect((await B.api.listSessions()).sessions.filter((x) => x.session === 's-1')).toHaveLength(2);
  });

  it('two instances serving a new session at once agree on one pin (the first success wins)', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS });
    const r = rig;
    const [A, B] = r.engines as [SessionsRig['engines'][0], SessionsRig['engines'][0]];
    // Different first picks on each instance: A's round-robin is moved on by one request.
    await chat(A, r.clientKey);
    const [a, b] = await Promise.all([chat(A, r.clientKey, session('race')), chat(B, r.clientKey, session('race'))]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    await until(async () => {
      const [pa, pb] = [(await pinned(r, 0)).get('race'), (await pinned(r, 1)).get('race')];
      return pa !== undefined && pa === pb;
    }, 'both instances to hold the same pin');
    const agreed = (await pinned(r, 0)).get('race')!;
    expect([account(r, 0, a.selected), account(r, 1, b.selected)]).toContain(agreed);
    for (const [i, e] of r.engines.entries()) expect(account(r, i, (await chat(e, r.clientKey, session('race'))).selected)).toBe(agreed);
  });

  it('a pin moved on B (its account failed there) is followed on A', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS, env: { SWITCHYARD_SAME_TARGET_RETRIES: '0' } });
    const r = rig;
    const [A, B] = r.engines as [SessionsRig['engines'][0], SessionsRig['engines'][0]];
    const first = await chat(A, r.clientKey, session('mover'));
    const from = account(r, 0, first.selected);
    await until(async () => (await pinned(r, 1)).get('mover') === from, 'B to hold the pin');
    // The pinned account fails once on B: B fails over and the pin moves to where it was served.
    r.upstream.script({ key: KEYS[from] }, [{ status: 500, json: { error: { message: 'boom' } } }]);
    const moved = await chat(B, r.clientKey, session('mover'));
    expect(moved.status).toBe(200);
    const to = account(r, 1, moved.selected);
    expect(to).not.toBe(from);
    await until(async () => (await pinned(r, 0)).get('mover') === to, 'A to hear the pin moved');
    expect(account(r, 0, (await chat(A, r.clientKey, session('mover'))).selected)).toBe(to);
  });

  it('following a pin costs no Redis command, nor does a request without a session or lease', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS });
    const r = rig;
    const [A] = r.engines as [SessionsRig['engines'][0]];
    await chat(A, r.clientKey, session('quiet'));
    await until(async () => (await pinned(r, 1)).has('quiet'), 'B to hold the pin');
    const probe = new Redis(r.redis.url);
    try {
      const calls = async () => {
        const info = await probe.info('commandstats');
        return [...info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].filter(([, name]) => name !== 'info').reduce((n, m) => n + Number(m[2]), 0);
      };
      // Every key's first success is a change the team hears of once (untested -> active): served
      // on both instances before counting, so what is counted is the steady state.
      for (let n = 0; n < 2 * KEYS.length; n++) for (const e of r.engines) expect((await chat(e, r.clientKey)).status).toBe(200);
      await Promise.all(r.engines.map((e) => e.engine.team.settled()));
      const before = await calls();
      for (let n = 0; n < 10; n++) {
        expect((await chat(A, r.clientKey, session('quiet'))).status).toBe(200);
        expect((await chat(r.engines[1]!, r.clientKey, session('quiet'))).status).toBe(200);
        expect((await chat(A, r.clientKey)).status).toBe(200);
      }
      expect(await calls()).toBe(before);
    } finally {
      probe.disconnect();
    }
  });

  it('Redis killed mid-run: pinned requests keep being served; when it returns the books agree', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS });
    const r = rig;
    const [A, B] = r.engines as [SessionsRig['engines'][0], SessionsRig['engines'][0]];
    const before = await chat(A, r.clientKey, session('old'));
    const old = account(r, 0, before.selected);
    await until(async () => (await pinned(r, 1)).get('old') === old, 'B to hold the pin');

    await r.redis.kill();
    await until(() => A.engine.team.status().state === 'degraded' && B.engine.team.status().state === 'degraded', 'both to notice');
    for (const [i, e] of r.engines.entries()) {
      const served = await chat(e, r.clientKey, session('old'));
      expect(served.status).toBe(200);
      expect(account(r, i, served.selected)).toBe(old);
    }
    // A session that starts during the outage is pinned on A only, for now.
    const fresh = await chat(A, r.clientKey, session('during'));
    const during = account(r, 0, fresh.selected);
    expect((await pinned(r, 1)).has('during')).toBe(false);

    await r.redis.up();
    await until(async () => (await pinned(r, 1)).get('during') === during, 'B to get the pin made during the outage', 15_000);
    await until(async () => JSON.stringify([...(await pinned(r, 0))].sort()) === JSON.stringify([...(await pinned(r, 1))].sort()), 'both books to agree');
    expect(account(r, 1, (await chat(B, r.clientKey, session('during'))).selected)).toBe(during);
    expect(account(r, 1, (await chat(B, r.clientKey, session('old'))).selected)).toBe(old);
  });
});
