// The live state of a connection as the dashboard shows it, derived from the last pushed
// snapshots and the current (server) time. Expiry is read lazily here, like the engine does: a
// cooldown whose end has passed is simply healthy again, and an OPEN breaker past its reset time
// reads as HALF_OPEN, without waiting for the next push.
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
