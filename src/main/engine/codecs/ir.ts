// The neutral model every codec pivots through: inbound requests are read into it and upstream
// requests written from it; upstream responses (JSON or stream events) are read into it and the
// inbound protocol's responses written from it. It is a superset of the three wire shapes (it keeps
// Anthropic thinking signatures and redacted thinking, image and file sources, tool ids), so a pair
// that has no direct wire equivalent (Responses ↔ Anthropic) loses nothing by going through it.
import type { InbandError } from '../streams/errorStatus';

export interface Field<T> {
  value: T;
  /** Where it came from in the inbound request (for a 400 that names it). */
  path: string;
}

export type ImageSource = { type: 'base64'; mediaType: string; data: string } | { type: 'url'; url: string };

export type IrPart =
  /** `thoughtSignature`: Gemini's own signature on this part, sent back only to a Gemini target. */
  | { kind: 'text'; text: string; path: string; thoughtSignature?: string }
  | { kind: 'image'; source: ImageSource; detail: string | null; path: string }
  /** An inline document (PDF or plain text), base64 data. */
  | { kind: 'file'; mediaType: string; data: string; filename: string | null; path: string }
  /** A document by URL. */
  | { kind: 'file_url'; url: string; filename: string | null; path: string };

export type IrTextPart = Extract<IrPart, { kind: 'text' }>;

export type IrItem =
  /** A system / developer message at its position in the conversation. */
  | { type: 'system'; parts: IrTextPart[]; path: string }
  | { type: 'user'; parts: IrPart[]; path: string }
  | { type: 'assistant'; parts: IrTextPart[]; path: string }
  /** `thoughtSignature`: Gemini's own signature on the call, sent back only to a Gemini target. */
  | { type: 'tool_call'; id: string; name: string; arguments: string; path: string; thoughtSignature?: string }
  | { type: 'tool_result'; callId: string; parts: IrPart[]; isError: boolean; path: string }
  /** Prior reasoning. Anthropic accepts it back only with its signature (or as redacted data). */
  | { type: 'reasoning'; text: string; signature: string | null; redacted: string | null; path: string; thoughtSignature?: string };

export interface IrTool {
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
  path: string;
}

export type IrToolChoice = { type: 'auto' } | { type: 'required' } | { type: 'none' } | { type: 'tool'; name: string };

/** OpenAI's reasoning_effort values (a superset of Anthropic's output_config.effort). */
export type Effort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface IrReasoning {
  /** null when only a token budget was given. */
  effort: Effort | null;
  budgetTokens: number | null;
  path: string;
}

export type IrResponseFormat =
  | { type: 'json_schema'; name: string | null; description: string | null; schema: Record<string, unknown>; strict: boolean | null }
  | { type: 'json_object' };

export interface IrRequest {
  /** Top-level instructions (Anthropic `system`, Responses `instructions`), in order. */
  system: IrTextPart[];
  items: IrItem[];
  tools: IrTool[];
  toolChoice: Field<IrToolChoice> | null;
  parallelToolCalls: Field<boolean> | null;
  maxTokens: Field<number> | null;
  temperature: Field<number> | null;
  topP: Field<number> | null;
  topK: Field<number> | null;
  stop: Field<string[]> | null;
  reasoning: IrReasoning | null;
  user: Field<string> | null;
  responseFormat: Field<IrResponseFormat> | null;
  verbosity: Field<string> | null;
  /** Gemini safety settings: a Gemini target applies them, others note them as dropped. */
  safetySettings?: Field<Record<string, unknown>[]>;
  /** Inbound paths accepted but not sent, with why (for the request log). */
  dropped: string[];
  /** Types of the provider-hosted tools left out (hostedTools.ts), for the response header. */
  droppedTools: string[];
}

export function emptyRequest(): IrRequest {
  return {
    system: [],
    items: [],
    tools: [],
    toolChoice: null,
    parallelToolCalls: null,
    maxTokens: null,
    temperature: null,
    topP: null,
    topK: null,
    stop: null,
    reasoning: null,
    user: null,
    responseFormat: null,
    verbosity: null,
    dropped: [],
    droppedTools: [],
  };
}

// ---- responses -------------------------------------------------------------------------------

export type IrStop = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | 'pause_turn' | 'context_window';

export interface IrUsage {
  /** All prompt tokens, cached ones included. */
  input: number | null;
  output: number | null;
  cachedInput: number | null;
  cacheWrite: number | null;
  reasoning: number | null;
}

export const emptyUsage = (): IrUsage => ({ input: null, output: null, cachedInput: null, cacheWrite: null, reasoning: null });

export function mergeUsage(into: IrUsage, u: Partial<IrUsage>): void {
  if (u.input != null) into.input = u.input;
  if (u.output != null) into.output = u.output;
  if (u.cachedInput != null) into.cachedInput = u.cachedInput;
  if (u.cacheWrite != null) into.cacheWrite = u.cacheWrite;
  if (u.reasoning != null) into.reasoning = u.reasoning;
}

export type IrContent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; signature: string | null; redacted: string | null }
  | { type: 'tool_call'; id: string; name: string; arguments: string };

export interface IrResponse {
  id: string | null;
  model: string | null;
  content: IrContent[];
  stop: IrStop;
  stopSequence: string | null;
  usage: IrUsage;
}

/**
 * A translated stream, event by event: an upstream reader calls these, an inbound writer turns each
 * into its protocol's SSE text (kept until `take()`).
 */
export interface IrSink {
  start(id: string | null, model: string | null): void;
  text(text: string): void;
  reasoning(text: string): void;
  signature(signature: string): void;
  redacted(data: string): void;
  /** `key` identifies the call within this stream (Anthropic block index, Chat tool index). */
  toolStart(key: number, id: string, name: string): void;
  toolArgs(key: number, json: string): void;
  /** The upstream closed its current block (Anthropic content_block_stop). */
  blockEnd(): void;
  usage(u: Partial<IrUsage>): void;
  stop(reason: IrStop, stopSequence: string | null): void;
  /** The upstream's terminal event: the answer is complete. */
  finish(): void;
  error(e: InbandError): void;
  keepalive(comment: string): void;
}

export interface IrWriter extends IrSink {
  /** SSE text produced since the last take. */
  take(): string;
}
