// Exclusive leases across the team (issue 26): a lease is exclusive for the whole team, so every
// change is decided in Redis, by one Lua script per change: one lease per owner (the owner's key),
// one per connection (keyed by the connection's team id), the generation from one INCR. The
// lease book stays this instance's copy: it takes each script's answer, and the changes other
// instances announce on the leases channel (`adopt` / `drop`), so routing reads it without a round
// trip. The dispatch barrier of a leased request asks the team (`use`, one round trip per
// attempt), so a stale generation never reaches a provider (R-LS-06) even when the copy here is
// behind.
//
// Redis is a dependency that fails: while the link is down (or a script does not answer within
// the link's bound) the book decides alone, as one process would, and the change is written down
// (SQLite, so a restart keeps it). When the link returns each change written down is offered to
// the team: the same lease changed on both sides keeps its later change; two leases on one
// connection (granted on two instances during the outage) keep the earlier grant and the other is
// revoked, which its owner learns as the usual typed refusal (lease_not_found).
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock';
import type { LeasesRepo } from '../../store/leasesRepo';
import type { SessionTeamIds, SessionTeamLink, TeamPart } from '../sessionTeam';
import type { AcquireArgs, LeaseBook, LeaseLedger, LeaseOutcome } from './leaseBook';
import type { Lease, LeaseRefusal } from './leaseMachine';

/** A lease as the team stores it: client key and connection by their team ids. */
export interface TeamLease {
  id: string;
  owner: string;
  key: string;
  conn: string;
  gen: number;
  ttlMs: number;
  label: string | null;
  acquiredAt: number;
  renewedAt: number;
  expiresAt: number;
  /** When it last changed (acquire, renew, move), by the clock of the instance that changed it. */
  at: number;
  /** The team's revision of this record (from the scripts' counter). */
  rev?: number;
}

/** A script's answer: status, a lease (JSON, or ''), and for an ended lease the revision of its end. */
type Answer = [string, string, string?];

const parse = (raw: string): TeamLease | null => {
  try {
    const t = JSON.parse(raw) as TeamLease;
    return t && typeof t === 'object' ? t : null;
  } catch {
    return null;
  }
};

/** A change made here while Redis was away, by owner. */
type Pending = { lease: Lease; at: number } | { ended: string; at: number };

interface Announcement {
  by: string;
  owner: string;
  rev: number;
  lease?: TeamLease;
}

