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
      const d = e.delay;
      if (d.source === 'backoff') return cool(h, e, backoffMs(s.baseMs, h.backoffLevel, s.maxBackoffSteps), 'bump', false, s);
      if (d.source === 'hint') return cool(h, e, d.ms, 'bump', true, s);
      return cool(h, e, d.ms, 'reset', false, s);
    }
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

/**
 * Sets a cooldown of `ms`. A cooldown never shortens a longer one already running. A concurrent
 * failure (stampede) changes nothing, except that an upstream hint asking for longer is honoured.
 */
function cool(
  h: ConnectionHealthState,
  e: FailureEvent,
  ms: number,
  level: LevelChange,
  fromUpstream: boolean,
  s: CooldownSettings,
): FailureOutcome {
  const until = e.now + Math.max(0, Math.round(ms));
  const running = h.rateLimitedUntil !== null && h.rateLimitedUntil > e.now ? h.rateLimitedUntil : null;
  if (e.concurrent && !(fromUpstream && (running === null || until > running))) return { health: h, coolMs: null };
  if (e.disableCooling) return { health: { ...h, ...errorFields(e) }, coolMs: ms };
  const backoffLevel =
    e.concurrent || level === 'keep' ? h.backoffLevel : level === 'reset' ? 0 : nextLevel(h.backoffLevel, s.maxBackoffSteps);
  return {
    health: {
      ...h,
      ...errorFields(e),
      testStatus: 'unavailable',
      rateLimitedUntil: running !== null && running > until ? running : until,
      backoffLevel,
    },
    coolMs: ms,
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
