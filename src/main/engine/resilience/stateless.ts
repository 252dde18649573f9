// Placeholder resilience used until the resilience core lands: no state, no exclusions; it only
// decides failover (retryable statuses and transport failures move to the next connection).
import type { ClearCooldownsResult, CooldownsView } from '../../../shared/model';
import type { ConnectionRegistry } from '../connections/registry';
import type { AttemptVerdict, Resilience, UpstreamFailure } from './port';
import { retryHintFrom } from './retryHints';

const RETRYABLE = new Set([401, 402, 403, 404, 408, 409, 429, 500, 502, 503, 504, 529]);

export function basicVerdict(f: UpstreamFailure, now: number): AttemptVerdict {
  if (f.kind !== 'http') return { reason: f.kind, failover: true, retryAfterMs: null, hint: null };
  const hint = retryHintFrom(f.headers, f.body, now);
  return {
    reason: `http_${f.status}`,
    failover: f.status !== null && RETRYABLE.has(f.status),
    retryAfterMs: hint?.ms ?? null,
    hint,
  };
}

export function statelessResilience(registry: ConnectionRegistry): Resilience {
  return {
    exclusion: () => null,
    beginAttempt: () => null,
    onSuccess: () => {},
    onFailure: (_t, f, now) => basicVerdict(f, now),
    onAbandon: () => {},
    lockModel: () => {},
    breakers: () => [],
    cooldowns: (now): CooldownsView => ({
      now,
      connections: registry.all().map((c) => ({
        connectionId: c.id,
        name: c.name,
        provider: c.provider,
        authClass: c.authClass,
        enabled: c.enabled,
        status: 'active',
        terminal: false,
        rateLimitedUntil: null,
        remainingMs: 0,
        backoffLevel: 0,
        lastErrorType: null,
        lastError: null,
        errorCode: null,
        lastErrorAt: null,
        lockouts: [],
      })),
    }),
    clearCooldowns: (input): ClearCooldownsResult => ({
      cleared: [],
      unchanged: 'connectionIds' in input ? input.connectionIds : registry.all().map((c) => c.id),
      skippedTerminal: [],
      lockoutsCleared: 0,
    }),
    lockouts: () => [],
    clearLockout: () => 0,
    resetBreakers: () => [],
    onConnectionTestOk: () => {},
    onChange: () => () => {},
  };
}
