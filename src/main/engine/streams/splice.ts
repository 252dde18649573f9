// Splicing a continuation onto a client's stream (mid-stream recovery): the continuation attempt's
// events, read into the neutral model, pass through a SpliceSink into the client's resumed writer.
// The sink drops the continuation's own start and reasoning (the client already has both), sums
// output usage onto what the client was told, and trims the overlap: the start of the continuation
// that repeats the end of the answer the client already has.
//
// Overlap, by how the continuation was asked for:
// - prefill (the answer so far sent as the start of the assistant turn): the model continues
//   exactly after it. Only the trailing whitespace Anthropic refuses in a prefill (so it was not
//   sent) can come back; a continuation that starts with the same whitespace loses it.
// - continue (a "continue exactly where you stopped" turn): models often restart the last words or
//   sentence. The longest start of the continuation (at most OVERLAP_WINDOW characters) that equals
//   the end of the answer so far is dropped when it is at least MIN_OVERLAP characters long, so a
//   short accidental match ("a", "the") is never eaten; a repeated whitespace run is dropped too.
// The continuation's first text is held back until the overlap is decided (never longer than the
// overlap window, or the first non-text event).
import type { IrSink, IrStop, IrUsage, IrWriter } from '../codecs/ir';
import { emptyUsage, mergeUsage } from '../codecs/ir';
import type { InbandError } from './errorStatus';

export type ContinuationMode = 'prefill' | 'continue';

export const OVERLAP_WINDOW = 600;
export const MIN_OVERLAP = 16;

const trailingWs = (s: string): string => s.slice(s.trimEnd().length);

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** The longest k >= MIN_OVERLAP with `tail` ending in next[0, k). */
function repeated(tail: string, next: string): number {
  for (let k = Math.min(tail.length, next.length); k >= MIN_OVERLAP; k--) {
    if (tail.endsWith(next.slice(0, k))) return k;
  }
  return 0;
}

/** Could a longer `next` still repeat more of `tail` (some occurrence of next in tail is followed by more of tail)? */
function couldGrow(tail: string, next: string): boolean {
  if (next.length === 0) return true;
  for (let p = tail.indexOf(next); p >= 0; p = tail.indexOf(next, p + 1)) {
    if (p + next.length < tail.length) return true;
  }
  return false;
}

/**
 * How many leading characters of `next` (the continuation's text so far) repeat the end of `seen`,
 * or null when more of the continuation is needed to tell (and `final` is false).
 */
export function overlapOf(seen: string, next: string, mode: ContinuationMode, final: boolean): number | null {
  const ws = trailingWs(seen);
  const wsK = commonPrefix(next, ws);
  if (mode === 'prefill') {
    if (final || wsK < next.length || wsK === ws.length) return wsK;
    return null;
  }
  const tail = seen.slice(-OVERLAP_WINDOW);
  const lead = next.length - next.trimStart().length;
  const trimmed = next.slice(lead);
  const undecided =
    !final &&
    next.length < OVERLAP_WINDOW &&
    (couldGrow(tail, next) || (lead > 0 && couldGrow(tail, trimmed)) || (wsK === next.length && wsK < ws.length));
  if (undecided) return null;
  const direct = repeated(tail, next);
  const afterWs = lead > 0 ? repeated(tail, trimmed) : 0;
  if (direct === 0 && afterWs === 0) return wsK;
  return afterWs > 0 && lead + afterWs > direct ? lead + afterWs : direct;
}

const add = (a: number | null, b: number | null): number | null => (a === null && b === null ? null : (a ?? 0) + (b ?? 0));

export interface SpliceOptions {
  /** The visible text the client already has. */
  seen: string;
  mode: ContinuationMode;
  /** The usage the client was told so far. */
  base: IrUsage;
}

export class SpliceSink implements IrSink {
  private deciding = true;
  private buf = '';
  private droppedOpen = false;
  private readonly own: IrUsage = emptyUsage();
  /** Characters of the continuation dropped as overlap. */
  trimmed = 0;

  constructor(
    private readonly writer: IrWriter,
    private readonly o: SpliceOptions,
  ) {}

  private flush(final: boolean): void {
    if (!this.deciding) return;
    const k = overlapOf(this.o.seen, this.buf, this.o.mode, final);
    if (k === null) return;
    this.deciding = false;
    this.trimmed = k;
    const rest = this.buf.slice(k);
    this.buf = '';
    if (rest) this.writer.text(rest);
  }

  start(): void {}

  text(text: string): void {
    if (!this.deciding) return this.writer.text(text);
    this.buf += text;
    this.flush(false);
  }

  reasoning(): void {
    this.droppedOpen = true;
  }

  signature(): void {}

  redacted(): void {}

  toolStart(key: number, id: string, name: string): void {
    this.flush(true);
    this.writer.toolStart(key, id, name);
  }

  toolArgs(key: number, json: string): void {
    this.writer.toolArgs(key, json);
  }

  blockEnd(): void {
    if (this.droppedOpen) {
      this.droppedOpen = false;
      return;
    }
    this.flush(true);
    this.writer.blockEnd();
  }

  usage(u: Partial<IrUsage>): void {
    mergeUsage(this.own, u);
    const b = this.o.base;
    // Output is the concatenation of the attempts' output; input stays the conversation's (the
    // first attempt's prompt), which is what clients read as the context size.
    this.writer.usage({
      input: b.input ?? this.own.input,
      cachedInput: b.cachedInput ?? this.own.cachedInput,
      cacheWrite: b.cacheWrite ?? this.own.cacheWrite,
      output: add(b.output, this.own.output),
      reasoning: add(b.reasoning, this.own.reasoning),
    });
  }

  stop(reason: IrStop, stopSequence: string | null): void {
    this.flush(true);
    this.writer.stop(reason, stopSequence);
  }

  finish(): void {
    this.flush(true);
    this.writer.finish();
  }

  error(e: InbandError): void {
    this.flush(true);
    this.writer.error(e);
  }

  keepalive(comment: string): void {
    this.writer.keepalive(comment);
  }

  /** The continuation's body ended or failed: whatever text is held goes out. */
  end(): void {
    this.flush(true);
  }

  /** The continuation's own usage (for the request log). */
  get ownUsage(): IrUsage {
    return this.own;
  }
}
