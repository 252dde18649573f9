// The resilience records a team shares (issue 26) and how a record another instance published
// merges into the state held here. Pure functions, no Redis, no clock of their own.
//
// The team's tables keep the newest version of a record (team/replicator.ts). That is right for a
// change made knowing the state before it (a success clears, an operator clears), but two
// instances that learn a failure at the same moment each write a record the other did not see,
// and "newest wins" could then shorten a cooldown or lose a step of backoff. So a record says how
// it was made: `set` (it replaces what is held: clears, resets) or `join` (it only adds: a
// cooldown, a hold, a lock, a failure in a window). A `join` merges with the state held here as a
// single process would have combined both failures: the later deadline, the higher backoff level
// (one step per stampede, not one per instance), a terminal state kept. When the merge differs
// from the record received, the instance that merged publishes the merge, so every instance ends
// with the same state (each merge only grows, so this stops after one round).
import { isTerminalStatus } from '../../../../shared/model';
import type { ConnectionHealthState } from '../../store/connectionsRepo';
import type { LockEntry } from '../modelLockout';
import type { GateEntry } from '../providerCooldownGate';
import { CLOSED_RECORD, type BreakerOutcome, type BreakerRecord } from '../providerBreaker';

export type ShareOp = 'join' | 'set';

/** A connection's health as the team shares it (lastUsedAt stays with each instance). */
export type SharedHealth = Pick<
  ConnectionHealthState,
  'testStatus' | 'rateLimitedUntil' | 'backoffLevel' | 'lastError' | 'lastErrorType' | 'errorCode' | 'lastErrorAt' | 'expiredRetries'
>;

export interface HealthRecord {
  op: ShareOp;
  h: SharedHealth;
}

export function sharedHealthOf(h: SharedHealth): SharedHealth {
  return {
    testStatus: h.testStatus,
    rateLimitedUntil: h.rateLimitedUntil,
    backoffLevel: h.backoffLevel,
    lastError: h.lastError,
    lastErrorType: h.lastErrorType,
    errorCode: h.errorCode,
    lastErrorAt: h.lastErrorAt,
    expiredRetries: h.expiredRetries,
  };
}

export function sameHealth(a: SharedHealth, b: SharedHealth): boolean {
  return (
    a.testStatus === b.testStatus &&
    a.rateLimitedUntil === b.rateLimitedUntil &&
    a.backoffLevel === b.backoffLevel &&
    a.lastError === b.lastError &&
    a.lastErrorType === b.lastErrorType &&
    a.errorCode === b.errorCode &&
    a.lastErrorAt === b.lastErrorAt &&
    a.expiredRetries === b.expiredRetries
  );
}

const running = (until: number | null, now: number) => (until !== null && until > now ? until : null);

/** The health after a record from the team: replaced (`set`) or combined with the local one (`join`). */
export function joinHealth(local: SharedHealth, rec: HealthRecord, now: number): SharedHealth {
  const inc = rec.h;
  if (rec.op === 'set' || isTerminalStatus(inc.testStatus)) return sharedHealthOf(inc);
  // A failure elsewhere never ends a terminal state here (as onConnectionFailure never does).
  if (isTerminalStatus(local.testStatus)) return sharedHealthOf(local);
  const a = running(local.rateLimitedUntil, now);
  const b = running(inc.rateLimitedUntil, now);
  const until = a === null ? b : b === null ? a : Math.max(a, b);
  // The error fields of the later failure (the record's on a tie).
  const errors = (local.lastErrorAt ?? -Infinity) > (inc.lastErrorAt ?? -Infinity) ? local : inc;
  return {
    testStatus: until !== null ? 'unavailable' : inc.testStatus,
    rateLimitedUntil: until ?? inc.rateLimitedUntil,
    backoffLevel: Math.max(local.backoffLevel, inc.backoffLevel),
    lastError: errors.lastError,
    lastErrorType: errors.lastErrorType,
    errorCode: errors.errorCode,
    lastErrorAt: errors.lastErrorAt,
    expiredRetries: Math.max(local.expiredRetries, inc.expiredRetries),
  };
}

/** A model lockout as the team shares it: the entry without this instance's connection id and sequence number. */
export type SharedLock = Omit<LockEntry, 'connectionId' | 'seq'>;

export interface LockRecord {
  op: ShareOp;
  e: SharedLock;
}

export function sharedLockOf(e: LockEntry): SharedLock {
  const { connectionId: _c, seq: _s, ...rest } = e;
  return rest;
}

