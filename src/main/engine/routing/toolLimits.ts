// Tool-count limits (R-OTH-04). Some models take at most so many tools per request (OpenAI's
// 128, smaller gateways less), and a coding agent with many MCP servers can send more. The
// refusal is a 400: the request's fault for that model, so the classifier cools nothing, but
// another model may take every tool. So, like the context-length rule:
// - a tool-limit refusal lets the walk go on, to targets of another provider or model;
// - the limit is remembered per (provider, model), not per key (every key of a provider's model
//   has the same limit), for LIMIT_MEMORY_MS, so later requests with as many tools skip that
//   model without a wasted call (a request with fewer tools still goes there);
// - detection reads the 400/422 body in each provider's wording; the limit is the number the
//   error names, else one less than the tools sent.
import { arrayLengthOf, type InboundCall } from '../proxy/inbound';
import type { UpstreamFailure } from '../resilience/port';
import type { Target } from './target';

/** How long a learnt limit holds before a request may try that model with as many tools again. */
export const LIMIT_MEMORY_MS = 60 * 60_000;
/** At most this many (provider, model) limits are remembered (the oldest go first). */
const MAX_ENTRIES = 1_000;

const T = '(?:tools|functions|function declarations)';
/** Wordings of "the request has more tools than this model takes", lower-case. */
const COUNT_REFUSALS = [
  new RegExp(`too many ${T}`), // "Too many tools", Gemini's "too many function declarations"
  new RegExp(`(?:number|count) of ${T}`), // "The number of tools exceeds the limit of 100"
  /'?tools'?:? array too long/, // OpenAI: "Invalid 'tools': array too long. Expected an array with maximum length 128"
  /tools?: maximum number of items/, // JSON-schema validators (Groq, vLLM)
  new RegExp(`(?:at most|no more than|up to|maximum of) \\d+ ${T}`), // "no more than 16 functions"
  new RegExp(`${T} (?:array )?(?:exceeds?|is over) (?:the )?(?:maximum|limit)`),
];
/** A clause about sizes inside one tool (a name, a description, a schema) is not a count. */
const NOT_A_COUNT = /characters|tokens?\b|context|depth|nesting|bytes|length of/;
const LIMIT = [
  /maximum length (\d+)/,
  /(?:maximum|max|limit)(?: number)?(?: of)?(?: items| tools| functions| function declarations)?(?: is| allowed(?: is)?)?:? (\d+)/,
  /at most (\d+)/,
  /no more than (\d+)/,
  /up to (\d+)/,
];

/** The limit a refusal names, or null when it is not a tool-count refusal (limit null: it names none). */
export function toolLimitError(f: UpstreamFailure): { limit: number | null } | null {
  if (f.status !== 400 && f.status !== 422) return null;
  const text = `${f.body} ${f.message}`.toLowerCase();
  const clause = text.split(/[.;\n]/).find((c) => COUNT_REFUSALS.some((re) => re.test(c)) && !NOT_A_COUNT.test(c));
  if (!clause) return null;
  // The number may sit in the next sentence ("array too long. Expected ... maximum length 128").
  for (const re of LIMIT) {
    const m = re.exec(clause) ?? re.exec(text);
    if (m) return { limit: Number(m[1]) || null };
  }
  return { limit: null };
}

/** How many tools a request sends (Anthropic, Chat and Responses `tools`; Chat's legacy `functions`), without building its body. */
export function toolCountOf(call: Pick<InboundCall, 'json' | 'arrayLength'>): number {
  return arrayLengthOf(call, 'tools') + arrayLengthOf(call, 'functions');
}

const keyOf = (t: Target) => `${t.conn.provider}|${t.model.toLowerCase()}`;

/** The engine's memory of tool limits, across requests. */
export class ToolLimits {
  private readonly limits = new Map<string, { limit: number; at: number }>();

  /** The limit known for this target's model, or null. */
  limitFor(target: Target, now: number): { limit: number; at: number } | null {
    if (this.limits.size === 0) return null;
    const k = keyOf(target);
    const e = this.limits.get(k);
    if (!e) return null;
    if (now - e.at >= LIMIT_MEMORY_MS) {
      this.limits.delete(k);
      return null;
    }
    return e;
  }

  learn(target: Target, limit: number, now: number): void {
    const k = keyOf(target);
    this.limits.delete(k);
    this.limits.set(k, { limit, at: now });
    if (this.limits.size > MAX_ENTRIES) this.limits.delete(this.limits.keys().next().value!);
  }

  clear(): void {
    this.limits.clear();
  }
}

/** One request's side of it: learn from a refusal, and bar the targets that would refuse it too. */
export class ToolFallback {
  /** `count`: the request's tools (toolCountOf). */
  constructor(
    private readonly count: number,
    private readonly memory: ToolLimits,
  ) {}

  /** Records a failure; true when it was a tool-count refusal (the walk may go on). */
  note(target: Target, failure: UpstreamFailure, now: number): boolean {
    if (this.count === 0) return false;
    const e = toolLimitError(failure);
    if (!e) return false;
    const limit = e.limit !== null && e.limit < this.count ? e.limit : this.count - 1;
    this.memory.learn(target, limit, now);
    return true;
  }

  /** Null when the target may be tried; else the skip detail. */
  bar(target: Target, now: number): string | null {
    if (this.count === 0) return null;
    const known = this.memory.limitFor(target, now);
    if (!known || known.limit >= this.count) return null;
    const mins = Math.max(1, Math.round((now - known.at) / 60_000));
    return `${target.model} on ${target.conn.provider} takes at most ${known.limit} tools (learnt from a refusal ${mins} min ago); this request has ${this.count}`;
  }
}
