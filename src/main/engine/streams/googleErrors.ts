// Google's error words, shared by the stream readers and the Gemini codecs: the canonical status
// word for an HTTP status and back, the `{ error: { code, message, status, details } }` body (with
// a typed RetryInfo detail when the wait is known), and reading such an object into an InbandError.
import type { InbandError } from './errorStatus';

export const RETRY_INFO_TYPE = 'type.googleapis.com/google.rpc.RetryInfo';
export const QUOTA_FAILURE_TYPE = 'type.googleapis.com/google.rpc.QuotaFailure';

/** Google's canonical status word for an HTTP status (google.rpc.Code's HTTP mapping). */
export function googleStatusOf(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 402:
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 408:
    case 504:
      return 'DEADLINE_EXCEEDED';
    case 409:
      return 'ABORTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 502:
    case 503:
    case 529:
      return 'UNAVAILABLE';
    default:
      return status >= 400 && status < 500 ? 'FAILED_PRECONDITION' : 'INTERNAL';
  }
}

/** The HTTP status a Google status word stands for (when an error object has no numeric code). */
export function httpStatusOfGoogle(word: unknown, fallback: number): number {
  switch (word) {
    case 'INVALID_ARGUMENT':
    case 'FAILED_PRECONDITION':
    case 'OUT_OF_RANGE':
      return 400;
    case 'UNAUTHENTICATED':
      return 401;
    case 'PERMISSION_DENIED':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'ABORTED':
    case 'ALREADY_EXISTS':
      return 409;
    case 'RESOURCE_EXHAUSTED':
      return 429;
    case 'CANCELLED':
      return 499;
    case 'UNIMPLEMENTED':
      return 501;
    case 'UNAVAILABLE':
      return 503;
    case 'DEADLINE_EXCEEDED':
      return 504;
    case 'INTERNAL':
    case 'UNKNOWN':
    case 'DATA_LOSS':
      return 500;
    default:
      return fallback;
  }
}

/** A google.protobuf.Duration in its JSON form: whole seconds, or seconds with up to 3 decimals ("30s", "1.5s"). */
export function durationText(ms: number): string {
  return `${Number((Math.max(0, ms) / 1000).toFixed(3))}s`;
}

/** The Google error body for an error, with a RetryInfo detail when the wait is known. */
export function geminiErrorBody(e: { status: number; message: string }, retryDelayMs: number | null = null): Record<string, unknown> {
  const error: Record<string, unknown> = { code: e.status, message: e.message, status: googleStatusOf(e.status) };
  if (retryDelayMs !== null && Number.isFinite(retryDelayMs) && retryDelayMs > 0) {
    error.details = [{ '@type': RETRY_INFO_TYPE, retryDelay: durationText(retryDelayMs) }];
  }
  return { error };
}

/** Reads a Google error object (`{ code, message, status, details }`) into the engine's InbandError. */
export function readGeminiErrorObject(o: unknown, fallbackStatus: number): InbandError {
  const e = (o && typeof o === 'object' ? o : {}) as Record<string, any>;
  const code = typeof e.code === 'number' && e.code >= 400 && e.code <= 599 ? Math.trunc(e.code) : null;
  const word = typeof e.status === 'string' ? e.status : '';
  const status = code ?? httpStatusOfGoogle(word, fallbackStatus);
  // ErrorInfo.reason (API_KEY_INVALID, RATE_LIMIT_EXCEEDED, ...) is the most specific code Google gives.
  let reason: string | null = null;
  for (const d of Array.isArray(e.details) ? e.details : []) {
    if (typeof d?.['@type'] === 'string' && d['@type'].endsWith('google.rpc.ErrorInfo') && typeof d.reason === 'string') reason = d.reason;
  }
  const message = typeof e.message === 'string' && e.message ? e.message : word || `upstream answered ${status}`;
  return { status, type: word, code: reason, message };
}
