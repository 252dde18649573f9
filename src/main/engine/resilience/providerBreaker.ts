// The provider circuit breaker as a pure state machine (SPEC §1): a record per provider, pure
// transitions `(record, event, now, profile) -> record`, and a lazy read. HALF_OPEN is never
// stored: an OPEN record whose half-open time has passed *reads* as HALF_OPEN (R-CB-14).
//
// Failures are counted in a sliding window (issue 9), not as a streak: the window holds the last
// `windowSize(profile)` provider-level outcomes (failures and successes) no older than the quiet
// window (one reset timeout). The breaker is DEGRADED / OPEN when the window holds at least
// `degradationThreshold` / `failureThreshold` failures (R-CB-08, now minimum counts), they are at
// least `failureRatePercent` of its outcomes, and they come from more than one connection (or
// from the provider's only one): a provider failing every other request trips, one bad key among
// good ones never does. A stale CLOSED/DEGRADED window decays on read (R-CB-05, R-CB-15). Any
// success closes an OPEN breaker: the provider answers, so it must not stay shut. The single
// HALF_OPEN probe is claimed outside this file (it is process memory, not breaker state).
import type { BreakerState } from '../../../shared/model';

export interface BreakerProfile {
  degradationThreshold: number;
  failureThreshold: number;
  resetTimeoutMs: number;
  /** Least share of failures among the window's outcomes, in percent, for DEGRADED or OPEN. */
  failureRatePercent: number;
}

/** One provider-level outcome. `conn` is the connection id; '*' = unknown (a record from before windows). */
export interface BreakerOutcome {
  at: number;
  ok: boolean;
  conn: string;
}

interface Common {
  /** Provider-level failures in the window (as of the record's last change). */
  failures: number;
  lastFailureAt: number | null;
  lastFailureStatus: number | null;
  /** The sliding window, oldest first. */
  window: readonly BreakerOutcome[];
}

export type BreakerRecord =
  | ({ state: 'CLOSED' } & Common)
  | ({ state: 'DEGRADED'; successes: number } & Common)
  | ({ state: 'OPEN'; openedAt: number; halfOpenAt: number } & Common);

/** Consecutive successes that take a DEGRADED breaker back to CLOSED (R-CB-05 "enough successes"). */
export const DEGRADED_RECOVERY_SUCCESSES = 3;
/** The window never holds more outcomes than this, whatever the thresholds and rate. */
export const MAX_WINDOW_OUTCOMES = 2_000;
/** A connection id standing for "every connection" (records read back from before windows existed). */
export const ANY_CONNECTION = '*';

export const CLOSED_RECORD: BreakerRecord = Object.freeze({
  state: 'CLOSED',
  failures: 0,
  lastFailureAt: null,
  lastFailureStatus: null,
  window: Object.freeze([]) as readonly BreakerOutcome[],
}) as BreakerRecord;

/** Every legal move, from the state as read (HALF_OPEN included) to the stored state. */
const LEGAL: Record<BreakerState, readonly BreakerRecord['state'][]> = {
  CLOSED: ['CLOSED', 'DEGRADED', 'OPEN'],
  DEGRADED: ['CLOSED', 'DEGRADED', 'OPEN'],
  OPEN: ['OPEN', 'CLOSED'],
  HALF_OPEN: ['OPEN', 'CLOSED'],
};

export class IllegalBreakerTransition extends Error {
  constructor(from: BreakerState, to: BreakerState) {
    super(`illegal breaker transition ${from} -> ${to}`);
    this.name = 'IllegalBreakerTransition';
  }
}

function move(from: BreakerState, to: BreakerRecord): BreakerRecord {
  if (!LEGAL[from].includes(to.state)) throw new IllegalBreakerTransition(from, to.state);
  return to;
}

/** The quiet window: outcomes older than this leave the sliding window (one reset timeout). */
export const quietWindowMs = (p: BreakerProfile) => p.resetTimeoutMs;

/** How many outcomes the window keeps: enough for failureThreshold failures at the least rate. */
export function windowSize(p: BreakerProfile): number {
  const rate = Math.min(100, Math.max(1, p.failureRatePercent));
  return Math.min(MAX_WINDOW_OUTCOMES, Math.max(p.failureThreshold, Math.ceil((p.failureThreshold * 100) / rate)));
}

