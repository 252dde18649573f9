// Team mode's parts of session affinity and leases (issue 26) that need no Redis: the names the
// team knows client keys, connections and combos by (the same key is the same key on every
// workstation, whatever its local id; the secret never appears); what SessionAffinity tells the
// team (a slide at most once a minute, never an expiry) and what it takes back; a pin to a
// connection this instance lacks is left alone; the lease book taking the team's leases; and the
// endpoint trying the next connection when the team says one was taken.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PIN_TOUCH_FLUSH_MS, type PinTeamHook } from '../../../src/main/engine/routing/affinity/sessionAffinity';
import { LeaseBook, type LeaseLedger, type LeaseOutcome } from '../../../src/main/engine/routing/leases/leaseBook';
import { LeaseEndpoint } from '../../../src/main/engine/routing/leases/leaseEndpoint';
import type { Lease } from '../../../src/main/engine/routing/leases/leaseMachine';
import { clientKeyTeamId, FOREIGN, SessionTeamIds } from '../../../src/main/engine/routing/sessionTeam';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import type { ClientKeyRecord } from '../../../src/main/engine/store/clientKeysRepo';
import { openStore } from '../../../src/main/engine/store/db';
import { LeasesRepo } from '../../../src/main/engine/store/leasesRepo';
import type { PinRecord } from '../../../src/main/engine/store/sessionPinsRepo';
import { connectionRecord } from '../../support/builders';
import { FakeClock } from '../../support/fakeClock';
import { affinityRig, call, plan, target } from './support';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const log = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => 0 });

describe('the team names of client keys, connections and combos', () => {
  const secret = 'sk-sy-the-same-key-on-two-workstations';
  const instance = (name: string, keyId: string, conns: Record<string, string>) =>
    new SessionTeamIds({
      teamName: 'acme',
      instanceId: name,
      teamIds: { ofId: (id) => conns[id] ?? null, localIds: (t) => Object.keys(conns).filter((id) => conns[id] === t) },
      clientKeys: { get: (id) => (id === keyId ? { id, keyHash: sha(secret) } : undefined), ids: () => [keyId] },
      combos: { get: (x) => (x === 'combo-local-id' || x === 'Coding' ? { id: 'combo-local-id', name: 'Coding' } : undefined) },
    });

  it('the same key is the same team key on two instances (other local ids), and never shows the key or its hash', () => {
    const a = instance('a', 'key-on-a', {});
    const b = instance('b', 'key-on-b', {});
    const team = a.keyOf('key-on-a')!;
    expect(team).toMatch(/^k_[A-Za-z0-9_-]{22}$/);
    expect(b.keyOf('key-on-b')).toBe(team);
    expect(b.localKey(team)).toBe('key-on-b');
    expect(team).not.toContain(secret.slice(6));
    expect(sha(secret)).not.toContain(team.slice(2));
    // Another team: another name for the same key.
    expect(clientKeyTeamId(sha(secret), 'other')).not.toBe(team);
    // A key this workstation lacks is named for the team, never matched to a local key.
    expect(b.keyHere('k_someone-else')).toBe(`${FOREIGN}k_someone-else`);
    expect(a.keyOf('')).toBeNull();
  });

  it('connections by team id (a local-only one is this instance own), combos by name', () => {
    const a = instance('a', 'k', { 'conn-a1': 'c_shared' });
    const b = instance('b', 'k', { 'conn-b7': 'c_shared' });
    expect(a.connOf('conn-a1')).toBe('c_shared');
    expect(b.localConn('c_shared')).toBe('conn-b7');
    expect(b.connHere('c_shared')).toBe('conn-b7');
    // A local model server (no team id) is named after the instance: another instance does not have it.
    const own = a.connOf('llama-local');
    expect(own).toBe('l_a_llama-local');
    expect(a.localConn(own)).toBe('llama-local');
    expect(b.localConn(own)).toBeNull();
    expect(b.connHere(own)).toBe(`${FOREIGN}${own}`);
    expect(a.scopeOf('combo-local-id')).toBe('Coding');
    expect(b.localScope('Coding')).toBe('combo-local-id');
    expect(a.scopeOf('')).toBe('');
    expect(a.scopeOf('deleted-combo')).toBeNull();
  });
});

