// The client's side of one streamed request, across every attempt that writes to it: the commit
// (status, headers, then the held-back frames in order), each attempt's frames rendered in the
// client's protocol, and the one end — a clean terminal event, or an error event saying the answer
// is incomplete. How an attempt's frames become the client's bytes:
// - native (the first attempt, same protocol): the upstream's own bytes, byte for byte, up to the
//   end of the last complete event; a chunk with a malformed frame (skipped, so the client's parser
//   never sees it) or an error frame (never passed on as text) is written as its good frames
//   instead. A tracker keeps what the client was sent (codecs/clientState.ts).
// - translated (the first attempt, another protocol): the codec's translator, frame by frame.
// - spliced (a continuation of a broken answer): the continuation read into the neutral model,
//   through a SpliceSink (overlap trimmed, reasoning dropped, usage summed) into the client's
//   writer resumed after what it was sent: one message_start, the next block index, one terminal.
import type { AttemptEntry } from '../../../shared/model';
import type { ClientState, ResponseContext, ResponseTranslator, StateTracker } from '../codecs';
import { clientWriterFor, continuable, trackerFor, upstreamReaderFor } from '../codecs';
import type { ClientWriter, UpstreamReader } from '../codecs/translator';
import type { Clock } from '../clock';
import type { SecretRedactor } from '../logger';
import type { UpstreamFailure } from '../resilience/port';
import { inboundShapeOf } from '../routing/upstreamShape';
import type { Target } from '../routing/target';
import type { InbandError } from '../streams/errorStatus';
import type { ShapedError } from '../streams/errorEvents';
import { endsStream, frameToSse, type Frame } from '../streams/frames';
import type { ApiShape } from '../streams/shape';
import { SpliceSink, type ContinuationMode } from '../streams/splice';
import { toTransportError } from '../upstream/client';
import { HOP_BY_HOP } from '../upstream/headers';
import type { ReadyResponse } from './attempt';
import type { InboundCall } from './inbound';
import { servedHeaders } from './requestRecord';
import type { StreamFailureCode } from './translatedBody';
import type { UpstreamStream } from './upstreamStream';
import type { TappedUsage } from '../upstream/usage';

/** How one attempt's part of the client's stream ended. */
export type AttemptEnd =
  | { kind: 'complete' }
  | { kind: 'client_gone' }
  | {
      kind: 'failed';
      failure: UpstreamFailure;
      code: StreamFailureCode;
      /** The answer can be continued elsewhere (text only, not inside a tool call, no stop reason yet). */
      continuable: boolean;
      /** The answer was complete (its stop reason came), only the terminal event was missing: the client's stream was closed cleanly. */
      closed: boolean;
    };

interface Rendered {
  out: Buffer | string;
  error: InbandError | null;
  /** The frame that carried the error. */
  errorFrame: Frame | null;
}

interface Renderer {
  /** `bytes` null: the frames are a part of what was read (write them, not the bytes). */
  chunk(frames: readonly Frame[], bytes: Buffer | null): Rendered;
  end(): { out: string; outcome: 'complete' | 'truncated' | 'error' };
  state(): ClientState;
}

const NOTHING = '';

/** The upstream's own bytes (same protocol as the client). */
class NativeRenderer implements Renderer {
  constructor(
    private readonly stream: UpstreamStream,
    private readonly tracker: StateTracker,
  ) {}

  chunk(frames: readonly Frame[], bytes: Buffer | null): Rendered {
    let clean = bytes !== null;
    let error: InbandError | null = null;
    let errorFrame: Frame | null = null;
    let n = 0;
    for (; n < frames.length; n++) {
      const f = frames[n]!;
      if (f.error) {
        error = f.error;
        errorFrame = f;
        break;
      }
      if (f.kind === 'malformed') clean = false;
      else this.tracker.observe(f);
    }
    if (clean && !error) return { out: bytes!, error: null, errorFrame: null };
    // Rare: write the good frames of this chunk again instead of its bytes (comments, whose bytes
    // may still be held, are left out: they are only heartbeats). Also when frames followed the
    // stream's last event in the same chunk: they are not written.
    let out = '';
    for (let i = 0; i < n; i++) {
      const f = frames[i]!;
      if (f.kind !== 'malformed' && f.kind !== 'comment') out += frameToSse(f);
    }
    return { out, error, errorFrame };
  }

  end() {
    return { out: NOTHING, outcome: this.stream.frames.sawTerminal ? ('complete' as const) : ('truncated' as const) };
  }

  state(): ClientState {
    return this.tracker.state;
  }
}

/** The codec's translation (another protocol than the client's). */
class TranslatingRenderer implements Renderer {
  constructor(private readonly translator: ResponseTranslator) {}