// One script, one operation per call. ARGV: prefix, channel, instance id, operation, its arguments.
// Keys are built from the prefix (a single Redis, not a cluster). Answers: { status, lease JSON or
// '' } (a taken connection: its holder's lease), and for an ended lease the revision of its end.
const LEASE_SCRIPT = `
local P, CH, BY, OP = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local function okey(o) return P .. 'owner:' .. o end
local function ckey(c) return P .. 'conn:' .. c end
local function load(o)
  local raw = redis.call('GET', okey(o))
  if raw then return cjson.decode(raw), raw end
  return nil, nil
end
local function holder(c, except)
  local o = redis.call('GET', ckey(c))
  if not o or o == except then return nil, nil end
  return load(o)
end
local function announce(owner, lease, rev)
  redis.call('PUBLISH', CH, cjson.encode({ by = BY, owner = owner, rev = rev, lease = lease }))
end
local function save(l, ttl)
  l.rev = redis.call('INCR', P .. 'rev')
  local raw = cjson.encode(l)
  ttl = math.max(1, math.floor(ttl))
  redis.call('SET', okey(l.owner), raw, 'PX', ttl)
  redis.call('SET', ckey(l.conn), l.owner, 'PX', ttl)
  announce(l.owner, l, l.rev)
  return raw
end
local function erase(l)
  redis.call('DEL', okey(l.owner))
  if redis.call('GET', ckey(l.conn)) == l.owner then redis.call('DEL', ckey(l.conn)) end
  local rev = redis.call('INCR', P .. 'rev')
  announce(l.owner, nil, rev)
  return tostring(rev)
end
local function check(l, key, gen)
  if not l then return 'lease_not_found' end
  if l.key ~= key then return 'lease_key_mismatch' end
  if tonumber(l.gen) ~= tonumber(gen) then return 'lease_generation_stale' end
  return nil
end
local function first(a, b)
  local x, y = tonumber(a.acquiredAt), tonumber(b.acquiredAt)
  return x < y or (x == y and a.id < b.id)
end

if OP == 'acquire' then
  local l = cjson.decode(ARGV[5])
  local cur, raw = load(l.owner)
  if cur then return { 'lease_owner_active', raw } end
  local h, hraw = holder(l.conn, l.owner)
  if h then return { 'lease_connection_taken', hraw } end
  l.gen = redis.call('INCR', P .. 'gen')
  return { 'ok', save(l, l.ttlMs) }
end

if OP == 'renew' or OP == 'release' or OP == 'use' then
  local l, raw = load(ARGV[5])
  local no = check(l, ARGV[6], ARGV[7])
  if no then return { no, raw or '' } end
  if OP == 'release' then return { 'ok', raw, erase(l) } end
  if OP == 'renew' then
    local now = tonumber(ARGV[9])
    l.gen = redis.call('INCR', P .. 'gen')
    l.ttlMs = tonumber(ARGV[8])
    l.renewedAt = now
    l.expiresAt = now + l.ttlMs
    l.at = now
    return { 'ok', save(l, l.ttlMs) }
  end
  if l.conn == ARGV[8] then return { 'ok', raw } end
  local h, hraw = holder(ARGV[8], l.owner)
  if h then return { 'lease_connection_taken', hraw } end
  local ttl = redis.call('PTTL', okey(l.owner))
  if ttl <= 0 then return { 'lease_not_found', '' } end
  if redis.call('GET', ckey(l.conn)) == l.owner then redis.call('DEL', ckey(l.conn)) end
  l.conn = ARGV[8]
  l.at = tonumber(ARGV[9])
  return { 'moved', save(l, ttl) }
end

if OP == 'revoke' then
  -- ARGV[7]: the time of the revoke when it was decided here alone (0: now); a later change wins.
  local l, raw = load(ARGV[5])
  if not l or l.id ~= ARGV[6] then return { 'lease_not_found', raw or '' } end
  local at = tonumber(ARGV[7])
  if at > 0 and tonumber(l.at) > at then return { 'kept', raw } end
  return { 'ok', raw, erase(l) }
end

if OP == 'reconcile' then
  -- ARGV[5]: a lease this instance holds; ARGV[6]: 'change' (decided here while Redis was away)
  -- or 'restore' (Redis lost its data: written only where nothing is); ARGV[7]: now.
  local L = cjson.decode(ARGV[5])
  local restore = ARGV[6] == 'restore'
  local R, rraw = load(L.owner)
  local ttl = tonumber(L.expiresAt) - tonumber(ARGV[7])
  if ttl <= 0 then return { 'kept', rraw or '' } end
  if R then
    if restore then return { 'kept', rraw } end
    if R.id == L.id then
      if tonumber(R.at) > tonumber(L.at) then return { 'kept', rraw } end
    elseif first(R, L) then
      return { 'kept', rraw }
    end
  end
  local C = holder(L.conn, L.owner)
  if C then
    if restore or first(C, L) then return { 'kept', rraw or '' } end
    erase(C)
  end
  if R and R.conn ~= L.conn and redis.call('GET', ckey(R.conn)) == R.owner then redis.call('DEL', ckey(R.conn)) end
  if tonumber(redis.call('GET', P .. 'gen') or '0') < tonumber(L.gen) then redis.call('SET', P .. 'gen', L.gen) end
  return { 'ok', save(L, ttl) }
end

return redis.error_reply('unknown lease operation')
`;

