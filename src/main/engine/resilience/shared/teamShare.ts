// Team mode for the resilience layers (issue 26): every resilience state is shared by the
// instances of a team, with the semantics of one process, keyed by what the team agrees on (a
// connection's team id, a provider's name, an egress IP). See docs/decisions/team-26-resilience.md.
//
// The layers stay what they are. Each tells this module of its own changes (an observer, or the
// resilience service for connection health), which publishes them; records other instances
// publish are merged into the layers here (records.ts) and announced like local changes, never
// published again unless the merge made something new. Reads on the request path stay local and
// synchronous: the only round trips are the claims that must be made once across the team (a
// breaker's probe, an ejected key's test call, a last-resort pick), and only when the local rule
// already decided that this attempt takes one.
import { isTerminalStatus } from '../../../../shared/model';
import type { Clock } from '../../clock';
import type { ConnectionRecord, ConnectionRegistry } from '../../connections/registry';
import type { Logger } from '../../logger';
import type { Target } from '../../routing/target';
import type { SharedTable, Team } from '../../team';
import type { TeamIdentity } from '../../team/identity';
import type { HoldEvent } from '../connectionCooldown';
import { isEgressBucketed, type EgressHistory } from '../egressLockout';
import type { LockEntry, ModelLockouts } from '../modelLockout';
import type { OutlierDetector, OutlierRecord } from '../outlierEjection';
import { ANY_CONNECTION, type BreakerRecord } from '../providerBreaker';
import type { ProviderBreakers } from '../providerBreakers';
import type { ProviderCooldownGate } from '../providerCooldownGate';
import type { RecentFailures } from '../recentFailures';
import {
  joinBreaker,
  joinGate,
  joinHealth,
  joinLock,
  sameBreaker,
  sameGate,
  sameHealth,
  sameLock,
  sharedHealthOf,
  sharedLockOf,
  type BreakerShare,
  type EgressLock,
  type GateShare,
  type HealthRecord,
  type LockRecord,
  type SharedHealth,
  type ShareOp,
} from './records';

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;
/** How long Redis keeps a connection's health after its cooldown ends (its backoff level and last error matter until a success). */
const HEALTH_KEEP_MS = 7 * DAY;
const BREAKER_KEEP_MS = 7 * DAY;
const OUTLIER_KEEP_MS = DAY;
const GATE_KEEP_MS = DAY;
/** A key-level hold an operator lifted: only the current opening's holds matter. */
const KEY_RELEASE_KEEP_MS = HOUR;
/**
 * A team claim on a breaker's probe or an ejected key's test call lasts this long unless its holder
 * reports the outcome first: a holder that crashed frees the provider after this, not after the
 * single-process PROBE_CLAIM_TTL_MS (10 min).
 */
export const TEAM_PROBE_CLAIM_TTL_MS = 2 * 60_000;

/** The table names (no colon: team/replicator.ts). */
export const TABLES = {
  health: 'resilience.health',
  lock: 'resilience.lockout',
  outlier: 'resilience.outlier',
  breaker: 'resilience.breaker',
  breakerKey: 'resilience.breakerKey',
  gate: 'resilience.gate',
  egress: 'resilience.egress',
} as const;

export type ClaimKind = 'probe' | 'probation' | 'lastResort';

/** What an attempt wants to claim across the team (the local rule already gave it these). */
export interface ClaimWant {
  probe: boolean;
  probation: boolean;
  /** A last-resort pick: at most one per key per `lastResortMs` across the team. */
  lastResort: boolean;
}