  chunk(frames: readonly Frame[]): Rendered {
    let out = '';
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i]!;
      if (f.error) return { out, error: f.error, errorFrame: f };
      out += this.translator.frame(f);
    }
    return { out, error: null, errorFrame: null };
  }

  end() {
    const e = this.translator.end();
    return { out: e.text, outcome: e.outcome };
  }

  state(): ClientState {
    return this.translator.clientState();
  }
}

/** A continuation spliced onto the client's stream through its resumed writer. */
class SpliceRenderer implements Renderer {
  private readonly reader: UpstreamReader;
  readonly sink: SpliceSink;

  constructor(
    private readonly writer: ClientWriter,
    shape: ApiShape,
    ctx: ResponseContext,
    seen: ClientState,
    mode: ContinuationMode,
  ) {
    this.reader = upstreamReaderFor(shape, ctx);
    this.sink = new SpliceSink(writer, { seen: seen.text, mode, base: seen.usage });
  }

  chunk(frames: readonly Frame[]): Rendered {
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i]!;
      if (f.error) return { out: this.writer.take(), error: f.error, errorFrame: f };
      this.reader.read(f, this.sink);
    }
    return { out: this.writer.take(), error: null, errorFrame: null };
  }

  end() {
    const outcome = this.reader.end(this.sink);
    this.sink.end();
    return { out: this.writer.take(), outcome };
  }

  state(): ClientState {
    return this.writer.snapshot();
  }
}

export interface ClientStreamDeps {
  clock: Clock;
  redactor: SecretRedactor;
}

export interface ClientStreamOptions {
  /** Keep the text the client is sent, so a broken answer can be continued (mid-stream recovery). */
  recovery: boolean;
}

const INCOMPLETE = 'the answer is incomplete';

export class ClientStream {
  private readonly shape: ApiShape;
  private renderer: Renderer | null = null;
  private ended = false;
  /** Monotonic time of the commit (the first bytes to the client). */
  commitAt: number | null = null;
  /** Token usage the upstreams reported, summed over the delivered attempts (for the request log). */
  readonly usage: TappedUsage = { inputTokens: null, outputTokens: null, cacheReadTokens: null, cacheWriteTokens: null };
  /** The last attempt whose answer broke (continued by the next one that reaches the client). */
  private cut: AttemptEntry | null = null;
  /** The model of the attempt writing now (for ids the writer makes up). */
  private model = '';

  constructor(
    private readonly deps: ClientStreamDeps,
    private readonly call: InboundCall,
    readonly options: ClientStreamOptions,
  ) {
    this.shape = inboundShapeOf(call.protocol);
  }

  /** Something reached the client. */
  get committed(): boolean {
    return this.commitAt !== null;
  }

  /** Committed and not ended: a continuation may still be spliced on. */
  get open(): boolean {
    return this.committed && !this.ended;
  }

  /** What the client has been sent so far. */
  state(): ClientState | null {
    return this.renderer?.state() ?? null;
  }

  private ctx(): ResponseContext {
    return { request: this.call.json, model: this.model, now: this.deps.clock.now(), requestId: this.call.requestId, trackText: this.options.recovery };
  }

  private commit(target: Target, ready: ReadyResponse<UpstreamStream>): void {
    const res = this.call.res;
    const out: Record<string, string> = {};
    for (const k in ready.headers) if (!HOP_BY_HOP.has(k)) out[k] = ready.headers[k]!;
    Object.assign(out, servedHeaders(target));
    out['x-switchyard-request-id'] = this.call.requestId;
    res.writeHead(ready.status, out);
    this.commitAt = this.deps.clock.monotonic();
  }