const countFailures = (w: readonly BreakerOutcome[]) => {
  let n = 0;
  for (const o of w) if (!o.ok) n++;
  return n;
};

/** The state a record reads as at `now` (R-CB-14: never the raw stored state). */
export function stateAt(r: BreakerRecord, now: number, p: BreakerProfile): BreakerState {
  if (r.state === 'OPEN') return now >= r.halfOpenAt ? 'HALF_OPEN' : 'OPEN';
  return settle(r, now, p).state;
}

/** Drops outcomes older than the quiet window; with no failure left, the breaker is CLOSED and empty. */
export function settle(r: BreakerRecord, now: number, p: BreakerProfile): BreakerRecord {
  if (r.state === 'OPEN' || r.window.length === 0) return r;
  const quiet = quietWindowMs(p);
  let drop = 0;
  while (drop < r.window.length && now - r.window[drop]!.at >= quiet) drop++;
  if (drop === 0) return r;
  const window = r.window.slice(drop);
  const failures = countFailures(window);
  if (failures === 0) return { ...CLOSED_RECORD, lastFailureAt: r.lastFailureAt, lastFailureStatus: r.lastFailureStatus };
  return { ...r, window, failures };
}

function push(w: readonly BreakerOutcome[], o: BreakerOutcome, p: BreakerProfile): BreakerOutcome[] {
  const size = windowSize(p);
  const out = w.length + 1 > size ? w.slice(w.length + 1 - size) : w.slice();
  out.push(o);
  return out;
}

/** What the window says: the level it has reached (thresholds as minimum counts, rate, breadth). */
export function windowLevel(w: readonly BreakerOutcome[], p: BreakerProfile, connections: number): 'OPEN' | 'DEGRADED' | null {
  let failures = 0;
  let first: string | null = null;
  let broad = connections <= 1;
  for (const o of w) {
    if (o.ok) continue;
    failures++;
    if (broad) continue;
    if (o.conn === ANY_CONNECTION) broad = true;
    else if (first === null) first = o.conn;
    else if (o.conn !== first) broad = true;
  }
  if (!broad || failures === 0 || failures * 100 < p.failureRatePercent * w.length) return null;
  if (failures >= p.failureThreshold) return 'OPEN';
  if (failures >= p.degradationThreshold) return 'DEGRADED';
  return null;
}

/** The connections that failed in the window (an OPEN breaker keeps them out until it half-opens). */
export function implicatedConnections(r: BreakerRecord): Set<string> {
  const out = new Set<string>();
  for (const o of r.window) if (!o.ok) out.add(o.conn);
  return out;
}

export interface FailureEvent {
  status: number | null;
  conn: string;
  /** The attempt held the HALF_OPEN (or early) probe. */
  probe: boolean;
  /** Usable connections of the provider (enabled, not terminal): 1 = the failure is always provider-wide. */
  connections: number;
}

/** A provider-level failure (408/500/502/503/504 or a transport failure) that counts as provider-wide evidence. */
export function onProviderFailure(r: BreakerRecord, now: number, e: FailureEvent, p: BreakerProfile): BreakerRecord {
  const from = stateAt(r, now, p);
  const outcome: BreakerOutcome = { at: now, ok: false, conn: e.conn };
  if (r.state === 'OPEN') {
    // Still OPEN and not the probe: an attempt that started before the breaker opened; it changes nothing.
    if (from === 'OPEN' && !e.probe) return r;
    // The probe (or any call in HALF_OPEN) failed: open again for a full reset timeout (R-CB-07).
    const window = push(r.window, outcome, p);
    return move(from, {
      state: 'OPEN',
      openedAt: now,
      halfOpenAt: now + p.resetTimeoutMs,
      failures: countFailures(window),
      lastFailureAt: now,
      lastFailureStatus: e.status,
      window,
    });
  }
  const s = settle(r, now, p);
  const window = push(s.window, outcome, p);
  const common = { failures: countFailures(window), lastFailureAt: now, lastFailureStatus: e.status, window };
  const level = windowLevel(window, p, e.connections);
  if (level === 'OPEN') return move(from, { state: 'OPEN', openedAt: now, halfOpenAt: now + p.resetTimeoutMs, ...common });
  if (level === 'DEGRADED' || s.state === 'DEGRADED') return move(from, { state: 'DEGRADED', successes: 0, ...common });
  return move(from, { state: 'CLOSED', ...common });
}

