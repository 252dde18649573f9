// One streamed upstream attempt, read as frames from its first byte, native and translated alike.
// Each chunk is read into classified frames (FrameReader) and cut at the end of its last complete
// event (SseBoundary), and the attempt's watchdogs see it. Before commit the chunks are held
// (`holdBack`): nothing reaches the client until the first progress frame (model output or
// thinking) or the hold-back byte budget, so an error, a stall or an empty answer before that can
// still fail over invisibly. On commit the held chunks are handed to the client side in order
// (`start`), then every later chunk as it arrives, with backpressure (a sink that answers false
// pauses the upstream until `resume`).
import type { ResponseTranslator } from '../codecs';
import type { InbandError } from '../streams/errorStatus';
import { FrameReader, type Frame } from '../streams/frames';
import type { ApiShape } from '../streams/shape';
import { SseBoundary } from '../streams/sseBoundary';
import type { StreamWatch } from '../streams/watchdogs';
import type { BodyReader } from './bodyReader';

/** The client side of a stream: receives each chunk's frames and the bytes that complete them. */
export interface StreamSink {
  /** false pauses the upstream until `resume()`. */
  chunk(frames: readonly Frame[], bytes: Buffer): boolean;
  end(): void;
  error(e: unknown): void;
}

export type HoldResult =
  /** A frame of model output or thinking arrived: commit. */
  | { kind: 'progress' }
  /** The byte budget is spent without output: commit anyway. */
  | { kind: 'budget' }
  /** The body ended before any output (see `frames` for whether it ended properly). */
  | { kind: 'ended' }
  /** An in-band error frame. */
  | { kind: 'inband'; error: InbandError; frame: Frame }
  /** The body broke off (or a watchdog ended it). */
  | { kind: 'broken'; error: unknown };

/** The most bytes one unfinished event may hold (a server that never sends a blank line is broken). */
export const MAX_EVENT_BYTES = 8 * 1024 * 1024;

const EMPTY = Buffer.alloc(0);

export class UpstreamStream {
  readonly frames: FrameReader;
  private readonly boundary = new SseBoundary();
  private held: { frames: readonly Frame[]; bytes: Buffer }[] = [];
  private heldBytes = 0;
  private sink: StreamSink | null = null;
  private settle: ((r: HoldResult) => void) | null = null;
  private ended = false;
  private failed: unknown = null;
  /** The translation of this attempt's frames, when the target speaks another protocol. */
  translator: ResponseTranslator | null = null;
  /** Bytes of the upstream body read. */
  bytes = 0;

  constructor(
    readonly shape: ApiShape,
    private readonly body: BodyReader,
    readonly watch: StreamWatch,
    private readonly budget: number,
    /** Its bytes go to the client as they are (native): cut them at event boundaries. A translated stream only needs its frames. */
    private readonly native = true,
  ) {
    this.frames = new FrameReader(shape);
  }

  /** Reads from `first` on until commit is due (or the attempt fails). */
  holdBack(first: Buffer): Promise<HoldResult> {
    return new Promise((resolve) => {
      this.settle = resolve;
      this.body.consume({ data: (c) => this.onData(c), end: () => this.onEnd(), error: (e) => this.onError(e) }, first);
    });
  }

  private done(r: HoldResult): void {
    const s = this.settle;
    this.settle = null;
    s?.(r);
  }

  private onData(c: Buffer): boolean {
    this.bytes += c.length;
    let bytes = this.native ? this.boundary.push(c) : EMPTY;
    const push = this.frames.push(c);
    this.watch.observe(push.frames, push.progress, c.length);
    // Once the protocol's terminal event is in, only the body's end is left: no more judgements.
    if (push.terminal) this.watch.stop();
    if (this.boundary.held > MAX_EVENT_BYTES) {
      this.onError(new Error(`the upstream sent an event larger than ${MAX_EVENT_BYTES >> 20} MiB (or no event boundaries)`));
      this.body.destroy();
      return false;
    }
    if (bytes.length === 0) bytes = EMPTY;
    if (this.sink) return this.sink.chunk(push.frames, bytes);
    this.held.push({ frames: push.frames, bytes });
    this.heldBytes += c.length;
    if (this.settle) {
      if (push.error) {
        const frame = push.frames.find((f) => f.error)!;
        this.done({ kind: 'inband', error: push.error, frame });
      } else if (push.progress) this.done({ kind: 'progress' });
      else if (this.heldBytes > this.budget) this.done({ kind: 'budget' });
      else return true;
    }
    return false;
  }

  private onEnd(): void {
    const tail = this.frames.end();
    const rest = this.boundary.end() ?? EMPTY;
    this.ended = true;
    this.watch.stop();
    if (this.sink) {
      if (tail.frames.length || rest.length) this.sink.chunk(tail.frames, rest);
      this.sink.end();
      return;
    }
    if (tail.frames.length || rest.length) this.held.push({ frames: tail.frames, bytes: rest });
    if (this.settle) {
      if (tail.error) this.done({ kind: 'inband', error: tail.error, frame: tail.frames.find((f) => f.error)! });
      else if (tail.progress) this.done({ kind: 'progress' });
      else this.done({ kind: 'ended' });
    }
  }

  private onError(e: unknown): void {
    if (this.failed !== null || this.ended) return;
    this.failed = e;
    this.watch.stop();
    if (this.sink) return this.sink.error(e);
    this.done({ kind: 'broken', error: e });
  }

  /** Commit: the held chunks go to `sink` in order, then the rest of the body as it comes. */
  start(sink: StreamSink): void {
    this.sink = sink;
    const held = this.held;
    this.held = [];
    let ok = true;
    for (const h of held) ok = sink.chunk(h.frames, h.bytes) && ok;
    if (this.failed !== null) return sink.error(this.failed);
    if (this.ended) return sink.end();
    if (ok) this.body.resume();
  }

  resume(): void {
    this.body.resume();
  }

  /** The attempt's figures for the request log. */
  stats(t0: number): { firstOutputMs: number | null; bytes: number; frames: number; outputFrames: number } {
    const first = this.watch.firstProgressAt;
    return { firstOutputMs: first === null ? null : Math.round(first - t0), bytes: this.bytes, frames: this.frames.frameCount, outputFrames: this.frames.outputFrameCount };
  }

  destroy(): void {
    this.watch.stop();
    this.body.destroy();
  }
}