/** What the resilience service lends this module: its layers and the few rules kept in its closure. */
export interface ResilienceLayers {
  registry: ConnectionRegistry;
  lockouts: ModelLockouts;
  breakers: ProviderBreakers;
  gate: ProviderCooldownGate;
  outliers: OutlierDetector;
  recent: RecentFailures;
  egress?: EgressHistory;
  /** Stampede rule: every attempt dispatched here so far was in flight before this connection's cooldown. */
  markCooled(connectionId: string): void;
  /** The attempt sequence number now (a remote lockout's `seq`, for the same rule). */
  seq(): number;
  /** Holds these connections until `e.until` here only (an egress IP's lockout); returns those held. */
  holdLocally(conns: readonly ConnectionRecord[], e: HoldEvent): string[];
  /** The model lockout switch of this instance (its status locks are not applied while it is off). */
  lockoutsEnabled(): boolean;
  lastResortMs: number;
  /** Tells the dashboard's listeners (resilience.onChange) that something changed. */
  changed(): void;
}

export interface ResilienceTeamDeps {
  team: Team;
  teamIds: Pick<TeamIdentity, 'of' | 'ofId' | 'localIds'>;
  clock: Clock;
  log?: Logger;
}

interface OutlierShare {
  provider: string;
  r: OutlierRecord;
}

interface Held {
  owner: string;
  names: string[];
}

const lockKey = (teamId: string, scope: string, key: string) => `${teamId}|${scope}|${key}`;

function parseLockKey(k: string): { teamId: string; scope: 'exact' | 'family'; key: string } | null {
  const a = k.indexOf('|');
  const b = a < 0 ? -1 : k.indexOf('|', a + 1);
  if (b < 0) return null;
  const scope = k.slice(a + 1, b);
  if (scope !== 'exact' && scope !== 'family') return null;
  return { teamId: k.slice(0, a), scope, key: k.slice(b + 1) };
}

const ttlUntil = (until: number | null, now: number, keep: number) => Math.max(0, (until ?? now) - now) + keep;

export class ResilienceTeam {
  private readonly health: SharedTable<HealthRecord>;
  private readonly locks: SharedTable<LockRecord>;
  private readonly outlierTable: SharedTable<OutlierShare>;
  private readonly breakerTable: SharedTable<BreakerShare>;
  private readonly breakerKeys: SharedTable<{ at: number }>;
  private readonly gateTable: SharedTable<GateShare>;
  private readonly egressTable: SharedTable<EgressLock>;
  /**
   * The team's view of each connection's health (team id -> what was last published or applied):
   * a record from the team merges with this, not with the local health, so what stays local (an
   * egress IP's hold, this instance's own sign-in marks) never travels back out in a merge. Only a
   * change against it is published.
   */
  private readonly lastShared = new Map<string, SharedHealth>();
  /** This instance's own marks (markConnection: its Claude sign-in), kept when a record from the team comes. */
  private readonly localMarks = new Map<string, { terminal: boolean; until: number | null }>();
  /** Egress IPs locked by the team, to hold a connection whose IP becomes known later. */
  private readonly ipLocks = new Map<string, EgressLock>();
  /** Holds on this instance only (egress IP), kept when a record from the team would lift them. */
  private readonly localHolds = new Map<string, HoldEvent>();
  /** The team claims each attempt holds, released with its outcome. */
  private readonly held = new WeakMap<Target, Held>();
  private claimSeq = 0;
  private readonly log?: Logger;