const closedAfter = (r: BreakerRecord): BreakerRecord => ({ ...CLOSED_RECORD, lastFailureAt: r.lastFailureAt, lastFailureStatus: r.lastFailureStatus });

/** A call to the provider succeeded (on connection `conn`). */
export function onProviderSuccess(r: BreakerRecord, now: number, conn: string, p: BreakerProfile): BreakerRecord {
  const from = stateAt(r, now, p);
  // The provider answered: an OPEN breaker (probe or a call already in flight) closes.
  if (r.state === 'OPEN') return move(from, closedAfter(r));
  const s = settle(r, now, p);
  if (s.failures === 0) return s;
  const successes = s.state === 'DEGRADED' ? s.successes + 1 : 0;
  const window = push(s.window, { at: now, ok: true, conn }, p);
  const failures = countFailures(window);
  // Enough successes in a row, or the last failure pushed out of the window: healthy again.
  if (successes >= DEGRADED_RECOVERY_SUCCESSES || failures === 0) return move(from, closedAfter(s));
  return move(from, s.state === 'DEGRADED' ? { ...s, successes, window, failures } : { ...s, window, failures });
}

/** A good "test connection" (R-CB-05): DEGRADED (and any CLOSED count) goes back to CLOSED. */
export function onConnectionTestOk(r: BreakerRecord, now: number, p: BreakerProfile): BreakerRecord {
  if (r.state === 'OPEN') return r;
  const s = settle(r, now, p);
  if (s.window.length === 0 && s.state === 'CLOSED') return s;
  return move(stateAt(r, now, p), closedAfter(s));
}

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const numOrNull = (v: unknown): v is number | null => v === null || num(v);

function parseWindow(raw: unknown, failures: number, lastFailureAt: number | null): BreakerOutcome[] | null {
  if (raw === undefined) {
    // A record from before the sliding window: its failures, all at the last failure, any connection.
    if (lastFailureAt === null) return [];
    return Array.from({ length: Math.min(failures, MAX_WINDOW_OUTCOMES) }, () => ({ at: lastFailureAt, ok: false, conn: ANY_CONNECTION }));
  }
  if (!Array.isArray(raw) || raw.length > MAX_WINDOW_OUTCOMES) return null;
  const out: BreakerOutcome[] = [];
  for (const o of raw as unknown[]) {
    if (!o || typeof o !== 'object') return null;
    const { at, ok, conn } = o as Record<string, unknown>;
    if (!num(at) || typeof ok !== 'boolean' || typeof conn !== 'string') return null;
    out.push({ at, ok, conn });
  }
  return out;
}

/** Reads a persisted record; null when it is not one (the breaker then starts CLOSED). */
export function parseBreakerRecord(raw: unknown): BreakerRecord | null {
  if (!raw || typeof raw !== 'object') return null;
  const o = raw as Record<string, unknown>;
  if (!num(o.failures) || o.failures < 0 || !numOrNull(o.lastFailureAt) || !numOrNull(o.lastFailureStatus)) return null;
  const window = parseWindow(o.window, Math.floor(o.failures), o.lastFailureAt);
  if (window === null) return null;
  const common = { failures: countFailures(window), lastFailureAt: o.lastFailureAt, lastFailureStatus: o.lastFailureStatus, window };
  switch (o.state) {
    case 'CLOSED':
      return { state: 'CLOSED', ...common };
    case 'DEGRADED':
      return num(o.successes) ? { state: 'DEGRADED', successes: Math.floor(o.successes), ...common } : null;
    case 'OPEN':
      return num(o.openedAt) && num(o.halfOpenAt) ? { state: 'OPEN', openedAt: o.openedAt, halfOpenAt: o.halfOpenAt, ...common } : null;
    default:
      return null;
  }
}
