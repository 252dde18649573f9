// Errors in Google's shape: `{ error: { code, message, status, details } }`, the body the Generative
// Language API answers with and the object an in-band stream error carries. Written for a Gemini
// client from the engine's errors and from other upstreams' error bodies (the HTTP status is kept;
// `status` is Google's word for it; a known wait rides in a typed RetryInfo detail, which Gemini
// CLI and the @google/genai SDK read); read from a Gemini upstream into the engine's InbandError.
import type { InbandError } from '../streams/errorStatus';
import { parseDuration, retryHintFromBody, type RetryHint } from '../resilience/retryHints';
import { readUpstreamError } from './errors';
import type { UpstreamShape } from './types';

export {
  durationText,
  geminiErrorBody,
  googleStatusOf,
  httpStatusOfGoogle,
  QUOTA_FAILURE_TYPE,
  readGeminiErrorObject,
  RETRY_INFO_TYPE,
} from '../streams/googleErrors';
import { geminiErrorBody, readGeminiErrorObject } from '../streams/googleErrors';

/** Reads a Gemini upstream's error body (an object, or the one-element array a JSON stream error comes as). */
export function readGeminiError(status: number, body: string): InbandError {
  let parsed: any = null;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = null;
  }
  const inner = Array.isArray(parsed) ? parsed[0]?.error : parsed?.error;
  if (inner && typeof inner === 'object') return { ...readGeminiErrorObject(inner, status), status };
  const text = body.trim().slice(0, 500);
  return { status, type: '', code: null, message: text || `upstream answered ${status}` };
}

/**
 * The wait an error body declares, for the RetryInfo written to a Gemini client. Without `now`
 * only relative waits count (a typed RetryInfo, `retry_after`, "try again in 20s"): an absolute
 * reset time cannot be turned into a delay.
 */
function declaredWait(body: string, now: number | null): RetryHint | null {
  const hint = retryHintFromBody(body, now ?? Number.NaN);
  return hint && Number.isFinite(hint.ms) && hint.ms > 0 ? hint : null;
}

/**
 * An upstream error (in its protocol; `'gemini'` for a native Gemini upstream) as the status and
 * body a Gemini client gets: the status is kept, the message is the upstream's own, the wait it
 * declared is a RetryInfo detail, and a Gemini upstream's own details (QuotaFailure, ErrorInfo,
 * Help) are kept as they were.
 */
export function translateErrorToGemini(
  upstream: UpstreamShape | 'gemini',
  status: number,
  body: string,
  now: number | null = null,
): { status: number; body: Record<string, unknown> } {
  const e = upstream === 'gemini' ? readGeminiError(status, body) : readUpstreamError(upstream, status, body);
  const hint = declaredWait(body, now);
  const out = geminiErrorBody({ status, message: e.message }, hint?.ms ?? null);
  if (upstream === 'gemini') {
    const details = geminiDetails(body);
    if (details.length) (out.error as Record<string, unknown>).details = details;
  }
  return { status, body: out };
}

function geminiDetails(body: string): unknown[] {
  try {
    const j = JSON.parse(body);
    const d = (Array.isArray(j) ? j[0]?.error : j?.error)?.details;
    return Array.isArray(d) ? d : [];
  } catch {
    return [];
  }
}

/** A retryDelay string ("86399s", "1.5s") in milliseconds, or null. */
export function retryDelayMs(retryDelay: unknown): number | null {
  return typeof retryDelay === 'string' ? parseDuration(retryDelay) : null;
}