  /**
   * Streams one attempt to the client: the first commits and is rendered natively or translated,
   * a later one is a continuation spliced on. Resolves when the attempt's part ends; on `failed`
   * the client's response is left open (a continuation may follow, or `giveUp`).
   */
  deliver(target: Target, ready: ReadyResponse<UpstreamStream>, entry: AttemptEntry): Promise<AttemptEnd> {
    const stream = ready.reader;
    this.model = target.model;
    if (!this.committed) {
      this.commit(target, ready);
      this.renderer = stream.translator
        ? new TranslatingRenderer(stream.translator)
        : new NativeRenderer(stream, trackerFor(this.shape, this.options.recovery));
    } else {
      const seen = this.renderer!.state();
      const writer = clientWriterFor(this.shape, this.ctx(), seen);
      this.renderer = new SpliceRenderer(writer, stream.shape, this.ctx(), seen, entry.continuation ?? 'continue');
      if (this.cut) this.cut.continuedElsewhere = true;
    }
    const renderer = this.renderer;
    const res = this.call.res;
    return new Promise((resolve) => {
      let settled = false;
      /** The upstream's last event was written and the client's stream closed: anything more is dropped. */
      let atEnd = false;
      const finish = (end: AttemptEnd) => {
        if (settled) return;
        settled = true;
        res.off('drain', onDrain);
        res.off('close', onClose);
        this.addUsage(stream);
        if (end.kind === 'failed') this.cut = entry;
        resolve(end);
      };
      const onDrain = () => stream.resume();
      const onClose = () => {
        if (res.writableFinished) return;
        stream.destroy();
        this.ended = true;
        finish({ kind: 'client_gone' });
      };
      const onEnd = () => {
        const r = renderer.end();
        if (r.out) res.write(r.out);
        if (r.outcome === 'complete') {
          this.close('');
          return finish({ kind: 'complete' });
        }
        finish(this.failed({ kind: 'truncated', status: null, headers: ready.headers, body: '', message: 'the upstream stream ended before its stop event' }, 'stream_truncated'));
      };
      res.on('drain', onDrain);
      res.once('close', onClose);
      stream.start({
        chunk: (frames, bytes) => {
          if (settled) {
            // Frames after the stream's last event: the answer is over; stop reading them.
            if (atEnd) stream.destroy();
            return false;
          }
          const last = frames.findIndex(endsStream);
          const trailing = last >= 0 && last < frames.length - 1;
          const r = renderer.chunk(trailing ? frames.slice(0, last + 1) : frames, trailing ? null : bytes);
          const ok = r.out.length > 0 ? res.write(r.out) : true;
          if (r.error) {
            stream.destroy();
            const message = this.deps.redactor.scrub(r.error.message);
            finish(this.failed({ kind: 'stream_error', status: r.error.status, headers: ready.headers, body: this.deps.redactor.scrub(r.errorFrame?.data ?? ''), message }, 'upstream_stream_error'));
            return false;
          }
          if (last >= 0) {
            // The protocol's last event is written: the answer ends here, whatever follows it.
            atEnd = true;
            if (trailing) stream.destroy();
            onEnd();
            return true;
          }
          return ok;
        },
        end: () => {
          if (settled) return;
          onEnd();
        },
        error: (e) => {
          if (settled) return;
          if (stream.frames.sawTerminal) {
            // The answer was complete; the connection broke only after its terminal event.
            const r = renderer.end();
            if (r.out) res.write(r.out);
            if (r.outcome === 'complete') {
              this.close('');
              return finish({ kind: 'complete' });
            }
          }
          const fired = stream.watch.fired;
          if (fired) {
            entry.watchdog = fired.watchdog;
            return finish(this.failed({ kind: 'stall', status: null, headers: ready.headers, body: '', message: fired.message }, 'stream_stalled'));
          }
          const te = toTransportError(e);
          const kind = te.kind === 'idle_timeout' ? 'stall' : 'network';
          finish(this.failed({ kind, status: null, headers: ready.headers, body: '', message: `the upstream stream broke off: ${te.message}` }, kind === 'stall' ? 'stream_stalled' : 'stream_interrupted'));
        },
      });
    });
  }

  private failed(failure: UpstreamFailure, code: StreamFailureCode): AttemptEnd {
    const s = this.renderer!.state();
    if (s.stopped && !s.done) {
      // The answer is complete; only the terminal event is missing. Close the stream cleanly.
      this.close(closingEvent(s));
      return { kind: 'failed', failure, code, continuable: false, closed: true };
    }
    return { kind: 'failed', failure, code, continuable: this.options.recovery && continuable(s), closed: false };
  }

  private addUsage(stream: UpstreamStream): void {
    const u = stream.frames.usage;
    if (u.inputTokens !== null) this.usage.inputTokens = (this.usage.inputTokens ?? 0) + u.inputTokens;
    if (u.outputTokens !== null) this.usage.outputTokens = (this.usage.outputTokens ?? 0) + u.outputTokens;
    if (u.cacheReadTokens !== undefined) this.usage.cacheReadTokens = (this.usage.cacheReadTokens ?? 0) + u.cacheReadTokens;
    if (u.cacheWriteTokens !== undefined) this.usage.cacheWriteTokens = (this.usage.cacheWriteTokens ?? 0) + u.cacheWriteTokens;
  }

  private close(text: string): void {
    if (this.ended) return;
    this.ended = true;
    const res = this.call.res;
    if (res.writableEnded || res.destroyed) return;
    res.end(text);
  }

  /** Ends the client's stream with its protocol's error event: the answer is incomplete. */
  giveUp(e: ShapedError): void {
    if (this.ended || !this.renderer) return;
    const writer = clientWriterFor(this.shape, this.ctx(), this.renderer.state());
    const message = /incomplete/.test(e.message) ? e.message : `${e.message}; ${INCOMPLETE}`;
    writer.error({ status: e.status, type: '', code: e.code ?? null, message });
    this.close(writer.take());
  }
}

/** The terminal event a stream whose stop reason arrived still lacks. */
function closingEvent(s: ClientState): string {
  if (s.shape === 'anthropic-messages') return 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
  if (s.shape === 'openai-chat') return 'data: [DONE]\n\n';
  return '';
}