/** A hook that records what SessionAffinity tells the team. */
function recorder() {
  const told: string[] = [];
  const hook: PinTeamHook = {
    created: (p) => told.push(`created ${p.connectionId}`),
    moved: (p, from) => told.push(`moved ${from.connectionId} -> ${p.connectionId}`),
    touched: (p) => told.push(`touched ${p.connectionId}`),
    dropped: (p) => told.push(`dropped ${p.connectionId}`),
  };
  return { told, hook };
}

describe('SessionAffinity in team mode', () => {
  const S = { 'x-session-id': 's-1' };
  const request = (r: ReturnType<typeof affinityRig>, served: number, order = [0, 1, 2]) => {
    const c = call(S);
    const p = plan(order.map((i) => target(r.conns[i]!)));
    const trace = r.affinity.route(c, p, r.clock.now());
    r.affinity.served(c, p.order.find((t) => t.conn === r.conns[served])!);
    return { trace, first: r.conns.indexOf(p.order[0]!.conn) };
  };

  it('tells the team of a creation, a move, a slide at most once a minute, and a forget; never of an expiry', () => {
    const r = affinityRig();
    r.ttl.ms = 3_600_000;
    const { told, hook } = recorder();
    r.affinity.setTeam(hook);
    const [a, b] = r.conns.map((c) => c.id);
    request(r, 0);
    expect(told).toEqual([`created ${a}`]);
    for (let n = 0; n < 20; n++) {
      r.clock.advance(1_000);
      request(r, 0);
    }
    expect(told).toEqual([`created ${a}`]);
    r.clock.advance(PIN_TOUCH_FLUSH_MS);
    request(r, 0);
    expect(told).toEqual([`created ${a}`, `touched ${a}`]);
    r.excluded.set(a!, { reason: 'cooling_down', until: null, detail: null });
    request(r, 1);
    expect(told.at(-1)).toBe(`moved ${a} -> ${b}`);
    r.excluded.clear();
    // Expired: dropped here without a word (Redis forgets it by itself).
    r.clock.advance(r.ttl.ms + 1);
    expect(r.affinity.list(r.clock.now())).toEqual([]);
    expect(told.some((t) => t.startsWith('dropped'))).toBe(false);
    request(r, 2);
    const id = r.affinity.list(r.clock.now())[0]!.id;
    r.affinity.forget(id);
    expect(told.at(-1)).toBe(`dropped ${r.conns[2]!.id}`);
  });

  it("takes the team's pin (replacing its own) and lets it go when the team drops it, telling nothing back", () => {
    const r = affinityRig();
    const { told, hook } = recorder();
    r.affinity.setTeam(hook);
    request(r, 0);
    const mine = r.affinity.find('key-1', '', 's-1')!;
    const theirs: PinRecord = { ...mine, id: 'team-pin', connectionId: r.conns[2]!.id, pinnedAt: mine.pinnedAt + 1, lastUsedAt: r.clock.now() };
    r.affinity.adopt(theirs);
    expect(r.affinity.find('key-1', '', 's-1')).toMatchObject({ id: 'team-pin', connectionId: r.conns[2]!.id });
    expect(r.pinRows()).toEqual([expect.objectContaining({ id: 'team-pin', connection_id: r.conns[2]!.id })]);
    expect(request(r, 2).first).toBe(2);
    r.affinity.remove('key-1', '', 's-1', 'team-pin');
    expect(r.affinity.find('key-1', '', 's-1')).toBeNull();
    expect(told).toEqual([`created ${r.conns[0]!.id}`]);
  });

  it('a pin to a connection this instance does not have is not followed, and a success here does not move it', () => {
    const r = affinityRig();
    const { told, hook } = recorder();
    r.affinity.setTeam(hook);
    const now = r.clock.now();
    const foreign = `${FOREIGN}c_elsewhere`;
    r.affinity.adopt({ id: 'p', clientKeyId: 'key-1', scope: '', session: 's-1', source: 'x-session-id', connectionId: foreign, targetKey: null, targetIndex: null, model: 'm', createdAt: now, pinnedAt: now, lastUsedAt: now });
    const { trace } = request(r, 1);
    expect(trace).toMatchObject({ pin: 'not_candidate', result: 'kept' });
    expect(r.affinity.find('key-1', '', 's-1')!.connectionId).toBe(foreign);
    expect(told).toEqual([]);
  });
});

