// The health model (issue 22), computed when a resilience push is built, never per request:
// `buildHealth` is pure over the layer views (breakers, key-level breaker holds, connection
// cooldowns and ejections, failure streaks, model lockouts, queue pauses, terminal states,
// disabled) and turns them into conditions with a plain reason and the time each lifts; the
// state, label and counts come from the shared derivation (src/shared/health.ts), the same one
// the renderer runs when a condition lifts before the next push. `gatherHealth` is the adapter
// that reads the layers from the resilience service and admission.
import type { AdmissionView, BreakerView, ConnectionHealth, ModelLockoutView } from '../../../shared/model';
import { isTerminalStatus } from '../../../shared/model';
import {
  countHealth,
  deriveConnection,
  type ConnectionHealthItem,
  type HealthCondition,
  type HealthSnapshot,
} from '../../../shared/health';

/** A connection as the model needs it. */
export interface HealthConnection {
  id: string;
  name: string;
  provider: string;
  enabled: boolean;
  health: ConnectionHealth;
}

/** A key held out by an OPEN breaker: provider-wide until its half-open time, or a key-level hold. */
export interface BreakerHold {
  provider: string;
  /** '*' = every connection of the provider (a record from before per-key windows). */
  connectionId: string;
  until: number;
  wide: boolean;
}

export interface HealthLayers {
  connections: readonly HealthConnection[];
  breakers: readonly BreakerView[];
  breakerHolds: readonly BreakerHold[];
  /** Connection id -> server errors / transport failures in a row (the outlier detector's streak). */
  failureStreaks: Readonly<Record<string, number>>;
  lockouts: readonly ModelLockoutView[];
  admission: readonly AdmissionView[];
}

/** Failures in a row from which a connection reads "degraded" (one failure is not yet a pattern). */
export const DEGRADED_STREAK = 2;

const EJECTED = 'outlier_ejected';

const CAUSE_WORDS: Record<string, string> = {
  rate_limit_exceeded: 'rate limited',
  rate_limited: 'rate limited',
  rate_limit: 'rate limited',
  quota_exhausted: 'quota used up',
  concurrency_limited: 'too many requests at once',
  auth_error: 'credentials rejected',
  forbidden: 'access denied',
  server_error: 'upstream server error',
  overloaded: 'upstream overloaded',
  timeout: 'timed out',
  network: 'network error',
  stream_stall: 'stream stalled',
  request_rejected: 'request rejected by the upstream',
  long_retry_delay: 'the upstream asked for a long wait',
  not_found: 'not found',
  model_not_found: 'model not found',
};

/** Plain words for a machine cause ("rate_limit_exceeded" -> "rate limited"). */
export function causeWords(cause: string | null | undefined): string | null {
  if (!cause) return null;
  const known = CAUSE_WORDS[cause];
  if (known) return known;
  const http = /^http_(\d{3})$/.exec(cause);
  if (http) return `HTTP ${http[1]}`;
  return cause.replace(/[_-]+/g, ' ').trim() || null;
}

const TERMINAL_WORDS = {
  banned: 'The upstream banned this account; it stays out until its credentials change.',
  expired: 'The credentials expired; enter new ones to bring it back.',
  credits_exhausted: 'The account has no credits left; top it up, then re-test the connection.',
} as const;

const withStatus = (words: string | null, status: number | null) =>
  [words, status !== null ? `HTTP ${status}` : null].filter((x) => x !== null).join(', ');

function breakerConditions(c: HealthConnection, b: BreakerView | undefined, holds: readonly BreakerHold[], now: number): HealthCondition[] {
  const out: HealthCondition[] = [];
  const p = c.provider;
  const own = holds.find((h) => h.provider === p && (h.connectionId === c.id || h.connectionId === '*'));
  if (b?.providerCooldownUntil != null && b.providerCooldownUntil > now) {
    out.push({
      kind: 'provider_skipped',
      model: null,
      holds: true,
      reason: `Every ${p} connection is skipped after repeated provider failures.`,
      cause: 'provider_cooldown',
      from: null,
      until: b.providerCooldownUntil,
      clearedBy: 'reset',
    });
  }
  if (b === undefined) return out;
  const failures = `${b.failures} recent provider ${b.failures === 1 ? 'failure' : 'failures'}`;
  if (b.state === 'OPEN') {
    const wide = holds.some((h) => h.provider === p && h.wide);
    if (own?.wide) {
      out.push({
        kind: 'breaker_open',
        model: null,
        holds: true,
        reason: `The ${p} breaker is open after ${failures}; a test request goes through when it lifts.`,
        cause: 'circuit_open',
        from: null,
        until: own.until,
        clearedBy: 'reset',
      });
      out.push(probingAfter(p, own.until));
    } else if (own) {
      out.push({
        kind: 'key_hold',
        model: null,
        holds: true,
        reason: `This key failed a moment ago while the ${p} breaker is open; it is held back briefly.`,
        cause: 'circuit_open',
        from: null,
        until: own.until,
        clearedBy: 'clear',
      });
      out.push(degradedByBreaker(p, failures));
    } else if (wide || !holds.some((h) => h.provider === p)) {
      out.push({
        kind: 'probing',
        model: null,
        holds: false,
        reason: `The ${p} breaker is open after ${failures}; this connection did not fail and may carry the test request.`,
        cause: 'circuit_open',
        from: null,
        until: null,
        clearedBy: 'reset',
      });
    } else {
      out.push(degradedByBreaker(p, failures));
    }
  } else if (b.state === 'HALF_OPEN') {
    out.push(probingAfter(p, null));
  } else if (b.state === 'DEGRADED') {
    out.push(degradedByBreaker(p, failures));
  }
  return out;
}

