// Words for the machine reasons the engine reports: failure verdicts (lastErrorType,
// errorClass), skip reasons in the request log, and terminal states.
import type { SkipReason, TerminalStatus } from '../../shared/model';
import { SKIP_REASON_WORDS } from '../../shared/skipReasonWords';

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
  request_timeout: 'Request timed out',
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

/** Why a connection was passed over (the engine's error messages quote the same words). */
export const SKIP_REASONS: Record<SkipReason, string> = SKIP_REASON_WORDS;

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

/**
 * What an error the proxy answered an agent with means, in words (the request log's "Served by",
 * a combo's last request). The code itself stays one click away (TechName) where it is shown.
 */
const ERROR_CODES: Record<string, string> = {
  invalid_json: 'The request was not valid JSON',
  invalid_request: 'The request was malformed',
  untranslatable_request: "The request cannot be expressed in the connection's protocol",
  missing_model: 'The request named no model',
  invalid_model: 'The model name is not valid',
  model_not_found: 'No connection serves this model',
  invalid_client_key: 'Unknown or revoked client key',
  forbidden_host: 'Refused: not addressed to 127.0.0.1 or localhost',
  payload_too_large: 'Request too large',
  request_timeout: 'The request did not arrive in time',
  headers_too_large: 'Request headers too large',
  not_found: 'No such endpoint',
  method_not_allowed: 'Method not allowed',
  all_targets_cooling_down: 'Every connection for this model is cooling down',
  no_executable_targets: 'No connection can serve this model until one is fixed',
  ALL_TARGETS_SKIPPED: 'Every connection is held back by an error that waiting does not fix',
  upstream_unreachable: 'The upstream could not be reached',
  upstream_timeout: 'The upstream did not answer in time',
  upstream_error: 'The upstream answered with an error',
  RATE_LIMIT_QUEUE_FULL: 'Rate-limit queue full',
  RATE_LIMIT_QUEUE_TIMEOUT: 'Waited too long in the rate-limit queue',
  RATE_LIMIT_EXECUTION_TIMEOUT: 'The upstream took too long to start answering',
  SEMAPHORE_TIMEOUT: 'No free concurrency slot in time',
  SEMAPHORE_QUEUE_FULL: 'Too many requests waiting for a concurrency slot',
  internal_error: 'Switchyard failed internally (see its log)',
  client_closed_request: 'The client closed the connection',
  empty_response: 'The upstream sent an empty answer',
  lease_scope_missing: 'This key may not take exclusive leases',
  lease_no_allowed_connections: 'This key has no connections it may lease',
  lease_connection_not_allowed: 'That connection is not one this key may lease',
  lease_not_found: 'The lease expired or was released',
  lease_key_mismatch: 'The lease belongs to another client key',
  lease_generation_stale: 'The lease was renewed since (stale generation)',
  lease_owner_active: 'This owner already holds a lease',
  'lease-capacity-unavailable': 'Every connection this key may lease is taken',
};

/** "all_targets_cooling_down" -> "Every connection for this model is cooling down"; unknown codes read as words. */
export function describeErrorCode(code: string | null | undefined): string | null {
  if (!code) return null;
  return ERROR_CODES[code] ?? describeErrorType(code.toLowerCase());
}
