// In-band and out-of-band upstream errors read into one shape: an HTTP status that the resilience
// layer can classify like any other failure (overloaded → 529, rate limit → 429, auth → 401, ...),
// the provider's error type and code, and its message.

export interface InbandError {
  /** The HTTP status this error would have had as a response (529 overloaded, 429, 401, ...). */
  status: number;
  /** The provider's error type (`overloaded_error`, `rate_limit_exceeded`, ...), or '' when absent. */
  type: string;
  /** The provider's error code when it has one distinct from the type. */
  code: string | null;
  message: string;
}

/**
 * The status an error type or code stands for. A numeric code in 400..599 (OpenRouter and other
 * gateways put the upstream status there) wins; otherwise the words decide; unknown is 500.
 */
export function statusOfError(type: string, code: unknown, fallback = 500): number {
  if (typeof code === 'number' && code >= 400 && code <= 599) return Math.trunc(code);
  if (typeof code === 'string' && /^[45]\d\d$/.test(code)) return Number(code);
  const words = `${type} ${typeof code === 'string' ? code : ''}`.toLowerCase();
  if (words.trim() === '') return fallback;
  if (words.includes('overloaded')) return 529;
  if (words.includes('rate_limit') || words.includes('rate limit') || words.includes('too_many_requests')) return 429;
  if (words.includes('insufficient_quota') || words.includes('quota')) return 429;
  if (words.includes('billing') || words.includes('credit') || words.includes('payment')) return 402;
  if (words.includes('authentication') || words.includes('invalid_api_key') || words.includes('unauthorized')) return 401;
  if (words.includes('permission') || words.includes('forbidden')) return 403;
  if (words.includes('not_found')) return 404;
  if (words.includes('request_too_large') || words.includes('too_large')) return 413;
  if (words.includes('timeout') || words.includes('timed_out')) return 504;
  if (words.includes('unavailable')) return 503;
  if (words.includes('context_length') || words.includes('invalid_request') || words.includes('invalid_prompt')) return 400;
  if (words.includes('server_error') || words.includes('api_error') || words.includes('internal')) return 500;
  return fallback;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Reads `{ type?, code?, message? }` (any provider's error object) into an InbandError. */
export function errorFromObject(o: unknown, fallbackStatus = 500): InbandError {
  if (typeof o === 'string') return { status: fallbackStatus, type: '', code: null, message: o };
  const e = (o && typeof o === 'object' ? o : {}) as Record<string, unknown>;
  const type = str(e.type);
  const rawCode = e.code;
  const code = typeof rawCode === 'string' ? rawCode : typeof rawCode === 'number' ? String(rawCode) : null;
  const message = str(e.message) || (type || code || 'the upstream reported an error');
  return { status: statusOfError(type, rawCode ?? e.status, fallbackStatus), type, code, message };
}
