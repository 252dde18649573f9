// The context-length rule. A request that is too long for a model is not the connection's fault
// (the classifier calls it a bad request) and another connection of the same model would refuse
// it too; but a model with a larger context window may serve it. So after a context-length error
// the walk continues only to targets whose (known) window is larger than the failed model's and
// than the tokens the error reported, and never to the same model again. Detection reads the
// failure's status and body, in each provider's wording.
import type { UpstreamFailure } from '../../resilience/port';
import type { Target } from '../target';
import type { ModelCatalog } from './modelCatalog';

/** Body wordings of "the prompt does not fit the context window", lower-case. */
const PHRASES = [
  'context_length_exceeded', // OpenAI code, DeepSeek, most OpenAI-compatible gateways
  'prompt is too long', // Anthropic
  'maximum context length', // OpenAI prose, vLLM, Mistral
  'context length exceeded',
  'context window exceeds',
  'exceeds the context window',
  'exceeds the maximum context',
  'input is too long', // Bedrock
  'input token count', // Gemini: "The input token count (N) exceeds the maximum number of tokens allowed (M)"
  'too many input tokens',
  'reduce the length of the messages', // OpenAI, Groq
  'model_context_window_exceeded',
  'string_above_max_length',
  'request exceeds the maximum allowed number of tokens',
  'exceeds the available context size', // llama.cpp
  'longer than the model\'s context length', // Ollama / vLLM
  '上下文长度', // Chinese gateways: "context length"
];

export interface ContextLengthError {
  /** The window the error names ("maximum context length is 8192"), else null. */
  limit: number | null;
  /** The tokens the prompt needed, when the error says ("resulted in 9000 tokens", "210000 tokens > 200000"). */
  needed: number | null;
}

const NUMBER = /(\d[\d,_]*)/;
const n = (s: string | undefined) => (s === undefined ? null : Number(s.replace(/[,_]/g, '')) || null);

/** A context-length error, or null. Only 400/413/422 answers (and error events mapped to them) qualify. */
export function contextLengthError(f: UpstreamFailure): ContextLengthError | null {
  if (f.status !== 400 && f.status !== 413 && f.status !== 422) return null;
  const text = `${f.body} ${f.message}`.toLowerCase();
  if (!PHRASES.some((p) => text.includes(p))) return null;
  let limit: number | null = null;
  let needed: number | null = null;
  const arrow = /(\d[\d,_]*)\s*tokens?\s*>\s*(\d[\d,_]*)/.exec(text); // "210000 tokens > 200000 maximum"
  if (arrow) {
    needed = n(arrow[1]);
    limit = n(arrow[2]);
  }
  limit ??= n(new RegExp(`maximum context length is\\s*${NUMBER.source}`).exec(text)?.[1]);
  limit ??= n(new RegExp(`maximum number of tokens allowed\\s*\\(?${NUMBER.source}`).exec(text)?.[1]);
  limit ??= n(new RegExp(`context length of\\s*(?:only\\s*)?${NUMBER.source}`).exec(text)?.[1]);
  needed ??= n(new RegExp(`resulted in\\s*${NUMBER.source}\\s*tokens`).exec(text)?.[1]);
  needed ??= n(new RegExp(`input token count\\s*\\(?${NUMBER.source}`).exec(text)?.[1]);
  needed ??= n(new RegExp(`requested\\s*${NUMBER.source}\\s*tokens`).exec(text)?.[1]);
  return { limit, needed };
}

/**
 * One request's memory of context-length failures: which models refused, and the smallest window
 * a further target must beat. `bar(target)` says why a target may no longer be tried.
 */
export class ContextFallback {
  private readonly refused = new Set<string>();
  /** A further target needs a known window above this. */
  private floor = -1;

  constructor(private readonly catalog: ModelCatalog) {}

  get active(): boolean {
    return this.refused.size > 0;
  }

  /** Records a failure; true when it was a context-length error (the walk may go on to larger windows). */
  note(target: Target, failure: UpstreamFailure): boolean {
    const e = contextLengthError(failure);
    if (!e) return false;
    this.refused.add(target.model.toLowerCase());
    const own = e.limit ?? this.catalog.contextWindow(target.model);
    this.floor = Math.max(this.floor, own ?? 0, e.needed ? e.needed - 1 : 0);
    return true;
  }

  /** Null when the target may still be tried; else the skip detail. */
  bar(target: Target): string | null {
    if (!this.active) return null;
    if (this.refused.has(target.model.toLowerCase())) return `${target.model} already refused this prompt as too long`;
    const w = this.catalog.contextWindow(target.model);
    if (w === null) return `the context window of ${target.model} is unknown (add it under Resilience settings → Combos → Context windows)`;
    if (w <= this.floor) return `${target.model} has a ${w}-token window, not larger than the ${this.floor} that was refused`;
    return null;
  }
}