export interface TeamLeasesOptions {
  book: LeaseBook;
  link: SessionTeamLink;
  ids: SessionTeamIds;
  repo: Pick<LeasesRepo, 'teamState' | 'setTeamState'>;
  clock: Clock;
}

const PENDING = 'teamPending';
const MAX_REVS = 10_000;

export class TeamLeases implements LeaseLedger, TeamPart {
  readonly channel: string;
  private readonly prefix: string;
  private readonly run: (...args: string[]) => Promise<unknown>;
  /** The newest revision applied here, by owner. */
  private readonly revs = new Map<string, number>();
  private readonly pending: Map<string, Pending>;
  /** Owners announced while a reconcile reads Redis back (their announcement is newer than what it read). */
  private announced: Set<string> | null = null;

  constructor(private readonly o: TeamLeasesOptions) {
    this.prefix = `${o.link.prefix}lease/`;
    this.channel = `${this.prefix}changes`;
    this.run = o.link.script('switchyardLease', LEASE_SCRIPT);
    this.pending = new Map(Object.entries(o.repo.teamState<Record<string, Pending>>(PENDING) ?? {}));
    // The operator's revoke (or a deleted connection, a revoked key) ends the lease for the team.
    o.book.onRevoked((lease, now) => void this.revoke(lease, now));
  }

  private op(op: string, ...args: string[]): Promise<Answer | undefined> {
    return this.run(this.prefix, this.channel, this.o.link.instanceId, op, ...args) as Promise<Answer | undefined>;
  }

  private toTeam(l: Lease, at: number): TeamLease {
    return {
      id: l.id,
      owner: l.ownerHash,
      key: this.o.ids.keyOf(l.clientKeyId) ?? `none-${l.clientKeyId}`,
      conn: this.o.ids.connOf(l.connectionId),
      gen: l.generation,
      ttlMs: l.ttlMs,
      label: l.label,
      acquiredAt: l.acquiredAt,
      renewedAt: l.renewedAt,
      expiresAt: l.expiresAt,
      at,
    };
  }

  private toLocal(t: TeamLease, connection?: string): Lease {
    return {
      id: t.id,
      ownerHash: t.owner,
      clientKeyId: this.o.ids.keyHere(t.key),
      connectionId: this.o.ids.connHere(t.conn, connection),
      generation: Number(t.gen),
      ttlMs: Number(t.ttlMs),
      label: typeof t.label === 'string' ? t.label : null,
      acquiredAt: Number(t.acquiredAt),
      renewedAt: Number(t.renewedAt),
      expiresAt: Number(t.expiresAt),
    };
  }

  /** A lease from the team into the book, unless a newer revision of its owner was applied already. */
  private take(from: string | TeamLease, connection?: string): Lease | null {
    const t = typeof from === 'string' ? parse(from) : from;
    if (!t || typeof t.owner !== 'string' || typeof t.id !== 'string') return null;
    const rev = Number(t.rev ?? 0);
    if (rev < (this.revs.get(t.owner) ?? 0)) return this.o.book.ofOwner(t.owner, this.o.clock.now());
    this.noteRev(t.owner, rev);
    const l = this.toLocal(t, connection);
    this.o.book.adopt(l);
    return l;
  }

  /** The team ended this owner's lease (at revision `rev`). */
  private ended(owner: string, rev: number): void {
    if (rev > (this.revs.get(owner) ?? 0)) this.noteRev(owner, rev);
    this.o.book.drop(owner);
  }

  private noteRev(owner: string, rev: number): void {
    // Bounded: forgetting old revisions only lets an announcement that is late by minutes apply again.
    if (this.revs.size >= MAX_REVS && !this.revs.has(owner)) this.revs.clear();
    this.revs.set(owner, rev);
  }

  private ownerOf(raw: string): string | null {
    return parse(raw)?.owner ?? null;
  }

