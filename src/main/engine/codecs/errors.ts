// Upstream errors (HTTP bodies and in-band frames) into the inbound protocol's error shape. The
// status is kept (so the resilience layer and the agent's retry logic see what the upstream
// said); the message is the upstream's own; the error type is the inbound protocol's word for that
// status. Two meanings are carried across on purpose because agents act on them: a context-length
// error (Claude Code compacts on "prompt is too long", Codex on `context_length_exceeded`) and an
// exhausted balance (`insufficient_quota`).
import { errorFromObject, type InbandError } from '../streams/errorStatus';
import { anthropicErrorType, openaiErrorCode, openaiErrorType } from '../streams/errorEvents';
import { geminiErrorBody } from '../streams/googleErrors';
import type { ApiShape } from '../streams/shape';
import type { UpstreamShape } from './types';

const CONTEXT = /prompt is too long|context[ _]length|maximum context|context window|too many tokens|reduce the length|input is too long/i;
const CREDITS = /credit balance|insufficient[_ ]quota|insufficient balance|billing/i;

export type ErrorMeaning = 'context_length' | 'credits' | null;

export function meaningOf(e: { message: string; type: string; code: string | null }): ErrorMeaning {
  const words = `${e.type} ${e.code ?? ''} ${e.message}`;
  if (CONTEXT.test(words)) return 'context_length';
  if (CREDITS.test(words)) return 'credits';
  return null;
}

/** Reads an upstream error body in its protocol (JSON or not). */
export function readUpstreamError(_upstream: UpstreamShape, status: number, body: string): InbandError {
  let parsed: any = null;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = null;
  }
  if (parsed && typeof parsed === 'object') {
    const inner = parsed.error ?? parsed;
    const e = errorFromObject(typeof inner === 'string' ? { message: inner } : inner, status);
    if (!e.message || e.message === 'the upstream reported an error') e.message = typeof parsed.message === 'string' ? parsed.message : `upstream answered ${status}`;
    return { ...e, status };
  }
  const text = body.trim().slice(0, 500);
  return { status, type: '', code: null, message: text || `upstream answered ${status}` };
}

/** The inbound protocol's error object for an upstream error (HTTP body, or a Chat in-band chunk). */
export function errorEventBody(inbound: ApiShape, e: InbandError): Record<string, unknown> {
  const meaning = meaningOf(e);
  if (inbound === 'gemini') return geminiErrorBody(e);
  if (inbound === 'anthropic-messages') {
    const message = meaning === 'context_length' && !/prompt is too long/i.test(e.message) ? `prompt is too long: ${e.message}` : e.message;
    return { type: 'error', error: { type: anthropicErrorType(e.status), message } };
  }
  return {
    error: {
      message: e.message,
      type: openaiErrorType(e.status),
      param: null,
      code: openaiCode(e, meaning),
    },
  };
}

/** A code OpenAI clients recognise: the upstream's when it is OpenAI-style, else one for the meaning or status. */
export function openaiCode(e: InbandError, meaning: ErrorMeaning = meaningOf(e)): string {
  if (meaning === 'context_length') return 'context_length_exceeded';
  if (meaning === 'credits') return 'insufficient_quota';
  if (e.code && /^[a-z_]+$/.test(e.code)) return e.code;
  return openaiErrorCode(e.status);
}

export function translateError(
  upstream: UpstreamShape,
  inbound: ApiShape,
  status: number,
  body: string,
): { status: number; body: Record<string, unknown> } {
  const e = readUpstreamError(upstream, status, body);
  return { status, body: errorEventBody(inbound, e) };
}
