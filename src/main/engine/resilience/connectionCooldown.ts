// Connection cooldown (SPEC §2) as pure transitions over a connection's persisted health: a
// failure cools it (base · 2^n with one backoff step, a configured retry delay, or the upstream's
// hint), a concurrency limit rests it briefly without a step, a terminal body marks it banned /
// expired / credits_exhausted, and a success clears it (clearAccountError, R-CC-40). Eligibility
// is read lazily from `rateLimitedUntil` (R-CC-39). Terminal states are never overwritten by a
// cooldown and never cleared by the cooldown manager (R-CC-35, R-CM-03).
import { isTerminalStatus, type TerminalStatus } from '../../../shared/model';
import type { ConnectionHealthState } from '../store/connectionsRepo';
import type { CooldownRule } from './classifyFailure';
import type { ConnectionMark } from './port';
import type { RetryDelay } from './retryDelay';

/** R-CC-38: consecutive credential rejections after which a connection is `expired`. */
export const EXPIRED_RETRY_MAX = 3;

export type ConnectionStatus = 'active' | 'cooling' | TerminalStatus;

export interface CooldownSettings {
  /** Base cooldown of this connection's class (OAuth 5 s, API key / local 3 s). */
  baseMs: number;
  maxBackoffSteps: number;
  /** streamStallCooldown.enabled (R-CC-23). */
  coolOnStall: boolean;
}

export interface FailureEvent {
  rule: CooldownRule;
  reason: string;
  status: number | null;
  message: string;
  now: number;
  /** For the rate-limit rule: the source chosen by the precedence chain. */
  delay: RetryDelay;
  /**
   * The failed attempt was already in flight when this connection's last cooldown was set: it
   * must not add a backoff step or extend the cooldown (stampede protection, R-CC-14).
   */
  concurrent: boolean;
  /** The connection opted out of cooldowns: the error is recorded, the cooldown is reported, not set. */
  disableCooling: boolean;
}

export interface FailureOutcome {
  health: ConnectionHealthState;
  /** The cooldown this failure called for (ms), whether or not it was set; null when none. */
  coolMs: number | null;
}

/** The status a connection reads as at `now` (lazy: an elapsed cooldown is simply active). */
export function connectionStatusAt(h: ConnectionHealthState, now: number): ConnectionStatus {
  if (isTerminalStatus(h.testStatus)) return h.testStatus;
  return h.rateLimitedUntil !== null && h.rateLimitedUntil > now ? 'cooling' : 'active';
}

/** Cooldown for the next failure: base · 2^level, at most maxBackoffSteps doublings. */
export function backoffMs(baseMs: number, level: number, maxBackoffSteps: number): number {
  return baseMs * 2 ** Math.min(Math.max(0, level), maxBackoffSteps);
}

const nextLevel = (level: number, maxBackoffSteps: number) => Math.min(level + 1, maxBackoffSteps + 1);

function errorFields(e: FailureEvent) {
  return {
    lastError: e.message.slice(0, 500),
    lastErrorType: e.reason,
    errorCode: e.status !== null ? String(e.status) : e.reason,
    lastErrorAt: e.now,
  };
}

type LevelChange = 'keep' | 'bump' | 'reset';

/** What any transient cooldown holds: when it ends and its backoff level (a connection, or one model of it). */
export interface CooldownState {
  until: number | null;
  level: number;
}

/**
 * The core of every transient cooldown: sets a cooldown of `ms` from `now`. A cooldown never
 * shortens a longer one already running. A concurrent failure (stampede, R-CC-14) changes nothing,
 * except that an upstream hint asking for longer is honoured. Returns null when nothing changes.
 */
export function coolState(
  st: CooldownState,
  c: { now: number; ms: number; level: LevelChange; fromUpstream: boolean; concurrent: boolean; maxBackoffSteps: number },
): CooldownState | null {
  const until = c.now + Math.max(0, Math.round(c.ms));
  const running = st.until !== null && st.until > c.now ? st.until : null;
  if (c.concurrent && !(c.fromUpstream && (running === null || until > running))) return null;
  const level =
    c.concurrent || c.level === 'keep' ? st.level : c.level === 'reset' ? 0 : nextLevel(st.level, c.maxBackoffSteps);
  return { until: running !== null && running > until ? running : until, level };
}

