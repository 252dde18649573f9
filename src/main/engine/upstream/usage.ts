// Token usage from a response body without buffering it: keep its first and last few KiB and read
// the usage fields from those at the end (Anthropic puts input tokens in message_start and output
// tokens in the final message_delta; OpenAI puts usage in the last chunk or at the end of the JSON).

const HEAD = 4 * 1024;
const TAIL = 8 * 1024;

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

  result(): { inputTokens: number | null; outputTokens: number | null } {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    return {
      inputTokens: lastNumber(tail, INPUT) ?? lastNumber(head, INPUT),
      outputTokens: lastNumber(tail, OUTPUT) ?? lastNumber(head, OUTPUT),
    };
  }
}

const INPUT = /"(?:input_tokens|prompt_tokens)"\s*:\s*(\d+)/g;
const OUTPUT = /"(?:output_tokens|completion_tokens)"\s*:\s*(\d+)/g;

function lastNumber(text: string, re: RegExp): number | null {
  if (!text) return null;
  let last: number | null = null;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) last = Number(m[1]);
  return last;
}
