// Which layer a 429 belongs to (issue 9: "scope follows evidence"). A rate limit says nothing
// about the rest of the account unless the answer or the provider says so: by default it cools
// only the (connection, model) that was asked for. Account-wide evidence cools the connection:
//
//   signal                                                   evidence           scope
//   anthropic-ratelimit-unified-status: rejected             unified_limit      connection
//   anthropic-ratelimit-unified-<window>-status: rejected    unified_limit      connection
//   x-ratelimit-remaining: 0 (bare: no model or dimension)   key_wide_limit     connection
//   x-ratelimit-remaining-<account|org|key|user|project…>: 0 key_wide_limit     connection
//   "account's rate limit" wording                           account_wording    connection
//   quota wording ("quota", 额度, "usage limit", …)           quota_wording      connection,
//                                                                              model on per-model-quota providers
//   provider metered per account (table below)               per_account        connection
//   anything else (RPM/TPM per model, x-ratelimit-*-requests) —                  model
//
// Pure: the caller passes the connection facts; no settings, no state.
import type { AuthClass, ConnectionKind } from '../../../shared/model';

export type RateLimitEvidence = 'unified_limit' | 'key_wide_limit' | 'account_wording' | 'quota_wording' | 'per_account';

/** How a connection's provider meters its limits. */
export interface Metering {
  /** Every model of the connection draws on one account-wide allowance (subscriptions, coding plans). */
  perAccount: boolean;
  /** Quota is kept per model (Gemini family): quota wording speaks for that model only. */
  perModelQuota: boolean;
}

export const DEFAULT_METERING: Metering = Object.freeze({ perAccount: false, perModelQuota: false });

/**
 * Providers whose subscription or coding plan meters every model against one allowance, so a 429
 * on one model means the account is spent (by provider id, or by API host).
 */
const PER_ACCOUNT_PROVIDERS: ReadonlySet<string> = new Set(['glm', 'zai', 'z-ai', 'zhipu', 'bigmodel', 'minimax', 'kimi', 'kimi-coding']);
const PER_ACCOUNT_HOSTS = ['api.z.ai', 'open.bigmodel.cn', 'api.minimax.io', 'api.minimaxi.com', 'api.kimi.com'];

/**
 * Claude subscription accounts (OAuth) have unified 5-hour / 7-day limits shared by every model.
 */
function isClaudeSubscription(c: { provider: string; authClass: AuthClass; kind: ConnectionKind }): boolean {
  if (c.authClass !== 'oauth') return false;
  const p = c.provider.toLowerCase();
  return p === 'anthropic' || p === 'claude' || c.kind === 'anthropic';
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
}

export function meteredPerAccount(c: { provider: string; authClass: AuthClass; kind: ConnectionKind; baseUrl: string }): boolean {
  if (PER_ACCOUNT_PROVIDERS.has(c.provider.trim().toLowerCase())) return true;
  if (isClaudeSubscription(c)) return true;
  const host = hostOf(c.baseUrl);
  return host !== '' && PER_ACCOUNT_HOSTS.some((h) => host === h || host.endsWith(`.${h}`));
}

/** A remaining count that is spent (0 or below). */
const spent = (v: string | undefined) => v !== undefined && v.trim() !== '' && Number(v) <= 0;

/** x-ratelimit-remaining-<dimension> names that describe the account, not a model's RPM/TPM. */
const ACCOUNT_DIMENSION = /(^|-)(account|org|organization|key|user|project|tenant|unified)(-|$)/;

/** Header evidence that the account (not just this model) is out of allowance. */
export function accountWideHeader(headers: Record<string, string>): RateLimitEvidence | null {
  if (spent(headers['x-ratelimit-remaining'])) return 'key_wide_limit';
  for (const name in headers) {
    if (name.startsWith('anthropic-ratelimit-unified') && name.endsWith('status')) {
      if (headers[name]!.trim().toLowerCase() === 'rejected') return 'unified_limit';
    } else if (name.startsWith('x-ratelimit-remaining-') && ACCOUNT_DIMENSION.test(name.slice('x-ratelimit-remaining-'.length))) {
      if (spent(headers[name])) return 'key_wide_limit';
    }
  }
  return null;
}

export interface RateLimitScope {
  scope: 'connection' | 'model';
  evidence: RateLimitEvidence | null;
}

/** The scope of a (non-terminal, non-concurrency) 429 from its signals and the connection's metering. */
export function rateLimitScope(
  s: { header: RateLimitEvidence | null; accountWording: boolean; quotaWording: boolean },
  m: Metering,
): RateLimitScope {
  if (s.header) return { scope: 'connection', evidence: s.header };
  if (s.accountWording) return { scope: 'connection', evidence: 'account_wording' };
  if (s.quotaWording && !m.perModelQuota) return { scope: 'connection', evidence: 'quota_wording' };
  if (m.perAccount) return { scope: 'connection', evidence: 'per_account' };
  return { scope: 'model', evidence: null };
}
