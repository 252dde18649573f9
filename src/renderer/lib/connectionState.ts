// The live state of a connection as the dashboard shows it, derived from the last pushed
// snapshots and the current (server) time. Expiry is read lazily here, like the engine does: a
// cooldown whose end has passed is simply healthy again, and an OPEN breaker past its reset time
// reads as HALF_OPEN, without waiting for the next push. The health model (src/shared/health.ts)
// is what every page shows: read it with `healthNow`, which lifts holds past their end the same
// way the engine derives them.
import type { ConditionKind, ClearedBy, ConnectionHealthItem, HealthCounts as ModelCounts, HealthSnapshot, HealthState } from '../../shared/health';
import { conditionActive, HEALTH_GROUP, healthAt } from '../../shared/health';
import type {
  BreakerState,
  BreakerView,
  ConnectionView,
  CooldownEntry,
  ModelLockoutView,
  TerminalStatus,
} from '../../shared/model';
import { isTerminalStatus } from '../../shared/model';

export type LiveState =
  | { kind: 'terminal'; status: TerminalStatus; reason: string | null; detail: string | null }
  | { kind: 'disabled' }
  | {
      kind: 'cooling';
      until: number;
      remainingMs: number;
      reason: string | null;
      detail: string | null;
      errorCode: string | null;
      backoffLevel: number;
    }
  | { kind: 'healthy'; lastError: string | null; lastErrorType: string | null };

/**
 * The cooldown layer's own entry wins over the copy on the connection row when both exist, so the
 * Connections page and the Cooldown manager always agree.
 */
export function liveStateOf(conn: ConnectionView, entry: CooldownEntry | undefined, now: number): LiveState {
  const h = conn.health;
  const terminalStatus = entry?.terminal ? entry.status : isTerminalStatus(h.testStatus) ? h.testStatus : null;
  if (terminalStatus && isTerminalStatus(terminalStatus)) {
    return {
      kind: 'terminal',
      status: terminalStatus,
      reason: entry?.lastErrorType ?? h.lastErrorType,
      detail: entry?.lastError ?? h.lastError,
    };
  }
  if (!conn.enabled) return { kind: 'disabled' };
  const until = entry ? entry.rateLimitedUntil : h.rateLimitedUntil;
  if (until !== null && until > now) {
    return {
      kind: 'cooling',
      until,
      remainingMs: until - now,
      reason: entry?.lastErrorType ?? h.lastErrorType,
      detail: entry?.lastError ?? h.lastError,
      errorCode: entry?.errorCode ?? h.errorCode,
      backoffLevel: entry?.backoffLevel ?? h.backoffLevel,
    };
  }
  return { kind: 'healthy', lastError: h.lastError, lastErrorType: h.lastErrorType };
}

/** Lockouts still in force at `now`. */
export function activeLockouts(lockouts: ModelLockoutView[], now: number): ModelLockoutView[] {
  return lockouts.filter((l) => l.expiresAt > now);
}

/** The breaker state as of `now`: an OPEN breaker whose probe time has come reads HALF_OPEN. */
export function breakerStateAt(b: BreakerView, now: number): BreakerState {
  if (b.state === 'OPEN' && b.halfOpenAt !== null && b.halfOpenAt <= now) return 'HALF_OPEN';
  return b.state;
}

export interface OutOfRouting {
  cooling: (CooldownEntry & { remainingMs: number })[];
  terminal: CooldownEntry[];
  lockouts: ModelLockoutView[];
}

/** What the Cooldown manager lists: live cooldowns, terminal states and live lockouts. */
export function outOfRouting(entries: CooldownEntry[], lockouts: ModelLockoutView[], now: number): OutOfRouting {
  const cooling: OutOfRouting['cooling'] = [];
  const terminal: CooldownEntry[] = [];
  for (const e of entries) {
    if (e.terminal || isTerminalStatus(e.status)) terminal.push(e);
    else if (e.rateLimitedUntil !== null && e.rateLimitedUntil > now) cooling.push({ ...e, remainingMs: e.rateLimitedUntil - now });
  }
  cooling.sort((a, b) => a.remainingMs - b.remainingMs);
  return { cooling, terminal, lockouts: activeLockouts(lockouts, now).sort((a, b) => a.expiresAt - b.expiresAt) };
}

export interface HealthCounts {
  healthy: number;
  cooling: number;
  terminal: number;
  disabled: number;
}

export function countStates(states: LiveState[]): HealthCounts {
  const out: HealthCounts = { healthy: 0, cooling: 0, terminal: 0, disabled: 0 };
  for (const s of states) out[s.kind]++;
  return out;
}

// ---- the health model ----------------------------------------------------------------------------

export const NO_COUNTS: ModelCounts = { healthy: 0, limited: 0, out: 0, needsAttention: 0, disabled: 0, total: 0 };

/** The engine's health model as of `now` (a hold past its end is gone); null before the first snapshot. */
export function healthNow(h: HealthSnapshot | null, now: number): HealthSnapshot | null {
  return h === null ? null : healthAt(h, now);
}

export function healthOf(h: HealthSnapshot | null, connectionId: string): ConnectionHealthItem | undefined {
  return h?.connections.find((c) => c.connectionId === connectionId);
}

export type HealthTone = 'ok' | 'warn' | 'danger' | 'neutral' | 'info';

export function healthTone(state: HealthState): HealthTone {
  switch (HEALTH_GROUP[state]) {
    case 'healthy':
      return 'ok';
    case 'limited':
      return state === 'probing' ? 'info' : 'warn';
    case 'out':
      return state === 'breaker_open' ? 'danger' : 'warn';
    case 'needsAttention':
      return 'danger';
    case 'disabled':
      return 'neutral';
  }
}

/** One target held out of routing now, as the Cooldown manager lists it. */
export interface HeldTarget {
  connectionId: string;
  name: string;
  provider: string;
  model: string | null;
  kind: ConditionKind;
  reason: string;
  until: number | null;
  clearedBy: ClearedBy;
}

/** Every hold in force: whole connections and single models, soonest lift first (no end last). */
export function heldTargets(h: HealthSnapshot | null, now: number): HeldTarget[] {
  const out: HeldTarget[] = [];
  for (const c of h?.connections ?? []) {
    for (const x of c.conditions) {
      if (!x.holds || !conditionActive(x, now) || x.kind === 'disabled') continue;
      out.push({ connectionId: c.connectionId, name: c.name, provider: c.provider, model: x.model, kind: x.kind, reason: x.reason, until: x.until, clearedBy: x.clearedBy });
    }
  }
  return out.sort((a, b) => (a.until ?? Infinity) - (b.until ?? Infinity));
}