  /** A script's answer as the ledger's outcome; the book takes what the team holds. */
  private answer(r: Answer, owner: string, connection?: string): LeaseOutcome {
    const [status, raw] = r;
    if (status === 'ok' || status === 'moved') {
      const lease = this.take(raw, connection);
      if (lease) return { ok: true, lease, moved: status === 'moved' };
      return { ok: false, refused: 'lease_not_found', lease: null };
    }
    const refused = status as LeaseRefusal;
    if (raw === '') {
      if (refused === 'lease_not_found') this.o.book.drop(owner);
      return { ok: false, refused, lease: null };
    }
    const lease = this.take(raw);
    // A taken connection answers with its holder's lease, not the owner's.
    return { ok: false, refused, lease: this.ownerOf(raw) === owner ? lease : null };
  }

  /** Decided here alone (Redis away): a change made is written down for the team. */
  private alone(outcome: LeaseOutcome, owner: string, now: number, ended = false): LeaseOutcome {
    if (!outcome.ok) return outcome;
    this.pending.set(owner, ended ? { ended: outcome.lease.id, at: now } : { lease: outcome.lease, at: now });
    this.savePending();
    return outcome;
  }

  private savePending(): void {
    this.o.repo.setTeamState(PENDING, this.pending.size ? Object.fromEntries(this.pending) : undefined);
  }

  async acquire(args: AcquireArgs, now: number): Promise<LeaseOutcome> {
    const lease: Omit<TeamLease, 'gen'> = {
      id: randomUUID(),
      owner: args.ownerHash,
      key: this.o.ids.keyOf(args.clientKeyId) ?? `none-${args.clientKeyId}`,
      conn: this.o.ids.connOf(args.connectionId),
      ttlMs: args.ttlMs,
      label: args.label,
      acquiredAt: now,
      renewedAt: now,
      expiresAt: now + args.ttlMs,
      at: now,
    };
    const r = await this.op('acquire', JSON.stringify(lease));
    // Decided here alone under the same id: if the script did run (late), reconcile sees one lease
    // changed on both sides, and the change this client was answered with wins the tie.
    if (!r) return this.alone(this.o.book.acquire({ ...args, id: lease.id }, now), args.ownerHash, now);
    return this.answer(r, args.ownerHash, args.connectionId);
  }

  async renew(ownerHash: string, clientKeyId: string, generation: number, ttlMs: number, now: number): Promise<LeaseOutcome> {
    const key = this.o.ids.keyOf(clientKeyId) ?? '';
    const r = await this.op('renew', ownerHash, key, String(generation), String(ttlMs), String(now));
    if (!r) return this.alone(this.o.book.renew(ownerHash, clientKeyId, generation, ttlMs, now), ownerHash, now);
    return this.answer(r, ownerHash, this.o.book.ofOwner(ownerHash, now)?.connectionId);
  }

  async release(ownerHash: string, clientKeyId: string, generation: number, now: number): Promise<LeaseOutcome> {
    const key = this.o.ids.keyOf(clientKeyId) ?? '';
    const r = await this.op('release', ownerHash, key, String(generation));
    if (!r) return this.alone(this.o.book.release(ownerHash, clientKeyId, generation, now), ownerHash, now, true);
    if (r[0] !== 'ok') return this.answer(r, ownerHash);
    const before = this.o.book.ofOwner(ownerHash, now);
    const t = parse(r[1]);
    this.ended(ownerHash, Number(r[2] ?? 0));
    return t ? { ok: true, lease: this.toLocal(t, before?.connectionId), moved: false } : { ok: false, refused: 'lease_not_found', lease: null };
  }

  async use(ownerHash: string, clientKeyId: string, generation: number, connectionId: string, now: number): Promise<LeaseOutcome> {
    const key = this.o.ids.keyOf(clientKeyId) ?? '';
    const r = await this.op('use', ownerHash, key, String(generation), this.o.ids.connOf(connectionId), String(now));
    if (!r) {
      const outcome = this.o.book.use(ownerHash, clientKeyId, generation, connectionId, now);
      return outcome.ok && outcome.moved ? this.alone(outcome, ownerHash, now) : outcome;
    }
    return this.answer(r, ownerHash, connectionId);
  }