  constructor(
    private readonly d: ResilienceTeamDeps,
    private readonly l: ResilienceLayers,
  ) {
    this.log = d.log;
    const t = d.team;
    this.health = t.table<HealthRecord>(TABLES.health, (k, v) => this.applyHealth(k, v));
    this.locks = t.table<LockRecord>(TABLES.lock, (k, v) => this.applyLock(k, v));
    this.outlierTable = t.table<OutlierShare>(TABLES.outlier, (k, v) => this.applyOutlier(k, v));
    this.breakerTable = t.table<BreakerShare>(TABLES.breaker, (k, v) => this.applyBreaker(k, v));
    this.breakerKeys = t.table<{ at: number }>(TABLES.breakerKey, (k, v) => this.applyKeyRelease(k, v));
    this.gateTable = t.table<GateShare>(TABLES.gate, (k, v) => this.applyGate(k, v));
    this.egressTable = t.table<EgressLock>(TABLES.egress, (k, v) => this.applyEgress(k, v));

    l.lockouts.observer = (connectionId, scope, key, entry, op) => {
      const teamId = d.teamIds.ofId(connectionId);
      if (teamId === null) return;
      const now = this.now();
      this.locks.publish(
        lockKey(teamId, scope, key),
        entry && { op, e: sharedLockOf(entry) },
        entry ? ttlUntil(Math.max(entry.forgetAt, entry.expiresAt), now, 60_000) : null,
      );
    };
    l.breakers.observer = (provider, r, op) => {
      this.breakerTable.publish(provider, r && { op, r: this.toTeam(r) }, BREAKER_KEEP_MS);
    };
    l.breakers.onKeyReleased = (provider, connectionId) => {
      const teamId = d.teamIds.ofId(connectionId);
      if (teamId !== null) this.breakerKeys.publish(`${provider}|${teamId}`, { at: this.now() }, KEY_RELEASE_KEEP_MS);
    };
    l.gate.observer = (provider, e, op) => this.gateTable.publish(provider, e && { op, e }, GATE_KEEP_MS);
    l.outliers.observer = (provider, connectionId, r) => {
      const teamId = d.teamIds.ofId(connectionId);
      if (teamId !== null) this.outlierTable.publish(teamId, r && { provider, r }, OUTLIER_KEEP_MS);
    };
    l.egress?.onLearnt?.((connectionId, ip) => this.onEgressLearnt(connectionId, ip));
  }

  private now(): number {
    return this.d.clock.now();
  }

  // ---- connection health -------------------------------------------------------------------------

  /**
   * These connections' health changed here (every resilience write that persists it comes here):
   * the team gets it when its shared part changed. `join`: a failure's cooldown, hold or mark;
   * `set`: a success's, an operator's or a passing test's clear.
   */
  publishHealth(conns: readonly ConnectionRecord[], op: ShareOp): void {
    const now = this.now();
    for (const c of conns) {
      const teamId = this.d.teamIds.of(c);
      if (teamId === null || this.localMarks.get(c.id)?.terminal === true) continue;
      const h = sharedHealthOf(c.health);
      const last = this.lastShared.get(teamId);
      if (last !== undefined && sameHealth(last, h)) continue;
      this.lastShared.set(teamId, h);
      this.health.publish(teamId, { op, h }, isTerminalStatus(h.testStatus) ? null : ttlUntil(h.rateLimitedUntil, now, HEALTH_KEEP_MS));
    }
  }

  private applyHealth(teamId: string, rec: HealthRecord | null): void {
    if (rec === null || !rec.h) return;
    const now = this.now();
    const conns = this.d.teamIds
      .localIds(teamId)
      .map((id) => this.l.registry.get(id))
      .filter((c): c is ConnectionRecord => c !== undefined);
    if (conns.length === 0) return;
    // The team's state after this record. Before anything was shared about it, the local health
    // stands for it (unless something local-only is on it).
    const first = conns[0]!;
    const base = this.lastShared.get(teamId) ?? (this.hasLocal(first.id, now) ? rec.h : sharedHealthOf(first.health));
    const merged = joinHealth(base, rec, now);
    this.lastShared.set(teamId, merged);
    const updates: { id: string; health: SharedHealth }[] = [];
    for (const conn of conns) {
      const id = conn.id;
      const before = sharedHealthOf(conn.health);
      const next = this.keepLocal(conn, before, merged, now);
      if (sameHealth(before, next)) continue;
      // A cooldown set (or lengthened) elsewhere: attempts already dispatched here were in flight
      // before it, so their failures add no backoff step (R-CC-14 across the team).
      if (next.rateLimitedUntil !== null && next.rateLimitedUntil > now && next.rateLimitedUntil > (before.rateLimitedUntil ?? 0)) this.l.markCooled(id);
      if (rec.op === 'join' && next.lastErrorAt !== null && next.lastErrorAt > this.l.recent.failedAt(id)) this.l.recent.onFailure(id, next.lastErrorAt);
      updates.push({ id, health: next });
    }
    if (updates.length > 0) this.l.registry.applyHealth(updates);
    // The merge holds something the record did not (a concurrent failure here): the team gets it.
    if (rec.op === 'join' && !sameHealth(merged, rec.h)) {
      this.health.publish(teamId, { op: 'join', h: merged }, isTerminalStatus(merged.testStatus) ? null : ttlUntil(merged.rateLimitedUntil, now, HEALTH_KEEP_MS));
    }
  }

