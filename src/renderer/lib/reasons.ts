// Words for the machine reasons the engine reports: failure verdicts (lastErrorType,
// errorClass), skip reasons in the request log, and terminal states.
import type { SkipReason, TerminalStatus } from '../../shared/model';

const ERROR_TYPES: Record<string, string> = {
  rate_limit_exceeded: 'Rate limited',
  rate_limited: 'Rate limited',
  rate_limit: 'Rate limited',
  concurrency_limited: 'Too many concurrent requests',
  quota_exhausted: 'Quota exhausted',
  credits_exhausted: 'Credits exhausted',
  auth_error: 'Credentials rejected',
  unauthorized: 'Credentials rejected',
  forbidden: 'Access denied',
  permission_denied: 'Access denied',
  request_rejected: 'Request rejected by the upstream',
  model_not_found: 'Model not found',
  not_found: 'Not found',
  server_error: 'Upstream server error',
  overloaded: 'Upstream overloaded',
  timeout: 'Timed out',
  connect_timeout: 'Connection timed out',
  headers_timeout: 'No response headers in time',
  idle_timeout: 'Stream went idle',
  network: 'Network error',
  network_error: 'Network error',
  stall: 'Stream stalled',
  stream_error: 'Stream broke off',
  stream_stall: 'Stream stalled (no model output)',
  stream_truncated: 'Stream ended before its stop event',
  empty_response: 'Empty answer',
  banned: 'Account banned',
  expired: 'Credentials expired',
  outlier_ejected: 'Ejected: kept failing while other keys worked',
};

/** "rate_limit_exceeded" -> "Rate limited"; "http_418" -> "HTTP 418"; unknown -> spaced words. */
export function describeErrorType(t: string | null | undefined): string | null {
  if (!t) return null;
  if (ERROR_TYPES[t]) return ERROR_TYPES[t]!;
  const http = /^http_(\d{3})$/.exec(t);
  if (http) return `HTTP ${http[1]}`;
  const words = t.replace(/[_-]+/g, ' ').trim();
  return words ? words[0]!.toUpperCase() + words.slice(1) : null;
}

export const SKIP_REASONS: Record<SkipReason, string> = {
  disabled: 'disabled',
  cooling_down: 'cooling down',
  terminal: 'terminal state',
  circuit_open: 'provider breaker open',
  provider_cooldown: 'provider cooling (window gate)',
  model_lockout: 'model locked out',
  model_not_served: 'does not serve this model',
  admission_rejected: 'rejected by the request queue',
  attempt_budget: 'attempt budget used up',
  protocol_mismatch: 'spoke the other protocol (before translation)',
  context_too_small: 'context window too small for this prompt',
  too_many_tools: 'the model takes fewer tools than this request sends',
  no_connection: 'no usable connection',
  untranslatable: "the request cannot be expressed in this connection's protocol",
  leased_elsewhere: "held by another session's exclusive lease",
  outside_lease_pool: "not in this key's lease pool (allowed connections)",
};

export const TERMINAL_LABELS: Record<TerminalStatus, string> = {
  banned: 'Banned',
  expired: 'Expired',
  credits_exhausted: 'Credits exhausted',
};

export const TERMINAL_HELP: Record<TerminalStatus, string> = {
  banned: 'The upstream banned this account. It stays out of routing until its credentials change.',
  expired: 'The credentials expired after repeated retries. Enter new credentials to bring it back.',
  credits_exhausted: 'The account has no credits left. Top it up, then edit or re-test the connection.',
};