  refresh(ownerHash: string): Promise<void> | null {
    if (!this.o.link.up) return null;
    return (async () => {
      const raw = await this.o.link.run((c) => c.get(`${this.prefix}owner:${ownerHash}`));
      if (raw === undefined) return;
      if (raw === null) this.o.book.drop(ownerHash);
      else this.take(raw);
    })();
  }

  /** The operator's revoke here (or a cascade): ended for the team too, or written down while Redis is away. */
  private async revoke(lease: Lease, now: number): Promise<void> {
    const r = await this.op('revoke', lease.ownerHash, lease.id, '0');
    if (r) return this.revoked(r, lease.ownerHash);
    this.pending.set(lease.ownerHash, { ended: lease.id, at: now });
    this.savePending();
  }

  receive(message: string): void {
    let a: Announcement;
    try {
      a = JSON.parse(message) as Announcement;
    } catch {
      return;
    }
    if (a.by === this.o.link.instanceId || typeof a.owner !== 'string') return;
    const rev = Number(a.rev ?? 0);
    if (rev <= (this.revs.get(a.owner) ?? 0)) return;
    this.announced?.add(a.owner);
    if (a.lease && typeof a.lease === 'object') this.take({ ...a.lease, rev });
    else this.ended(a.owner, rev);
  }

  async reconcile(lost: boolean): Promise<boolean> {
    this.announced = new Set();
    try {
      const now = this.o.clock.now();
      const offered = new Set<string>();
      for (const [owner, p] of [...this.pending]) {
        const ended = 'ended' in p;
        const r = ended
          ? await this.op('revoke', owner, p.ended, String(Math.max(1, p.at)))
          : await this.op('reconcile', JSON.stringify(this.toTeam(p.lease, p.at)), 'change', String(now));
        if (!r) return false;
        this.pending.delete(owner);
        this.savePending();
        offered.add(owner);
        if (ended) this.revoked(r, owner);
        else this.settle(r, owner, p.lease.connectionId);
      }
      if (lost) {
        // Redis lost its data: what this instance knows goes back, never over what is there now.
        for (const l of this.o.book.list(now)) {
          if (offered.has(l.ownerHash)) continue;
          const r = await this.op('reconcile', JSON.stringify(this.toTeam(l, l.renewedAt)), 'restore', String(now));
          if (!r) return false;
          offered.add(l.ownerHash);
          this.settle(r, l.ownerHash, l.connectionId);
        }
      }
      const values = await this.o.link.values(`${this.prefix}owner:*`);
      if (!values) return false;
      const held = new Set<string>();
      for (const raw of values) {
        const owner = this.ownerOf(raw);
        if (!owner) continue;
        held.add(owner);
        if (!this.announced.has(owner)) this.take(raw);
      }
      for (const l of this.o.book.list(this.o.clock.now())) {
        if (!held.has(l.ownerHash) && !this.announced.has(l.ownerHash)) this.o.book.drop(l.ownerHash);
      }
      return true;
    } finally {
      this.announced = null;
    }
  }

  /** A revoke's answer: ended; or the owner holds another (or a later) lease, which the book takes. */
  private revoked(r: Answer, owner: string): void {
    const [status, raw, rev] = r;
    if (status === 'ok') this.ended(owner, Number(rev ?? 0));
    else if (raw && this.ownerOf(raw) === owner) this.take(raw);
  }

  /** A reconcile answer: the team's lease of this owner here, or none. */
  private settle(r: Answer, owner: string, connection?: string): void {
    const [status, raw] = r;
    if (raw && this.ownerOf(raw) === owner) {
      this.take(raw, connection);
      return;
    }
    if (status === 'ok') return;
    // This owner's lease lost (another grant on its connection came first), or ended meanwhile.
    this.o.book.drop(owner);
  }
}
