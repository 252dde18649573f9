// The incremental frame reader: upstream body chunks in, typed frames out. Bytes are decoded with
// one streaming StringDecoder (a UTF-8 character split across chunks is held until its last byte
// arrives; Node's native decoder, faster per chunk than TextDecoder; a leading BOM is dropped) and
// parsed by eventsource-parser (LF, CR and CRLF line endings, multi-line data, comments). Each
// push says whether that chunk carried model output, so a native passthrough can forward the
// original bytes and still know when output started.
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { InbandError } from './errorStatus';
import { classifyFrame, commentFrame, type Frame, type FrameUsage } from './frame';
import type { ApiShape } from './shape';

export type { Frame, FrameKind, FrameUsage } from './frame';
export { classifyFrame, commentFrame, endsStream } from './frame';

export interface PushResult {
  /** The complete frames this chunk finished, in order (a frame split across chunks comes out once, whole). */
  readonly frames: Frame[];
  /** Some frame was model output (text, a tool call start, tool-call arguments). */
  readonly output: boolean;
  /** Some frame was output or reasoning progress: what resets a content-stall timer. */
  readonly progress: boolean;
  /** Some frame was the protocol's terminal event. */
  readonly terminal: boolean;
  /** The first in-band error among these frames. */
  readonly error: InbandError | null;
}

/**
 * A frame as SSE text again (same event name and data, normalised line endings): for replaying
 * held-back frames when the original bytes are gone.
 */
export function frameToSse(f: Frame): string {
  if (f.comment !== null) return `: ${f.comment}\n\n`;
  const data = f.data.indexOf('\n') < 0 ? `data: ${f.data}\n` : f.data.split('\n').map((l) => `data: ${l}\n`).join('');
  return `${f.event !== null ? `event: ${f.event}\n` : ''}${data}\n`;
}

const CRLF = /\r\n/g;

const EMPTY: PushResult = Object.freeze({ frames: [], output: false, progress: false, terminal: false, error: null }) as PushResult;

export class FrameReader {
  private readonly decoder = new StringDecoder('utf8');
  private atStart = true;
  private readonly parser: EventSourceParser;
  private pending: Frame[] = [];
  private ended = false;
  private _sawOutput = false;
  private _sawReasoning = false;
  private _sawTerminal = false;
  private _error: InbandError | null = null;
  private _frames = 0;
  private _outputFrames = 0;
  private _stopReason: string | null = null;
  private _inputTokens: number | null = null;
  private _outputTokens: number | null = null;
  private _cacheRead: number | null = null;
  private _cacheWrite: number | null = null;

  constructor(readonly shape: ApiShape) {
    this.parser = createParser({
      onEvent: (e) => this.pending.push(classifyFrame(this.shape, e.event ?? null, e.data)),
      onComment: (c) => this.pending.push(commentFrame(this.shape, c)),
    });
  }

  /** Feeds one upstream body chunk; returns the frames it completed. */
  push(chunk: Uint8Array | string): PushResult {
    if (this.ended) return EMPTY;
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk as Buffer);
    if (this.atStart && text) {
      // A UTF-8 byte-order mark is not part of the stream (TextDecoder's behaviour).
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // CRLF line endings (Google's) are fed as LF, which the parser splits far faster; a pair split
    // across chunks is left as it is (the parser joins it). Event data cannot hold a raw CR or LF,
    // so nothing an event means changes (the bytes forwarded to a client are the original ones).
    if (text) this.parser.feed(text.indexOf('\r') >= 0 ? text.replace(CRLF, '\n') : text);
    return this.collect();
  }

  /**
   * The body ended: flushes the decoder and a last event that lacked its blank line (a cut line
   * becomes a malformed frame). Whether the stream was complete is `sawTerminal`.
   */
  end(): PushResult {
    if (this.ended) return EMPTY;
    const rest = this.decoder.end();
    this.parser.feed(`${rest}\n\n`);
    this.ended = true;
    return this.collect();
  }

  /** Some frame so far was model output (text or tool call). Reasoning alone is not (R-CC-31). */
  get sawOutput(): boolean {
    return this._sawOutput;
  }
  get sawReasoning(): boolean {
    return this._sawReasoning;
  }
  /** The protocol's terminal event arrived: a stream that ends without it was truncated. */
  get sawTerminal(): boolean {
    return this._sawTerminal;
  }
  /** The first in-band error frame, if any. */
  get error(): InbandError | null {
    return this._error;
  }
  /** Frames read so far (comments included) and how many of them were model output. */
  get frameCount(): number {
    return this._frames;
  }
  get outputFrameCount(): number {
    return this._outputFrames;
  }
  /** The latest stop / finish reason a frame carried, in the upstream's words. */
  get stopReason(): string | null {
    return this._stopReason;
  }
  /** The latest usage the stream reported (Anthropic: message_start then message_delta; OpenAI: the usage chunk). */
  get usage(): FrameUsage {
    const u: FrameUsage = { inputTokens: this._inputTokens, outputTokens: this._outputTokens };
    if (this._cacheRead !== null) u.cacheReadTokens = this._cacheRead;
    if (this._cacheWrite !== null) u.cacheWriteTokens = this._cacheWrite;
    return u;
  }

  private collect(): PushResult {
    const frames = this.pending;
    if (frames.length === 0) return EMPTY;
    this.pending = [];
    let output = false;
    let progress = false;
    let terminal = false;
    let error: InbandError | null = null;
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i]!;
      if (f.output) {
        output = true;
        this._outputFrames++;
      }
      if (f.output || f.reasoning) progress = true;
      if (f.reasoning) this._sawReasoning = true;
      if (f.terminal) terminal = true;
      if (f.error && !error) error = f.error;
      if (f.stopReason !== null) this._stopReason = f.stopReason;
      if (f.usage) {
        if (f.usage.inputTokens !== null) this._inputTokens = f.usage.inputTokens;
        if (f.usage.outputTokens !== null) this._outputTokens = f.usage.outputTokens;
        if (f.usage.cacheReadTokens !== undefined) this._cacheRead = f.usage.cacheReadTokens;
        if (f.usage.cacheWriteTokens !== undefined) this._cacheWrite = f.usage.cacheWriteTokens;
      }
    }
    this._frames += frames.length;
    if (output) this._sawOutput = true;
    if (terminal) this._sawTerminal = true;
    if (error && !this._error) this._error = error;
    return { frames, output, progress, terminal, error };
  }
}