describe('LeaseBook in team mode', () => {
  const rig = () => {
    const clock = new FakeClock();
    const db = openStore({ path: ':memory:', now: () => clock.now() });
    const repo = new LeasesRepo(db, () => clock.now());
    return { clock, repo, book: new LeaseBook(repo, clock) };
  };
  const lease = (over: Partial<Lease>, now: number): Lease => ({
    id: 'l1',
    ownerHash: 'o1',
    clientKeyId: 'k1',
    connectionId: 'c1',
    generation: 40,
    ttlMs: 60_000,
    label: null,
    acquiredAt: now,
    renewedAt: now,
    expiresAt: now + 60_000,
    ...over,
  });

  it("takes the team's lease over its own copy (the owner's and the connection's), and never issues its generation again", () => {
    const { book, clock } = rig();
    const now = clock.now();
    const revoked: string[] = [];
    book.onRevoked((l) => revoked.push(l.id));
    expect(book.acquire({ ownerHash: 'o2', clientKeyId: 'k1', connectionId: 'c1', ttlMs: 60_000, label: null }, now).ok).toBe(true);
    book.adopt(lease({}, now));
    expect(book.holderOf('c1', now)?.ownerHash).toBe('o1');
    expect(book.ofOwner('o2', now)).toBeNull();
    book.adopt(lease({ connectionId: 'c2', generation: 41 }, now));
    expect(book.holderOf('c1', now)).toBeNull();
    expect(book.list(now)).toHaveLength(1);
    const mine = book.acquire({ ownerHash: 'o3', clientKeyId: 'k1', connectionId: 'c1', ttlMs: 60_000, label: null }, now);
    expect(mine.ok && mine.lease.generation).toBe(42);
    expect(book.drop('o1')?.id).toBe('l1');
    expect(book.ofOwner('o1', now)).toBeNull();
    // Only the operator's revokes (and cascades) are for the team to hear.
    expect(revoked).toEqual([]);
    book.revokeWhere((l) => l.ownerHash === 'o3');
    expect(revoked).toHaveLength(1);
  });
});

describe('LeaseEndpoint with the team as ledger', () => {
  it('a connection the team says was taken sends the acquire to the next one in the pool', async () => {
    const clock = new FakeClock();
    const db = openStore({ path: ':memory:', now: () => clock.now() });
    const book = new LeaseBook(new LeasesRepo(db, () => clock.now()), clock);
    const conns = [connectionRecord({ name: 'One' }), connectionRecord({ name: 'Two' })];
    const asked: string[] = [];
    const ledger: LeaseLedger = {
      acquire: async (args, now): Promise<LeaseOutcome> => {
        asked.push(args.connectionId);
        if (args.connectionId === conns[0]!.id) return { ok: false, refused: 'lease_connection_taken', lease: null };
        return book.acquire(args, now);
      },
      renew: (...a) => book.renew(...a),
      release: (...a) => book.release(...a),
      use: (...a) => book.use(...a),
      refresh: () => null,
    };
    const endpoint = new LeaseEndpoint({ book, ledger, connection: (id) => conns.find((c) => c.id === id), exclusion: () => null, clock, log });
    const key = { id: 'k1', scopes: ['lease:exclusive'], allowedConnections: conns.map((c) => c.id), revokedAt: null } as unknown as ClientKeyRecord;
    const answer = (await endpoint.handle(key, { action: 'acquire' })) as { lease: { connectionId: string } };
    expect(answer.lease.connectionId).toBe(conns[1]!.id);
    expect(asked).toEqual(conns.map((c) => c.id));
    // Both taken: the usual 429.
    await expect(endpoint.handle(key, { action: 'acquire' })).rejects.toMatchObject({ status: 429, code: 'lease-capacity-unavailable' });
  });
});