  private hasLocal(id: string, now: number): boolean {
    const m = this.localMarks.get(id);
    const h = this.localHolds.get(id);
    return (m !== undefined && (m.terminal || (m.until ?? 0) > now)) || (h !== undefined && h.until > now);
  }

  /**
   * What stays this instance's own in a record from the team: its sign-in marks, an opt-out of
   * cooldowns, an egress IP's hold.
   */
  private keepLocal(conn: ConnectionRecord, before: SharedHealth, merged: SharedHealth, now: number): SharedHealth {
    const mark = this.localMarks.get(conn.id);
    if (mark?.terminal === true && isTerminalStatus(before.testStatus) && !isTerminalStatus(merged.testStatus)) return before;
    if (isTerminalStatus(merged.testStatus)) return merged;
    let next = merged;
    if (conn.disableCooling) next = { ...next, testStatus: before.testStatus, rateLimitedUntil: before.rateLimitedUntil, backoffLevel: before.backoffLevel };
    // A hold of this instance's own (a sign-in that cannot refresh now, an egress IP) is kept.
    for (const until of [mark && !mark.terminal ? mark.until : null, this.localHolds.get(conn.id)?.until ?? null]) {
      if (until === null || until <= now) continue;
      if (next.rateLimitedUntil === null || next.rateLimitedUntil < until) next = { ...next, testStatus: 'unavailable', rateLimitedUntil: until };
    }
    return next;
  }

  /** These connections were held here only (their egress IP's lockout): a record from the team keeps the hold. */
  noteLocalHold(ids: readonly string[], e: HoldEvent): void {
    for (const id of ids) this.localHolds.set(id, e);
  }

  /**
   * This instance marked a connection from outside an upstream answer (its Claude sign-in is dead,
   * or cannot refresh now): a fact about this instance's credentials, not the account's, so it is
   * not published, and a record from the team does not lift it.
   */
  noteLocalMark(id: string, m: { kind: 'terminal' } | { kind: 'cooling'; until: number }): void {
    this.localMarks.set(id, m.kind === 'terminal' ? { terminal: true, until: null } : { terminal: false, until: m.until });
  }

  /** The connection's own marks and holds end (a passing test, new credentials, removed). */
  forgetLocal(id: string): void {
    this.localMarks.delete(id);
    this.localHolds.delete(id);
  }

  // ---- model lockouts ----------------------------------------------------------------------------

  private applyLock(k: string, rec: LockRecord | null): void {
    const key = parseLockKey(k);
    if (key === null) return;
    let republish: LockRecord['e'] | null = null;
    for (const id of this.d.teamIds.localIds(key.teamId)) {
      const conn = this.l.registry.get(id);
      if (!conn) continue;
      if (rec === null || !rec.e) {
        this.l.lockouts.applyRemote(id, key.scope, key.key, null);
        continue;
      }
      // A status lock is this instance's rule to apply; with the switch off here it is not.
      if (rec.e.origin === 'status' && !this.l.lockoutsEnabled()) continue;
      const local = this.l.lockouts.entry(id, key.scope, key.key);
      const merged = joinLock(local && sharedLockOf(local), rec);
      // seq: attempts dispatched here before this cooldown reached us were in flight before it.
      const entry: LockEntry = { ...merged, connectionId: id, seq: this.l.seq() };
      this.l.lockouts.applyRemote(id, key.scope, key.key, entry);
      if (rec.op === 'join' && !sameLock(merged, rec.e)) republish = merged;
    }
    if (republish !== null) {
      this.locks.publish(k, { op: 'join', e: republish }, ttlUntil(Math.max(republish.forgetAt, republish.expiresAt), this.now(), 60_000));
    }
  }

