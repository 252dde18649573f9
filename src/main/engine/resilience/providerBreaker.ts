// The provider circuit breaker as a pure state machine (SPEC §1): a record per provider, pure
// transitions `(record, event, now, profile) -> record`, and a lazy read. HALF_OPEN is never
// stored: an OPEN record whose half-open time has passed *reads* as HALF_OPEN (R-CB-14), and a
// stale CLOSED/DEGRADED count decays on read after a quiet window (R-CB-05, R-CB-15). The single
// HALF_OPEN probe is claimed outside this file (it is process memory, not breaker state).
import type { BreakerState } from '../../../shared/model';

export interface BreakerProfile {
  degradationThreshold: number;
  failureThreshold: number;
  resetTimeoutMs: number;
}

interface Common {
  /** Provider-level failures counted since the breaker was last healthy. */
  failures: number;
  lastFailureAt: number | null;
  lastFailureStatus: number | null;
}

export type BreakerRecord =
  | ({ state: 'CLOSED' } & Common)
  | ({ state: 'DEGRADED'; successes: number } & Common)
  | ({ state: 'OPEN'; openedAt: number; halfOpenAt: number } & Common);

/** Consecutive successes that take a DEGRADED breaker back to CLOSED (R-CB-05 "enough successes"). */
export const DEGRADED_RECOVERY_SUCCESSES = 3;

export const CLOSED_RECORD: BreakerRecord = Object.freeze({
  state: 'CLOSED',
  failures: 0,
  lastFailureAt: null,
  lastFailureStatus: null,
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

/**
 * How long a CLOSED/DEGRADED count survives without a new failure. The guide's rule is "the
 * longest OPEN hold for the last failure kind, at least one cooldown"; OPEN holds do not escalate
 * here, so that is one reset timeout.
 */
export const quietWindowMs = (p: BreakerProfile) => p.resetTimeoutMs;

/** The state a record reads as at `now` (R-CB-14: never the raw stored state). */
export function stateAt(r: BreakerRecord, now: number, p: BreakerProfile): BreakerState {
  if (r.state === 'OPEN') return now >= r.halfOpenAt ? 'HALF_OPEN' : 'OPEN';
  return settle(r, now, p).state;
}

/** Applies the quiet-window decay: a stale CLOSED/DEGRADED count is forgotten. */
export function settle(r: BreakerRecord, now: number, p: BreakerProfile): BreakerRecord {
  if (r.state === 'OPEN' || r.failures === 0 || r.lastFailureAt === null) return r;
  if (now - r.lastFailureAt < quietWindowMs(p)) return r;
  return { state: 'CLOSED', failures: 0, lastFailureAt: r.lastFailureAt, lastFailureStatus: r.lastFailureStatus };
}

function byCount(failures: number, now: number, status: number | null, p: BreakerProfile): BreakerRecord {
  const common = { failures, lastFailureAt: now, lastFailureStatus: status };
  if (failures >= p.failureThreshold) return { state: 'OPEN', openedAt: now, halfOpenAt: now + p.resetTimeoutMs, ...common };
  if (failures >= p.degradationThreshold) return { state: 'DEGRADED', successes: 0, ...common };
  return { state: 'CLOSED', ...common };
}

/** A provider-level failure (408/500/502/503/504 or a transport failure). */
export function onProviderFailure(r: BreakerRecord, now: number, status: number | null, p: BreakerProfile): BreakerRecord {
  const from = stateAt(r, now, p);
  if (r.state === 'OPEN') {
    // Still OPEN: an attempt that started before the breaker opened; it changes nothing.
    if (from === 'OPEN') return r;
    // HALF_OPEN: the probe (or any call) failed; open again for a full reset timeout (R-CB-07).
    return move(from, {
      state: 'OPEN',
      openedAt: now,
      halfOpenAt: now + p.resetTimeoutMs,
      failures: r.failures + 1,
      lastFailureAt: now,
      lastFailureStatus: status,
    });
  }
  const s = settle(r, now, p);
  return move(from, byCount(s.failures + 1, now, status, p));
}

/** A call to the provider succeeded. */
export function onProviderSuccess(r: BreakerRecord, now: number, p: BreakerProfile): BreakerRecord {
  const from = stateAt(r, now, p);
  if (r.state === 'OPEN') {
    if (from === 'OPEN') return r; // a success that started before the breaker opened
    return move(from, { ...CLOSED_RECORD, lastFailureAt: r.lastFailureAt, lastFailureStatus: r.lastFailureStatus });
  }
  const s = settle(r, now, p);
  if (s.state === 'DEGRADED') {
    const successes = s.successes + 1;
    if (successes < DEGRADED_RECOVERY_SUCCESSES) return move(from, { ...s, successes });
    return move(from, { ...CLOSED_RECORD, lastFailureAt: s.lastFailureAt, lastFailureStatus: s.lastFailureStatus });
  }
  // CLOSED: a success forgets the failures below the degrade threshold.
  if (s.failures === 0) return s === r ? r : s;
  return move(from, { ...CLOSED_RECORD, lastFailureAt: s.lastFailureAt, lastFailureStatus: s.lastFailureStatus });
}

/** A good "test connection" (R-CB-05): DEGRADED (and any CLOSED count) goes back to CLOSED. */
export function onConnectionTestOk(r: BreakerRecord, now: number, p: BreakerProfile): BreakerRecord {
  if (r.state === 'OPEN') return r;
  const s = settle(r, now, p);
  if (s.failures === 0 && s.state === 'CLOSED') return s === r ? r : s;
  return move(stateAt(r, now, p), { ...CLOSED_RECORD, lastFailureAt: s.lastFailureAt, lastFailureStatus: s.lastFailureStatus });
}

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const numOrNull = (v: unknown): v is number | null => v === null || num(v);

/** Reads a persisted record; null when it is not one (the breaker then starts CLOSED). */
export function parseBreakerRecord(raw: unknown): BreakerRecord | null {
  if (!raw || typeof raw !== 'object') return null;
  const o = raw as Record<string, unknown>;
  if (!num(o.failures) || o.failures < 0 || !numOrNull(o.lastFailureAt) || !numOrNull(o.lastFailureStatus)) return null;
  const common = { failures: Math.floor(o.failures), lastFailureAt: o.lastFailureAt, lastFailureStatus: o.lastFailureStatus };
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