export function sameLock(a: SharedLock, b: SharedLock): boolean {
  return (
    a.expiresAt === b.expiresAt &&
    a.forgetAt === b.forgetAt &&
    a.failureCount === b.failureCount &&
    a.backoffLevel === b.backoffLevel &&
    a.origin === b.origin &&
    a.reason === b.reason &&
    a.status === b.status &&
    a.lockedAt === b.lockedAt &&
    (a.guessed === true) === (b.guessed === true)
  );
}

/** A lockout after a record from the team (`join`: the later expiry and the higher counts win). */
export function joinLock(local: SharedLock | undefined, rec: LockRecord): SharedLock {
  const inc = rec.e;
  if (rec.op === 'set' || local === undefined) return inc;
  const longer = local.expiresAt > inc.expiresAt ? local : inc;
  return {
    ...inc,
    reason: longer.reason,
    status: longer.status,
    origin: longer.origin,
    expiresAt: longer.expiresAt,
    forgetAt: Math.max(local.forgetAt, inc.forgetAt),
    failureCount: Math.max(local.failureCount, inc.failureCount),
    backoffLevel: Math.max(local.backoffLevel, inc.backoffLevel),
    guessed: longer.guessed,
  };
}

export interface BreakerShare {
  op: ShareOp;
  r: BreakerRecord;
}

const outcomeKey = (o: BreakerOutcome) => `${o.at}\u0000${o.ok ? 1 : 0}\u0000${o.conn}`;

/** Two windows as one: every outcome once, oldest first, at most `cap` (the newest kept). */
export function unionWindow(a: readonly BreakerOutcome[], b: readonly BreakerOutcome[], cap: number): BreakerOutcome[] {
  const seen = new Set<string>();
  const out: BreakerOutcome[] = [];
  for (const o of [...a, ...b]) {
    const k = outcomeKey(o);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(o);
  }
  out.sort((x, y) => x.at - y.at || outcomeKey(x).localeCompare(outcomeKey(y)));
  return out.length > cap ? out.slice(out.length - cap) : out;
}

const rank = (s: BreakerRecord['state']) => (s === 'OPEN' ? 2 : s === 'DEGRADED' ? 1 : 0);

/**
 * A provider's breaker after a record from the team. `set` (a success, a reset, a good test)
 * replaces. `join` (a failure): an OPEN record is never closed by a failure, of two openings the
 * later one stands, and two CLOSED / DEGRADED records count the failures of both windows.
 */
export function joinBreaker(local: BreakerRecord | undefined, rec: BreakerShare, cap: number): BreakerRecord {
  const inc = rec.r;
  if (rec.op === 'set' || local === undefined) return inc;
  if (local.state === 'OPEN' || inc.state === 'OPEN') {
    if (local.state !== 'OPEN') return inc;
    if (inc.state !== 'OPEN') return local;
    return local.openedAt > inc.openedAt ? local : inc;
  }
  const window = unionWindow(local.window, inc.window, cap);
  let failures = 0;
  for (const o of window) if (!o.ok) failures++;
  const later = (local.lastFailureAt ?? -Infinity) > (inc.lastFailureAt ?? -Infinity) ? local : inc;
  const common = { failures, window, lastFailureAt: later.lastFailureAt, lastFailureStatus: later.lastFailureStatus };
  const top = rank(local.state) > rank(inc.state) ? local : inc;
  if (top.state === 'DEGRADED') return { ...top, ...common };
  return { ...CLOSED_RECORD, ...common, state: 'CLOSED' };
}

export function sameBreaker(a: BreakerRecord, b: BreakerRecord): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export interface GateShare {
  op: ShareOp;
  e: GateEntry;
}

/** The window gate after a record from the team (`join`: failures of both windows, the later cooling end). */
export function joinGate(local: GateEntry | undefined, rec: GateShare, cap: number): GateEntry {
  const inc = rec.e;
  if (rec.op === 'set' || local === undefined) return inc;
  const failures = [...new Set([...local.failures, ...inc.failures])].sort((x, y) => x - y);
  const coolingUntil =
    local.coolingUntil === null ? inc.coolingUntil : inc.coolingUntil === null ? local.coolingUntil : Math.max(local.coolingUntil, inc.coolingUntil);
  return { failures: failures.length > cap ? failures.slice(failures.length - cap) : failures, coolingUntil };
}

export function sameGate(a: GateEntry, b: GateEntry): boolean {
  return a.coolingUntil === b.coolingUntil && a.failures.length === b.failures.length && a.failures.every((t, i) => t === b.failures[i]);
}

/** An egress lockout as the team shares it: bound to the IP, not to a connection (SPEC §7c). */
export interface EgressLock {
  until: number;
  reason: string;
  status: number | null;
  message: string;
  provider: string;
  /** The team id of the connection that was rate-limited (its own cooldown travels as its health). */
  from: string | null;
}
