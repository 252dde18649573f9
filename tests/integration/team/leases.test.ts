// Exclusive leases across a team (issue 26) against a real redis-server: instances racing for one
// pool grant each account to exactly one owner; a lease acquired on one instance is honoured,
// renewed and released on another, and a stale generation never reaches the provider there; while
// Redis is down leases keep working on each instance's book, and when it returns (empty) the books
// agree again, a connection leased twice during the outage keeping its earlier grant.
import Redis from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { chat, startSessionsRig, until, type SessionsRig } from './leasesRig';
import { hasRedisServer } from '../../support/redisServer';
import { leaseCall, leaseHeaders } from '../affinity/support';

const KEYS = ['sk-lease-team-one-0001', 'sk-lease-team-two-0002'];

describe.skipIf(!hasRedisServer())('exclusive leases across a team', () => {
  let rig: SessionsRig | null = null;
  afterEach(async () => {
    await rig?.stop();
    rig = null;
  });

  /** Gives every engine's client key the lease scope, with all its connections as the pool. */
  const managed = async (r: SessionsRig) => {
    for (const [i, e] of r.engines.entries()) {
      const [k] = await e.api.listClientKeys();
      await e.api.updateClientKey({ id: k!.id, patch: { scopes: ['lease:exclusive'], allowedConnections: r.conns[i]!.map((c) => c.id) } });
    }
  };
  const lease = (r: SessionsRig, i: number, body: unknown) => leaseCall(r.engines[i]!.proxyUrl, r.clientKey, body);
  /** The API key (index) a lease answer of engine i holds. */
  const keyOf = (r: SessionsRig, i: number, connectionId: string) => r.keyIndexOf(i, connectionId);
  const leaseIds = async (r: SessionsRig, i: number) => (await r.engines[i]!.api.listLeases()).leases.map((l) => l.id).sort();

  it('three instances racing for one pool: each account goes to exactly one owner, the others are refused', async () => {
    rig = await startSessionsRig({ instances: 3, keys: KEYS });
    await managed(rig);
    const r = rig;
    // Six owners (two per instance) at once, for a pool of two accounts.
    const answers = await Promise.all([0, 0, 1, 1, 2, 2].map((i) => lease(r, i, { action: 'acquire' }).then((a) => ({ i, a }))));
    const granted = answers.filter((x) => x.a.status === 200);
    const refused = answers.filter((x) => x.a.status !== 200);
    expect(granted).toHaveLength(2);
    const accounts = granted.map((x) => keyOf(r, x.i, x.a.body.lease.connectionId));
    expect(new Set(accounts)).toEqual(new Set([0, 1]));
    for (const x of refused) {
      expect(x.a.status).toBe(429);
      expect(x.a.body.error.code).toBe('lease-capacity-unavailable');
    }
    // Every instance's book ends up with the same two leases.
    const ids = granted.map((x) => x.a.body.lease.id).sort();
    for (let i = 0; i < 3; i++) await until(async () => JSON.stringify(await leaseIds(r, i)) === JSON.stringify(ids), `instance ${i} to list both leases`);
    // An owner of one account cannot be given the other one on any instance: nothing is free.
    const late = await lease(r, 2, { action: 'acquire' });
    expect(late.status).toBe(429);
  });

  it('a lease acquired on A is honoured and renewed on B, a stale generation is refused there, and a release on A ends it on B', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS });
    await managed(rig);
    const r = rig;
    const [A, B] = r.engines as [SessionsRig['engines'][0], SessionsRig['engines'][0]];
    const got = await lease(r, 0, { action: 'acquire', connectionId: r.conns[0]![1]!.id });
    expect(got.status).toBe(200);
    const { owner, generation } = got.body.lease;
    const account = KEYS[1]!;

    // At once on B (its copy may not have heard yet: it asks the team): served by B's connection to the same account.
    for (let n = 0; n < 3; n++) {
      const served = await chat(B, r.clientKey, leaseHeaders(owner, generation));
      expect(served.status).toBe(200);
      expect(served.selected).toBe(r.conns[1]![1]!.id);
    }
    expect(r.upstream.requestsFor({ key: KEYS[0] })).toHaveLength(0);
    expect(r.upstream.requestsFor({ key: account })).toHaveLength(3);

    // Renewed on B: a new generation; the old one is refused on both instances before any upstream call.
    const renewed = await lease(r, 1, { action: 'renew', owner, generation });
    expect(renewed.status).toBe(200);
    const next = Number(renewed.body.lease.generation);
    expect(next).toBeGreaterThan(Number(generation));
    for (const e of [B, A]) {
      const stale = await chat(e, r.clientKey, leaseHeaders(owner, generation));
      expect(stale.status).toBe(409);
      expect(stale.code).toBe('lease_generation_stale');
    }
    expect(r.upstream.requestsFor({ key: account })).toHaveLength(3);
    const onA = await chat(A, r.clientKey, leaseHeaders(owner, next));
    expect(onA).toMatchObject({ status: 200, selected: r.conns[0]![1]!.id });

    // Another owner cannot take that account on B while it is held.
    const other = await lease(r, 1, { action: 'acquire', connectionId: r.conns[1]![1]!.id });
    expect(other.status).toBe(429);

    // Released on A: B's book lets it go, and the owner is refused there.
    const released = await lease(r, 0, { action: 'release', owner, generation: next });
    expect(released.status).toBe(200);
    await until(async () => (await leaseIds(r, 1)).length === 0, "B's book to let the lease go");
    const gone = await chat(B, r.clientKey, leaseHeaders(owner, next));
    expect(gone.status).toBe(404);
    expect(gone.code).toBe('lease_not_found');
    expect(r.upstream.requestsFor({ key: account })).toHaveLength(4);
    // The account is free again for anyone on B.
    expect((await lease(r, 1, { action: 'acquire', connectionId: r.conns[1]![1]!.id })).status).toBe(200);
  });

  it('the operator revoking a lease on B ends it for the owner on A', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS });
    await managed(rig);
    const r = rig;
    const got = await lease(r, 0, { action: 'acquire' });
    expect(got.status).toBe(200);
    const { owner, generation, id } = got.body.lease;
    await until(async () => (await leaseIds(r, 1)).includes(id), 'B to list the lease');
    await r.engines[1]!.api.releaseLease({ id });
    await until(async () => (await leaseIds(r, 0)).length === 0, "A's book to let it go");
    const refused = await chat(r.engines[0]!, r.clientKey, leaseHeaders(owner, generation));
    expect(refused.code).toBe('lease_not_found');
  });

  it('Redis stalls (keeping its data): changes decided alone meanwhile reach the team once the link is back', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS });
    await managed(rig);
    const r = rig;
    const [A, B] = r.engines as [SessionsRig['engines'][0], SessionsRig['engines'][0]];
    const l1 = (await lease(r, 0, { action: 'acquire', connectionId: r.conns[0]![0]!.id })).body.lease;
    await until(async () => (await leaseIds(r, 1)).includes(l1.id), 'B to hear of the lease');
    const probe = new Redis(r.redis.url);
    try {
      // Every client but this one waits: each instance's next command (a read: a lease this copy
      // does not know) runs out of time, the link is degraded, and what follows is decided alone.
      await probe.call('CLIENT', 'PAUSE', '2000', 'ALL');
      const unknown = `vlo_${'u'.repeat(43)}`;
      for (const e of [A, B]) expect((await chat(e, r.clientKey, leaseHeaders(unknown, 1))).code).toBe('lease_not_found');
      await until(() => A.engine.team.status().state === 'degraded' && B.engine.team.status().state === 'degraded', 'both to notice');
      const released = await lease(r, 0, { action: 'release', owner: l1.owner, generation: l1.generation });
      expect(released.status).toBe(200);
      const onB = await lease(r, 1, { action: 'acquire', connectionId: r.conns[1]![1]!.id });
      expect(onB.status).toBe(200);
      // B's book still has the first lease (it cannot hear of the release): served there alone.
      expect((await chat(B, r.clientKey, leaseHeaders(l1.owner, l1.generation))).status).toBe(200);
      const reconciles = (e: typeof A) => e.logs.lines.filter((l) => l.includes('team.sessionsReconciled')).length;
      const before = [reconciles(A), reconciles(B)];
      // The probe's next command waits for the stall to end; the instances' links are then dropped,
      // they reconnect and reconcile with a Redis that kept its data.
      await probe.call('CLIENT', 'KILL', 'TYPE', 'normal');
      await probe.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await until(() => reconciles(A) > before[0]! && reconciles(B) > before[1]!, 'both to reconcile', 15_000);
      const expected = [onB.body.lease.id];
      for (let i = 0; i < 2; i++) {
        await until(async () => JSON.stringify(await leaseIds(r, i)) === JSON.stringify(expected), `instance ${i}'s book to agree with the team`, 15_000);
      }
      expect((await chat(B, r.clientKey, leaseHeaders(l1.owner, l1.generation))).code).toBe('lease_not_found');
      expect((await chat(A, r.clientKey, leaseHeaders(onB.body.lease.owner, onB.body.lease.generation))).selected).toBe(r.conns[0]![1]!.id);
      // Reconciled against the data Redis kept (not restored from the instances' copies).
      const reconciled = B.logs.lines.filter((l) => l.includes('team.sessionsReconciled'));
      expect(reconciled.at(-1)).toMatch(/"redisLostData":false/);
    } finally {
      probe.disconnect();
    }
  });

  it('Redis killed mid-run: leased requests keep being served; when it returns the books agree, a double grant keeping the earlier', async () => {
    rig = await startSessionsRig({ instances: 2, keys: KEYS });
    await managed(rig);
    const r = rig;
    const [A, B] = r.engines as [SessionsRig['engines'][0], SessionsRig['engines'][0]];
    const first = await lease(r, 0, { action: 'acquire', connectionId: r.conns[0]![0]!.id });
    expect(first.status).toBe(200);
    const l1 = first.body.lease;
    await until(async () => (await leaseIds(r, 1)).includes(l1.id), 'B to hear of the first lease');

    await r.redis.kill();
    await until(() => A.engine.team.status().state === 'degraded' && B.engine.team.status().state === 'degraded', 'both to notice');
    // Served on each instance's own book.
    for (const e of [A, B]) {
      const served = await chat(e, r.clientKey, leaseHeaders(l1.owner, l1.generation));
      expect(served.status).toBe(200);
      expect(r.keyIndexOf(r.engines.indexOf(e), served.selected)).toBe(0);
    }
    // The second account leased on A, then on B (neither can know): a conflict the team settles later.
    const onA = await lease(r, 0, { action: 'acquire', connectionId: r.conns[0]![1]!.id });
    await new Promise((res) => setTimeout(res, 5));
    const onB = await lease(r, 1, { action: 'acquire', connectionId: r.conns[1]![1]!.id });
    expect(onA.status).toBe(200);
    expect(onB.status).toBe(200);
    expect((await chat(B, r.clientKey, leaseHeaders(onB.body.lease.owner, onB.body.lease.generation))).status).toBe(200);

    await r.redis.up();
    const expected = [l1.id, onA.body.lease.id].sort();
    for (let i = 0; i < 2; i++) {
      await until(async () => JSON.stringify(await leaseIds(r, i)) === JSON.stringify(expected), `instance ${i}'s book to agree with the team`, 15_000);
    }
    // The earlier grant holds on both instances; the later one's owner learns it as the usual refusal.
    const kept = await chat(B, r.clientKey, leaseHeaders(onA.body.lease.owner, onA.body.lease.generation));
    expect(kept).toMatchObject({ status: 200, selected: r.conns[1]![1]!.id });
    const lost = await chat(B, r.clientKey, leaseHeaders(onB.body.lease.owner, onB.body.lease.generation));
    expect(lost.status).toBe(404);
    expect(lost.code).toBe('lease_not_found');
    // The first lease came back into Redis (it had lost its data) and still holds its account.
    expect((await chat(A, r.clientKey, leaseHeaders(l1.owner, l1.generation))).status).toBe(200);
    expect((await lease(r, 1, { action: 'acquire', connectionId: r.conns[1]![0]!.id })).status).toBe(429);
  });
});
