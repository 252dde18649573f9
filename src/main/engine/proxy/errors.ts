// Errors that leave the proxy: a stable code, an HTTP status, optional Retry-After, rendered in the
// inbound protocol's error shape so agents (Anthropic, OpenAI or Google SDKs) parse them.
import type { ServerResponse } from 'node:http';
import type { InboundProtocol } from '../../../shared/model';
import { geminiErrorBody } from '../streams/googleErrors';

export type ProxyErrorCode =
  | 'invalid_json'
  | 'invalid_request'
  | 'untranslatable_request'
  | 'missing_model'
  | 'invalid_model'
  | 'model_not_found'
  | 'invalid_client_key'
  | 'forbidden_host'
  | 'payload_too_large'
  | 'request_timeout'
  | 'headers_too_large'
  | 'not_found'
  | 'method_not_allowed'
  | 'all_targets_cooling_down'
  | 'no_executable_targets'
  | 'ALL_TARGETS_SKIPPED'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'upstream_error'
  | 'RATE_LIMIT_QUEUE_FULL'
  | 'RATE_LIMIT_QUEUE_TIMEOUT'
  | 'RATE_LIMIT_EXECUTION_TIMEOUT'
  | 'SEMAPHORE_TIMEOUT'
  | 'SEMAPHORE_QUEUE_FULL'
  | 'internal_error'
  // Exclusive connection leases (routing/leases/, docs/decisions/topic-session-affinity-and-leases.md).
  | 'lease_scope_missing'
  | 'lease_no_allowed_connections'
  | 'lease_connection_not_allowed'
  | 'lease_not_found'
  | 'lease_key_mismatch'
  | 'lease_generation_stale'
  | 'lease_owner_active'
  | 'lease-capacity-unavailable';

export class ProxyError extends Error {
  constructor(
    readonly status: number,
    readonly code: ProxyErrorCode,
    message: string,
    readonly extra: {
      retryAfterMs?: number | null;
      diagnostics?: unknown;
      param?: string;
      resetAt?: number | null;
      /** More fields of the error object, beside code (e.g. a lease refusal's status). */
      fields?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = 'ProxyError';
  }
}

/** Anthropic's error.type for a status. */
function anthropicType(status: number): string {
  if (status === 400 || status === 413 || status === 422) return status === 413 ? 'request_too_large' : 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  if (status === 504 || status === 408) return 'timeout_error';
  return 'api_error';
}

/** OpenAI's error.type for a status. */
function openaiType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'invalid_request_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return status === 503 ? 'service_unavailable' : 'server_error';
  return 'invalid_request_error';
}

export function errorBody(protocol: InboundProtocol, err: ProxyError, requestId: string): Record<string, unknown> {
  const retryAfter = err.extra.retryAfterMs != null ? Math.max(1, Math.ceil(err.extra.retryAfterMs / 1000)) : undefined;
  const common = {
    code: err.code,
    ...err.extra.fields,
    ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}),
    ...(err.extra.resetAt != null ? { reset_at: new Date(err.extra.resetAt).toISOString() } : {}),
    ...(err.extra.diagnostics !== undefined ? { diagnostics: err.extra.diagnostics } : {}),
  };
  if (protocol === 'gemini' || protocol === 'gemini-count-tokens') {
    // Google's shape: the wait as a typed RetryInfo (what Gemini CLI and @google/genai read), the
    // engine's code as the ErrorInfo reason, and its other fields as ErrorInfo metadata.
    const body = geminiErrorBody({ status: err.status, message: err.message }, err.extra.retryAfterMs ?? null) as { error: Record<string, unknown> };
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(common)) if (k !== 'code' && v !== undefined && typeof v !== 'object') metadata[k] = String(v);
    const details = (body.error.details as unknown[] | undefined) ?? [];
    details.push({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: err.code, domain: 'switchyard', metadata });
    body.error.details = details;
    return body;
  }
  if (protocol === 'anthropic-messages' || protocol === 'anthropic-count-tokens') {
    return {
      type: 'error',
      error: { type: anthropicType(err.status), message: err.message, ...common },
      request_id: requestId,
    };
  }
  return {
    error: { message: err.message, type: openaiType(err.status), param: err.extra.param ?? null, ...common },
  };
}

export function sendProxyError(
  res: ServerResponse,
  protocol: InboundProtocol,
  err: ProxyError,
  requestId: string,
  extraHeaders: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(protocol, err, requestId));
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-switchyard-request-id': requestId,
    ...extraHeaders,
  };
  if (err.extra.retryAfterMs != null) headers['retry-after'] = String(Math.max(1, Math.ceil(err.extra.retryAfterMs / 1000)));
  res.writeHead(err.status, headers);
  res.end(body);
}