  // ---- outlier records ---------------------------------------------------------------------------

  private applyOutlier(teamId: string, v: OutlierShare | null): void {
    let any = false;
    for (const id of this.d.teamIds.localIds(teamId)) {
      const conn = this.l.registry.get(id);
      if (!conn) continue;
      this.l.outliers.applyRemote(v?.provider ?? conn.provider, id, v?.r ?? null);
      any = true;
    }
    // Failure streaks show in the health model.
    if (any) this.l.changed();
  }

  // ---- provider breakers and the window gate -----------------------------------------------------

  /** A record's window names connections by their team ids (another instance's local ids mean nothing here). */
  private toTeam(r: BreakerRecord): BreakerRecord {
    if (r.window.length === 0) return r;
    return { ...r, window: r.window.map((o) => (o.conn === ANY_CONNECTION ? o : { ...o, conn: this.d.teamIds.ofId(o.conn) ?? o.conn })) };
  }

  private toLocal(r: BreakerRecord): BreakerRecord {
    if (r.window.length === 0) return r;
    return { ...r, window: r.window.map((o) => (o.conn === ANY_CONNECTION ? o : { ...o, conn: this.d.teamIds.localIds(o.conn)[0] ?? o.conn })) };
  }

  private applyBreaker(provider: string, rec: BreakerShare | null): void {
    if (rec === null || !rec.r) {
      this.l.breakers.applyRemote(provider, null);
      return;
    }
    const incoming = this.toLocal(rec.r);
    const merged = joinBreaker(this.l.breakers.record(provider), { op: rec.op, r: incoming }, this.l.breakers.windowCap(provider));
    this.l.breakers.applyRemote(provider, merged);
    if (rec.op === 'join' && !sameBreaker(merged, incoming)) this.breakerTable.publish(provider, { op: 'join', r: this.toTeam(merged) }, BREAKER_KEEP_MS);
  }

  private applyKeyRelease(k: string, v: { at: number } | null): void {
    if (v === null) return;
    const bar = k.lastIndexOf('|');
    if (bar < 0) return;
    const provider = k.slice(0, bar);
    for (const id of this.d.teamIds.localIds(k.slice(bar + 1))) this.l.breakers.applyKeyRelease(provider, id);
  }

  private applyGate(provider: string, rec: GateShare | null): void {
    if (rec === null || !rec.e) {
      this.l.gate.applyRemote(provider, null);
      return;
    }
    const merged = joinGate(this.l.gate.entry(provider), rec, this.l.gate.cap(provider));
    this.l.gate.applyRemote(provider, merged);
    if (rec.op === 'join' && !sameGate(merged, rec.e)) this.gateTable.publish(provider, { op: 'join', e: merged }, GATE_KEEP_MS);
  }

  // ---- egress lockouts (SPEC §7c) ----------------------------------------------------------------

  /**
   * A family connection was rate-limited while leaving through `ip`: the team holds, on each
   * instance, the family connections that leave through that IP there. (The failing connection's
   * own cooldown travels as its health, to the whole team: see the decision file.)
   */
  publishEgress(ip: string, lock: EgressLock): void {
    const now = this.now();
    if (lock.until <= now) return;
    const prev = this.ipLocks.get(ip);
    if (prev !== undefined && prev.until >= lock.until) return;
    this.ipLocks.set(ip, lock);
    this.egressTable.publish(ip, lock, lock.until - now);
  }

