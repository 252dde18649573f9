// Splicing a continuation onto a client's stream (mid-stream recovery): the continuation attempt's
// events, read into the neutral model, pass through a SpliceSink into the client's resumed writer.
// The sink drops the continuation's own start and reasoning (the client already has both), sums
// output usage onto what the client was told, and trims the overlap: the start of the continuation
// that repeats the end of the answer the client already has.
//
// Overlap, by how the continuation was asked for, always against ALL the text the client has (an
// answer of any length):
// - prefill (the answer so far sent as the start of the assistant turn): the model continues
//   exactly after it. Only the trailing whitespace Anthropic refuses in a prefill (so it was not
//   sent) can come back; a continuation that starts with the same whitespace loses it. An upstream
//   that ignores the prefill and restarts the answer from its beginning has the whole answer so far
//   dropped; any other repeat after a prefill is the model's own words and kept.
// - continue (a "continue exactly where you stopped" turn): models restart the last words, the last
//   paragraphs, or the whole answer. The longest start of the continuation that equals an end of the
//   answer so far (a suffix/prefix match, however long) is dropped when it is at least MIN_OVERLAP
//   characters long, so a short accidental match ("a", "the") is never eaten; a repeated whitespace
//   run is dropped too.
// The continuation's first text is held back until the overlap is decided: while it still occurs
// inside the answer so far (it may yet turn out to be a repeat of its end), or the first non-text
// event. Held text is therefore never longer than the answer so far. The cost per delta is the
// delta's length while the continuation keeps repeating the same place, and one search of the
// answer so far when it stops doing so (OccurrenceTracker); the final decision is one linear
// prefix-function pass (longestOverlap).
import type { IrSink, IrStop, IrUsage, IrWriter } from '../codecs/ir';
import { emptyUsage, mergeUsage } from '../codecs/ir';
import type { InbandError } from './errorStatus';

export type ContinuationMode = 'prefill' | 'continue';

export const MIN_OVERLAP = 16;

const trailingWs = (s: string): string => s.slice(s.trimEnd().length);

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * The longest k >= MIN_OVERLAP with `seen` ending in next[0, k), else 0. Linear: the prefix
 * function of next's start, then one KMP pass over the end of `seen`.
 */
export function longestOverlap(seen: string, next: string): number {
  const l = Math.min(seen.length, next.length);
  if (l < MIN_OVERLAP) return 0;
  const p = next.slice(0, l);
  const fail = new Int32Array(l);
  for (let i = 1, k = 0; i < l; i++) {
    const c = p.charCodeAt(i);
    while (k > 0 && p.charCodeAt(k) !== c) k = fail[k - 1]!;
    if (p.charCodeAt(k) === c) k++;
    fail[i] = k;
  }
  let q = 0;
  for (let i = seen.length - l; i < seen.length; i++) {
    const c = seen.charCodeAt(i);
    while (q > 0 && (q === l || p.charCodeAt(q) !== c)) q = fail[q - 1]!;
    if (p.charCodeAt(q) === c) q++;
  }
  return q >= MIN_OVERLAP ? q : 0;
}

/**
 * Where a growing string (the continuation's text, delta by delta) first occurs in `seen`. While it
 * occurs somewhere before the very end of `seen`, more of it may repeat more of `seen`.
 */
export class OccurrenceTracker {
  /** The first position the string occurs at in `seen`; -1: nowhere. */
  private pos = 0;
  private len = 0;
  private s = '';

  constructor(
    private readonly seen: string,
    /** Only an occurrence at the start of `seen` counts (a restart from the beginning). */
    private readonly atStart = false,
  ) {}

  add(d: string): void {
    if (d.length === 0) return;
    this.s += d;
    if (this.pos >= 0 && !this.seen.startsWith(d, this.pos + this.len)) {
      // The occurrence at pos ends here; any later one must hold the whole string so far (positions
      // before pos never held even its shorter start).
      this.pos = this.atStart ? -1 : this.seen.indexOf(this.s, this.pos + 1);
    }
    this.len += d.length;
  }