/** The rate-limit step (R-CC-04..12): how long, and what it does to the backoff level. */
function rateLimitStep(level: number, d: RetryDelay, s: Pick<CooldownSettings, 'baseMs' | 'maxBackoffSteps'>) {
  if (d.source === 'backoff') return { ms: backoffMs(s.baseMs, level, s.maxBackoffSteps), level: 'bump' as const, fromUpstream: false };
  if (d.source === 'hint') return { ms: d.ms, level: 'bump' as const, fromUpstream: true };
  return { ms: d.ms, level: 'reset' as const, fromUpstream: false };
}

/**
 * A rate-limit cooldown for any holder of a CooldownState: the same durations, precedence chain
 * and stampede protection as a connection's (used for a model-scoped 429, issue 9).
 */
export function rateLimitCooldown(
  st: CooldownState,
  e: { now: number; delay: RetryDelay; concurrent: boolean },
  s: Pick<CooldownSettings, 'baseMs' | 'maxBackoffSteps'>,
): { state: CooldownState; ms: number } | null {
  const step = rateLimitStep(st.level, e.delay, s);
  const next = coolState(st, { now: e.now, ...step, concurrent: e.concurrent, maxBackoffSteps: s.maxBackoffSteps });
  return next ? { state: next, ms: step.ms } : null;
}

/** Applies one failure. Returns the same health object when nothing changes. */
export function onConnectionFailure(h: ConnectionHealthState, e: FailureEvent, s: CooldownSettings): FailureOutcome {
  if (isTerminalStatus(h.testStatus)) return { health: h, coolMs: null };
  const rule = e.rule;
  switch (rule.kind) {
    case 'none':
      return { health: h, coolMs: null };
    case 'record':
      return { health: { ...h, ...errorFields(e) }, coolMs: null };
    case 'terminal':
      return { health: terminal(h, e, rule.status), coolMs: null };
    case 'stall':
      if (!s.coolOnStall) return { health: { ...h, ...errorFields(e) }, coolMs: null };
      return cool(h, e, backoffMs(s.baseMs, h.backoffLevel, s.maxBackoffSteps), 'bump', false, s);
    case 'fixed':
      return cool(h, e, rule.ms, 'keep', true, s);
    case 'backoff':
      return cool(h, e, backoffMs(s.baseMs, h.backoffLevel, s.maxBackoffSteps), 'bump', false, s);
    case 'rate_limit': {
      const step = rateLimitStep(h.backoffLevel, e.delay, s);
      return cool(h, e, Math.max(step.ms, rule.minMs ?? 0), step.level, step.fromUpstream, s);
    }
    case 'operator':
      // A fixed operator choice (error rule or default): a configured delay, so backoff resets (R-CC-12).
      return cool(h, e, rule.ms, 'reset', false, s);
    case 'credential': {
      if (e.concurrent) return cool(h, e, backoffMs(s.baseMs, h.backoffLevel, s.maxBackoffSteps), 'bump', false, s);
      const expiredRetries = h.expiredRetries + 1;
      if (expiredRetries >= EXPIRED_RETRY_MAX) return { health: terminal({ ...h, expiredRetries }, e, 'expired'), coolMs: null };
      const out = cool({ ...h, expiredRetries }, e, backoffMs(s.baseMs, h.backoffLevel, s.maxBackoffSteps), 'bump', false, s);
      return out;
    }
  }
}

function terminal(h: ConnectionHealthState, e: FailureEvent, status: TerminalStatus): ConnectionHealthState {
  return { ...h, ...errorFields(e), testStatus: status, rateLimitedUntil: null };
}

/** Sets a cooldown of `ms` on the connection (see coolState); disableCooling only reports it. */
function cool(
  h: ConnectionHealthState,
  e: FailureEvent,
  ms: number,
  level: LevelChange,
  fromUpstream: boolean,
  s: CooldownSettings,
): FailureOutcome {
  const next = coolState(
    { until: h.rateLimitedUntil, level: h.backoffLevel },
    { now: e.now, ms, level, fromUpstream, concurrent: e.concurrent, maxBackoffSteps: s.maxBackoffSteps },
  );
  if (next === null) return { health: h, coolMs: null };
  if (e.disableCooling) return { health: { ...h, ...errorFields(e) }, coolMs: ms };
  return {
    health: { ...h, ...errorFields(e), testStatus: 'unavailable', rateLimitedUntil: next.until, backoffLevel: next.level },
    coolMs: ms,
  };
}

