// Error bodies and in-band error events in each API shape's own words, so an agent's SDK parses
// them: Anthropic `{type:'error', error:{type, message}}` (as `event: error` in a stream), OpenAI
// `{error:{message, type, param, code}}` (a Chat stream carries it as a data chunk, which the openai
// SDK throws as an APIError), Responses `response.failed`, and Google's `{error:{code, message,
// status}}` (a Gemini SSE stream carries it as a data event).
import { geminiErrorBody } from './googleErrors';
import { sseEvent } from './sse';
import type { ApiShape } from './shape';

export interface ShapedError {
  status: number;
  message: string;
  /** A provider code worth keeping (`context_length_exceeded`, `insufficient_quota`, ...). */
  code?: string | null;
}

/** Anthropic's error.type for a status. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/** OpenAI's error.type for a status. */
export function openaiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 529) return 'service_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** An OpenAI-style code for a status when the upstream gave none (Codex keys retries on these). */
export function openaiErrorCode(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 402) return 'insufficient_quota';
  if (status === 503 || status === 529) return 'server_is_overloaded';
  if (status === 401) return 'invalid_api_key';
  if (status === 404) return 'model_not_found';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export function errorBodyFor(shape: ApiShape, e: ShapedError): Record<string, unknown> {
  if (shape === 'gemini') return geminiErrorBody(e);
  if (shape === 'anthropic-messages') {
    return { type: 'error', error: { type: anthropicErrorType(e.status), message: e.message } };
  }
  return { error: { message: e.message, type: openaiErrorType(e.status), param: null, code: e.code ?? openaiErrorCode(e.status) } };
}

/**
 * A stream-ending error event in the shape's own protocol, for a stream whose state the caller
 * does not track (native passthrough). Translators emit their own (`ResponseTranslator.fail`),
 * which also closes open blocks and, for Responses, carries the output so far.
 */
export function streamErrorEvent(shape: ApiShape, e: ShapedError, sequenceNumber = 0): string {
  if (shape === 'anthropic-messages') return sseEvent('error', JSON.stringify(errorBodyFor(shape, e)));
  if (shape === 'openai-chat' || shape === 'gemini') return sseEvent(null, JSON.stringify(errorBodyFor(shape, e)));
  const response = {
    id: 'resp_failed',
    object: 'response',
    created_at: 0,
    status: 'failed',
    error: { code: e.code ?? openaiErrorCode(e.status), message: e.message },
    incomplete_details: null,
    output: [],
  };
  return sseEvent('response.failed', JSON.stringify({ type: 'response.failed', response, sequence_number: sequenceNumber }));
}
