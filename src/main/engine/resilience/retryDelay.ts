// How long a rate-limited connection rests: the precedence chain of SPEC R-CC-08..13, highest first:
//   1. the upstream's retry hint (Retry-After, reset headers, parseable reset text);
//   2. the connection's providerSpecificData.rotationOverrides.rateLimitResetSeconds;
//   3. the provider's retry delay (providerQuotaOverrides[].rateLimitCooldownSeconds);
//   4. the global rotation.rateLimitResetSeconds (env OMNIROUTE_ROTATION_RATE_LIMIT_RESET_SECONDS);
//   5. the scaled backoff (base · 2^n).
// Sources 2-4 are fixed operator choices: they replace the backoff and reset backoffLevel to 0.
import type { ProviderQuotaOverride } from '../../../shared/settings';
import type { ConnectionRecord } from '../store/connectionsRepo';
import type { RetryHint } from './retryHints';

/** Longest cooldown an upstream hint may impose on a connection (a day). */
export const MAX_HINT_COOLDOWN_MS = 24 * 60 * 60_000;
/** The accepted range of every configured retry delay, in seconds (R-CC-09). */
export const RETRY_DELAY_MIN_S = 1;
export const RETRY_DELAY_MAX_S = 21_600;

export type RetryDelaySource = 'hint' | 'connection' | 'provider' | 'global' | 'backoff';

export type RetryDelay = { source: Exclude<RetryDelaySource, 'backoff'>; ms: number } | { source: 'backoff' };

export interface RetryDelayInputs {
  hint: RetryHint | null;
  useUpstreamRetryHints: boolean;
  connectionSeconds: number | null;
  providerSeconds: number | null;
  globalSeconds: number | null;
}

export function rateLimitRetryDelay(i: RetryDelayInputs): RetryDelay {
  if (i.useUpstreamRetryHints && i.hint && i.hint.ms > 0) {
    return { source: 'hint', ms: Math.min(i.hint.ms, MAX_HINT_COOLDOWN_MS) };
  }
  if (i.connectionSeconds !== null) return { source: 'connection', ms: i.connectionSeconds * 1000 };
  if (i.providerSeconds !== null) return { source: 'provider', ms: i.providerSeconds * 1000 };
  if (i.globalSeconds !== null) return { source: 'global', ms: i.globalSeconds * 1000 };
  return { source: 'backoff' };
}

const seconds = (v: unknown): number | null => {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return null;
  return Math.min(RETRY_DELAY_MAX_S, Math.max(RETRY_DELAY_MIN_S, Math.round(v)));
};

/** The per-connection override, when it holds a usable number (clamped to 1-21600 s). */
export function connectionRetrySeconds(conn: Pick<ConnectionRecord, 'providerSpecificData'>): number | null {
  return seconds(conn.providerSpecificData?.rotationOverrides?.rateLimitResetSeconds);
}

/** The provider's retry delay from providerQuotaOverrides, or null for "Automatic". */
export function providerRetrySeconds(overrides: readonly ProviderQuotaOverride[], provider: string): number | null {
  for (const o of overrides) if (o.provider === provider) return seconds(o.rateLimitCooldownSeconds);
  return null;
}