  private applyEgress(ip: string, lock: EgressLock | null): void {
    const now = this.now();
    for (const [k, v] of this.ipLocks) if (v.until <= now) this.ipLocks.delete(k);
    if (lock === null || typeof lock.until !== 'number' || lock.until <= now) {
      this.ipLocks.delete(ip);
      return;
    }
    const prev = this.ipLocks.get(ip);
    if (prev === undefined || prev.until < lock.until) this.ipLocks.set(ip, lock);
    this.holdByIp(ip, lock, now, null);
  }

  private onEgressLearnt(connectionId: string, ip: string): void {
    const lock = this.ipLocks.size > 0 ? this.ipLocks.get(ip) : undefined;
    if (lock !== undefined) this.holdByIp(ip, lock, this.now(), connectionId);
  }

  private holdByIp(ip: string, lock: EgressLock, now: number, only: string | null): void {
    const egress = this.l.egress;
    if (!egress || lock.until <= now) return;
    const family = this.l.registry
      .all()
      .filter((c) => isEgressBucketed(c.provider) && !c.disableCooling && (only === null || c.id === only) && this.d.teamIds.of(c) !== lock.from);
    if (family.length === 0) return;
    const ips = egress.lastKnownOf(
      family.map((c) => c.id),
      now,
    );
    const siblings = family.filter((c) => ips.get(c.id) === ip);
    if (siblings.length === 0) return;
    const e: HoldEvent = {
      until: lock.until,
      reason: lock.reason,
      status: lock.status,
      message: `shares egress IP ${ip} with a connection that was rate-limited on another instance of the team (${lock.reason})`,
      now,
    };
    const held = this.l.holdLocally(siblings, e);
    if (held.length > 0) this.log?.info('egress.siblings_cooled', { ip, siblings: held, until: lock.until, from: 'team' });
  }

  // ---- claims made once across the team ----------------------------------------------------------

  /**
   * The local rule gave this attempt a probe, a probation call or a last-resort pick: claims it
   * across the team too (one bounded round trip each). Resolves to the kind refused when another
   * instance holds it (the caller gives back what it took here), else null ('granted', or 'local'
   * while Redis is unreachable: the single-process rule stands).
   */
  async claim(target: Target, want: ClaimWant): Promise<ClaimKind | null> {
    const team = this.d.team;
    const owner = `${team.instanceId}#${++this.claimSeq}`;
    const teamId = this.d.teamIds.of(target.conn);
    const got: string[] = [];
    const steps: [ClaimKind, string, number][] = [];
    if (want.lastResort && teamId !== null) steps.push(['lastResort', `lastResort:${teamId}`, this.l.lastResortMs]);
    if (want.probe) steps.push(['probe', `probe:${target.conn.provider}`, TEAM_PROBE_CLAIM_TTL_MS]);
    if (want.probation && teamId !== null) steps.push(['probation', `probation:${teamId}`, TEAM_PROBE_CLAIM_TTL_MS]);
    for (const [kind, name, ttl] of steps) {
      const r = await team.claim(name, owner, ttl);
      if (r === 'held') {
        for (const n of got) if (!n.startsWith('lastResort:')) void team.release(n, owner);
        return kind;
      }
      if (r === 'granted') got.push(name);
    }
    // A last-resort claim is a ration: it lapses by itself after lastResortMs, whatever the outcome.
    const names = got.filter((n) => !n.startsWith('lastResort:'));
    if (names.length > 0) this.held.set(target, { owner, names });
    return null;
  }

  /** The attempt reported its outcome (or gave up): its claims go back to the team. */
  release(target: Target): void {
    const h = this.held.get(target);
    if (h === undefined) return;
    this.held.delete(target);
    for (const n of h.names) void this.d.team.release(n, h.owner);
  }
}