/** Why and until when a connection is held for another connection's failure (holdUntil). */
export interface HoldEvent {
  until: number;
  reason: string;
  status: number | null;
  message: string;
  now: number;
}

/**
 * Holds a connection out of routing until `until` because of another connection's failure (the
 * egress-bucketed siblings of R-EGR-01, a provider-scoped error rule): never shortens a longer
 * cooldown, never touches a terminal state (R-EGR-08, R-PER-17), keeps the backoff level. Returns
 * the same object when nothing changes.
 */
export function holdUntil(h: ConnectionHealthState, e: HoldEvent): ConnectionHealthState {
  if (isTerminalStatus(h.testStatus)) return h;
  if (e.until <= e.now || (h.rateLimitedUntil !== null && h.rateLimitedUntil >= e.until)) return h;
  return {
    ...h,
    lastError: e.message.slice(0, 500),
    lastErrorType: e.reason,
    errorCode: e.status !== null ? String(e.status) : e.reason,
    lastErrorAt: e.now,
    testStatus: 'unavailable',
    rateLimitedUntil: e.until,
  };
}

const isClean = (h: ConnectionHealthState) =>
  h.rateLimitedUntil === null &&
  h.backoffLevel === 0 &&
  h.lastError === null &&
  h.lastErrorType === null &&
  h.errorCode === null &&
  h.lastErrorAt === null &&
  h.expiredRetries === 0;

function cleared(h: ConnectionHealthState): ConnectionHealthState {
  return {
    ...h,
    testStatus: 'active',
    rateLimitedUntil: null,
    backoffLevel: 0,
    lastError: null,
    lastErrorType: null,
    errorCode: null,
    lastErrorAt: null,
    expiredRetries: 0,
  };
}

/**
 * clearAccountError (R-CC-40) after a successful use. A terminal state stays (only credentials,
 * configuration or an operator end it). Returns the same object when there is nothing to clear.
 */
export function onConnectionSuccess(h: ConnectionHealthState): ConnectionHealthState {
  if (isTerminalStatus(h.testStatus)) return h;
  if (h.testStatus === 'active' && isClean(h)) return h;
  return cleared(h);
}

/** The cooldown manager's clear: everything transient; a terminal state is left alone (R-CM-03). */
export function clearCooldown(h: ConnectionHealthState): ConnectionHealthState {
  if (isTerminalStatus(h.testStatus)) return h;
  if ((h.testStatus === 'active' || h.testStatus === 'untested') && isClean(h)) return h;
  return { ...cleared(h), testStatus: h.testStatus === 'untested' ? 'untested' : 'active' };
}

/** An operator's explicit reset (a passing "test connection"): clears terminal states too. */
export function operatorReset(h: ConnectionHealthState): ConnectionHealthState {
  if (h.testStatus === 'active' && isClean(h)) return h;
  return cleared(h);
}

/**
 * A mark from outside an upstream answer (resilience port markConnection): terminal, or cooling
 * until a time without a backoff step. A terminal state stays; a cooldown never shortens a longer
 * one. Returns the same object when nothing changes.
 */
export function markedHealth(h: ConnectionHealthState, m: ConnectionMark, now: number): ConnectionHealthState {
  if (isTerminalStatus(h.testStatus)) return h;
  const fields = { lastError: m.message.slice(0, 500), lastErrorType: m.reason, errorCode: m.reason, lastErrorAt: now };
  if (m.kind === 'terminal') return { ...h, ...fields, testStatus: m.status, rateLimitedUntil: null };
  const until = h.rateLimitedUntil !== null && h.rateLimitedUntil > m.until ? h.rateLimitedUntil : m.until;
  return { ...h, ...fields, testStatus: 'unavailable', rateLimitedUntil: until };
}