const probingAfter = (p: string, from: number | null): HealthCondition => ({
  kind: 'probing',
  model: null,
  holds: false,
  reason: `The ${p} breaker lets one test request through; a success closes it.`,
  cause: 'circuit_half_open',
  from,
  until: null,
  clearedBy: 'reset',
});

const degradedByBreaker = (p: string, failures: string): HealthCondition => ({
  kind: 'degraded',
  model: null,
  holds: false,
  reason: `The ${p} breaker counts ${failures}; requests still go through.`,
  cause: 'circuit_degraded',
  from: null,
  until: null,
  clearedBy: 'reset',
});

function connectionConditions(c: HealthConnection, layers: HealthLayers, now: number): HealthCondition[] {
  const h = c.health;
  const out: HealthCondition[] = [];
  if (isTerminalStatus(h.testStatus)) {
    out.push({
      kind: 'terminal',
      model: null,
      holds: true,
      reason: `${TERMINAL_WORDS[h.testStatus]}${h.lastError ? ` (${h.lastError})` : ''}`,
      cause: h.testStatus,
      from: null,
      until: null,
      clearedBy: 'person',
    });
  }
  if (!c.enabled) {
    out.push({ kind: 'disabled', model: null, holds: true, reason: 'Switched off: turn Enabled on to route to it.', cause: 'disabled', from: null, until: null, clearedBy: 'person' });
  }
  const b = layers.breakers.find((x) => x.provider === c.provider);
  out.push(...breakerConditions(c, b, layers.breakerHolds, now));
  if (h.rateLimitedUntil !== null && h.rateLimitedUntil > now && !isTerminalStatus(h.testStatus)) {
    const ejected = h.lastErrorType === EJECTED;
    const words = causeWords(h.lastErrorType);
    out.push({
      kind: ejected ? 'ejected' : 'cooling',
      model: null,
      holds: true,
      reason: ejected
        ? 'It kept failing while another key of the provider worked, so it sits out for a while.'
        : `Cooling down${words ? `: ${words}` : ''}${h.errorCode && h.errorCode !== h.lastErrorType ? ` (${h.errorCode})` : ''}${h.backoffLevel > 0 ? `, backoff step ${h.backoffLevel}` : ''}.`,
      cause: h.lastErrorType,
      from: null,
      until: h.rateLimitedUntil,
      clearedBy: 'clear',
    });
  }
  const streak = layers.failureStreaks[c.id] ?? 0;
  if (streak >= DEGRADED_STREAK) {
    const last = causeWords(h.lastErrorType);
    out.push({
      kind: 'degraded',
      model: null,
      holds: false,
      reason: `${streak} failures in a row${last ? ` (last: ${last})` : ''}; a success clears this.`,
      cause: h.lastErrorType,
      from: null,
      until: null,
      clearedBy: 'clear',
    });
  }
  const adm = layers.admission.find((a) => a.connectionId === c.id);
  if (adm?.pausedUntil != null && adm.pausedUntil > now) {
    out.push({
      kind: 'paused',
      model: null,
      holds: true,
      reason: 'The request queue waits out the Retry-After the upstream asked for.',
      cause: 'retry_after',
      from: null,
      until: adm.pausedUntil,
      clearedBy: 'clear',
    });
  }
  for (const m of adm?.models ?? []) {
    if (m.pausedUntil === null || m.pausedUntil <= now) continue;
    out.push({
      kind: 'model_paused',
      model: m.model,
      holds: true,
      reason: 'Its requests wait out the Retry-After the upstream asked for.',
      cause: 'retry_after',
      from: null,
      until: m.pausedUntil,
      clearedBy: 'clear',
    });
  }
  for (const l of layers.lockouts) {
    if (l.connectionId !== c.id || l.expiresAt <= now) continue;
    const what = l.scope === 'family' ? 'This model and its siblings that share a quota are' : 'This model is';
    const why = withStatus(causeWords(l.reason), l.status);
    out.push({
      kind: 'locked',
      model: l.model,
      holds: true,
      reason: `${what} held back on this connection${why ? ` (${why})` : ''}; its other models are served.`,
      cause: l.reason,
      from: null,
      until: l.expiresAt,
      clearedBy: 'clear',
    });
  }
  return out;
}

/** Pure: the health of every connection at `now` from the layer views. */
export function buildHealth(layers: HealthLayers, now: number): HealthSnapshot {
  const connections: ConnectionHealthItem[] = layers.connections.map((c) =>
    deriveConnection({ connectionId: c.id, name: c.name, provider: c.provider }, connectionConditions(c, layers, now), now),
  );
  return { now, connections, counts: countHealth(connections) };
}

/** What the adapter reads (the resilience service and admission, as the engine wires them). */
export interface HealthSources {
  connections(): readonly HealthConnection[];
  resilience: {
    breakers(now: number): BreakerView[];
    lockouts(now: number): ModelLockoutView[];
    healthLayers(now: number): { breakerHolds: BreakerHold[]; failureStreaks: Record<string, number> };
  };
  admission: { views(): AdmissionView[] };
}

/** The adapter: gathers the layer views once and builds the snapshot. */
export function gatherHealth(s: HealthSources, now: number): HealthSnapshot {
  const extra = s.resilience.healthLayers(now);
  return buildHealth(
    {
      connections: s.connections(),
      breakers: s.resilience.breakers(now),
      breakerHolds: extra.breakerHolds,
      failureStreaks: extra.failureStreaks,
      lockouts: s.resilience.lockouts(now),
      admission: s.admission.views(),
    },
    now,
  );
}
