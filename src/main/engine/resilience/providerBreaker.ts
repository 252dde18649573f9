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
//
// Faults that move between keys (issue 19): an opening is *provider-wide* only when no key of the
// provider succeeded within the quiet window (or the provider has one usable connection); then §1
// holds: every implicated key stays out for the full reset timeout. Otherwise the opening is
// *key-level*: it keeps out only the keys whose latest outcome is a failure, each for a short hold
// counted from its own last failure (KEY_LEVEL_BASE_HOLD_MS, doubled by each failed probe while the
// breaker stays open, capped by the reset timeout); a key that did not fail is never held out, and
// its holds are our guess (the pipeline's last-resort probe may go around them).
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
  | ({
      state: 'OPEN';
      openedAt: number;
      halfOpenAt: number;
      /** Provider-wide opening (§1: full reset timeout); false = key-level (short holds, see above). */
      wide: boolean;
      /** How long each implicated key is held out after its own last failure (the reset timeout when wide). */
      holdMs: number;
      /** Openings in a row without a close (1 = first); a key-level hold doubles with each. */
      opens: number;
    } & Common);

/** Consecutive successes that take a DEGRADED breaker back to CLOSED (R-CB-05 "enough successes"). */
export const DEGRADED_RECOVERY_SUCCESSES = 3;
/** The window never holds more outcomes than this, whatever the thresholds and rate. */
export const MAX_WINDOW_OUTCOMES = 2_000;
/** A key-level opening's first hold (doubled by each failed probe while the breaker stays open, capped by the reset timeout). */
export const KEY_LEVEL_BASE_HOLD_MS = 2_000;
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

/**
 * The connections whose latest outcome in the window is a failure, with that failure's time (an
 * OPEN breaker keeps them out; a key that succeeded after its failures is never held out).
 */
export function implicatedConnections(r: BreakerRecord): Map<string, number> {
  const out = new Map<string, number>();
  for (const o of r.window) {
    if (o.ok) out.delete(o.conn);
    else out.set(o.conn, o.at);
  }
  return out;
}

/** How long a key is held out after its last failure by an opening (the `opens`-th in a row). */
export function holdFor(wide: boolean, opens: number, p: BreakerProfile): number {
  if (wide) return p.resetTimeoutMs;
  return Math.min(p.resetTimeoutMs, KEY_LEVEL_BASE_HOLD_MS * 2 ** Math.min(Math.max(0, opens - 1), 20));
}

export interface FailureEvent {
  status: number | null;
  conn: string;
  /** The attempt held the HALF_OPEN (or early) probe. */
  probe: boolean;
  /** Usable connections of the provider (enabled, not terminal): 1 = the failure is always provider-wide. */
  connections: number;
  /** Some connection of the provider succeeded within the quiet window: an opening now is key-level. */
  recentSuccess?: boolean;
}

function opened(now: number, e: FailureEvent, opens: number, common: Common, p: BreakerProfile): BreakerRecord {
  const wide = e.connections <= 1 || e.recentSuccess !== true;
  const holdMs = holdFor(wide, opens, p);
  return { state: 'OPEN', openedAt: now, halfOpenAt: now + holdMs, wide, holdMs, opens, ...common };
}

/** A provider-level failure (408/500/502/503/504 or a transport failure) that counts as provider-wide evidence. */
export function onProviderFailure(r: BreakerRecord, now: number, e: FailureEvent, p: BreakerProfile): BreakerRecord {
  const from = stateAt(r, now, p);
  const outcome: BreakerOutcome = { at: now, ok: false, conn: e.conn };
  if (r.state === 'OPEN') {
    // Not the probe: provider-wide and still OPEN, an attempt that started before the breaker
    // opened changes nothing; key-level, the key failed now and is held again from now.
    if (!e.probe && (from === 'OPEN' || !r.wide)) {
      if (r.wide) return r;
      const window = push(r.window, outcome, p);
      return { ...r, window, failures: countFailures(window), lastFailureAt: now, lastFailureStatus: e.status };
    }
    // The probe (or any call in HALF_OPEN) failed: open again (R-CB-07), for a full reset timeout
    // when provider-wide, for a doubled hold when key-level.
    const window = push(r.window, outcome, p);
    return move(from, opened(now, e, r.opens + 1, { failures: countFailures(window), lastFailureAt: now, lastFailureStatus: e.status, window }, p));
  }
  const s = settle(r, now, p);
  const window = push(s.window, outcome, p);
  const common = { failures: countFailures(window), lastFailureAt: now, lastFailureStatus: e.status, window };
  const level = windowLevel(window, p, e.connections);
  if (level === 'OPEN') return move(from, opened(now, e, 1, common, p));
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
    case 'OPEN': {
      if (!num(o.openedAt) || !num(o.halfOpenAt)) return null;
      // A record from before key-level openings was provider-wide.
      const wide = typeof o.wide === 'boolean' ? o.wide : true;
      const holdMs = num(o.holdMs) ? o.holdMs : o.halfOpenAt - o.openedAt;
      const opens = num(o.opens) ? Math.max(1, Math.floor(o.opens)) : 1;
      return { state: 'OPEN', openedAt: o.openedAt, halfOpenAt: o.halfOpenAt, wide, holdMs, opens, ...common };
    }
    default:
      return null;
  }
}
