// Token usage from a response body without buffering it: keep its first and last few KiB and read
// the usage fields from those at the end (Anthropic puts input tokens in message_start and output
// tokens in the final message_delta; OpenAI puts usage in the last chunk or at the end of the JSON).
//
// Prompt-cache tokens, per shape:
//   Anthropic      `cache_read_input_tokens`, `cache_creation_input_tokens` beside `input_tokens`,
//                  which excludes them: the three are summed into `inputTokens`;
//   OpenAI Chat    `prompt_tokens_details.cached_tokens`, a part of `prompt_tokens`;
//   Responses      `input_tokens_details.cached_tokens`, a part of `input_tokens`.
// So `inputTokens` is always every prompt token, and the cache counts are parts of it (the rule the
// price catalogue prices by, usage/prices.ts).

const HEAD = 4 * 1024;
const TAIL = 8 * 1024;

export interface TappedUsage {
  /** Every prompt token, cache reads and writes included. */
  inputTokens: number | null;
  outputTokens: number | null;
  /** Prompt tokens read from the provider's cache; null when the body does not say. */
  cacheReadTokens: number | null;
  /** Prompt tokens written to the provider's cache (Anthropic only); null when the body does not say. */
  cacheWriteTokens: number | null;
}

export class UsageTap {
  private head: Buffer[] = [];
  private headSize = 0;
  private tail: Buffer[] = [];
  private tailSize = 0;

  push(chunk: Buffer): void {
    if (this.headSize < HEAD) {
      this.head.push(chunk);
      this.headSize += chunk.length;
      return;
    }
    this.tail.push(chunk);
    this.tailSize += chunk.length;
    while (this.tail.length > 1 && this.tailSize - this.tail[0]!.length >= TAIL) {
      this.tailSize -= this.tail.shift()!.length;
    }
  }

  result(): TappedUsage {
    return usageFromText(Buffer.concat(this.head).toString('utf8'), Buffer.concat(this.tail).toString('utf8'));
  }
}

/** Usage of a whole body held as text: its head and tail, as the tap keeps them of a piped one. */
export function usageOfText(text: string): TappedUsage {
  return text.length <= HEAD + TAIL ? usageFromText(text, '') : usageFromText(text.slice(0, HEAD), text.slice(-TAIL));
}

/** Usage read from a body's head and tail text (the tail's value wins: it is the later report). */
export function usageFromText(head: string, tail: string): TappedUsage {
  const last = (re: RegExp) => lastNumber(tail, re) ?? lastNumber(head, re);
  const input = last(INPUT);
  const output = last(OUTPUT);
  const anthropicRead = last(ANTHROPIC_READ);
  const anthropicWrite = last(ANTHROPIC_WRITE);
  if (anthropicRead !== null || anthropicWrite !== null) {
    return {
      inputTokens: input === null ? null : input + (anthropicRead ?? 0) + (anthropicWrite ?? 0),
      outputTokens: output,
      cacheReadTokens: anthropicRead,
      cacheWriteTokens: anthropicWrite,
    };
  }
  return { inputTokens: input, outputTokens: output, cacheReadTokens: last(OPENAI_CACHED), cacheWriteTokens: null };
}

const INPUT = /"(?:input_tokens|prompt_tokens)"\s*:\s*(\d+)/g;
const OUTPUT = /"(?:output_tokens|completion_tokens)"\s*:\s*(\d+)/g;
const ANTHROPIC_READ = /"cache_read_input_tokens"\s*:\s*(\d+)/g;
const ANTHROPIC_WRITE = /"cache_creation_input_tokens"\s*:\s*(\d+)/g;
/** Chat's `prompt_tokens_details` and Responses' `input_tokens_details` both name it `cached_tokens`. */
const OPENAI_CACHED = /"cached_tokens"\s*:\s*(\d+)/g;

function lastNumber(text: string, re: RegExp): number | null {
  if (!text) return null;
  let last: number | null = null;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) last = Number(m[1]);
  return last;
}