  /** The string so far occurs in `seen` and ends before its end: more of it could repeat more. */
  get inside(): boolean {
    return this.pos >= 0 && this.pos + this.len < this.seen.length;
  }
}

/**
 * The overlap of one continuation, fed its text as it arrives: how many leading characters repeat
 * the answer the client already has, or null while more text is needed to tell.
 */
export class Overlap {
  private next = '';
  /** How many leading characters of the continuation equal the answer's trailing whitespace (kept as it grows: reading `next` would flatten it every delta). */
  private wsK = 0;
  private readonly ws: string;
  private readonly whole: OccurrenceTracker;
  /** The continuation after its leading whitespace ("continue" only), once that whitespace ended. */
  private afterWs: OccurrenceTracker | null = null;
  private lead = -1;

  constructor(
    private readonly seen: string,
    private readonly mode: ContinuationMode,
  ) {
    this.ws = trailingWs(seen);
    this.whole = new OccurrenceTracker(seen, mode === 'prefill');
  }

  add(d: string): void {
    if (this.wsK === this.next.length) this.wsK += commonPrefix(d, this.ws.slice(this.wsK));
    this.next += d;
    this.whole.add(d);
    if (this.mode === 'prefill') return;
    if (this.lead < 0) {
      const trimmed = this.next.trimStart();
      if (trimmed.length === 0) return;
      this.lead = this.next.length - trimmed.length;
      if (this.lead > 0) {
        this.afterWs = new OccurrenceTracker(this.seen);
        this.afterWs.add(trimmed);
      }
      return;
    }
    this.afterWs?.add(d);
  }

  /** The continuation's text so far (held by the sink until the overlap is decided). */
  get text(): string {
    return this.next;
  }

  /** The characters to drop, or null when undecided (never when `final`). */
  decide(final: boolean): number | null {
    const { seen, next, ws, wsK } = this;
    const wsUndecided = wsK === next.length && wsK < ws.length;
    if (this.mode === 'prefill') {
      if (!final && (this.whole.inside || wsUndecided)) return null;
      // A restart from the beginning (the prefill ignored) repeats all the client has.
      if (seen.trimEnd().length >= MIN_OVERLAP && next.startsWith(seen)) return seen.length;
      return wsK;
    }
    const allWs = this.lead < 0 && next.length > 0;
    if (!final && (this.whole.inside || allWs || this.afterWs?.inside || wsUndecided)) return null;
    const direct = longestOverlap(seen, next);
    const afterWs = this.lead > 0 ? longestOverlap(seen, next.slice(this.lead)) : 0;
    if (direct === 0 && afterWs === 0) return wsK;
    return afterWs > 0 && this.lead + afterWs > direct ? this.lead + afterWs : direct;
  }
}

/**
 * How many leading characters of `next` (the continuation's text so far) repeat the end of `seen`,
 * or null when more of the continuation is needed to tell (and `final` is false).
 */
export function overlapOf(seen: string, next: string, mode: ContinuationMode, final: boolean): number | null {
  const o = new Overlap(seen, mode);
  o.add(next);
  return o.decide(final);
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
  private droppedOpen = false;
  private readonly own: IrUsage = emptyUsage();
  /** Characters of the continuation dropped as overlap. */
  trimmed = 0;

  /** Until the overlap is decided (then dropped with the text it held). */
  private overlap: Overlap | null;

  constructor(
    private readonly writer: IrWriter,
    private readonly o: SpliceOptions,
  ) {
    this.overlap = new Overlap(o.seen, o.mode);
  }

  private flush(final: boolean): void {
    const o = this.overlap;
    if (!o) return;
    const k = o.decide(final);
    if (k === null) return;
    this.overlap = null;
    this.trimmed = k;
    const rest = o.text.slice(k);
    if (rest) this.writer.text(rest);
  }

  start(): void {}

  text(text: string): void {
    if (!this.overlap) return this.writer.text(text);
    this.overlap.add(text);
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
