// One upstream exchange read straight from undici's dispatch handler: the handler resolves the
// response at its headers and is then the response's body. No Readable stands between the socket
// and the reader (issue 25: undici's request() builds a Readable, its stream state and buffering
// on every answer, about 4 KB and a tenth of the proxy's CPU at c=32). The body has one reader
// (`attach`); what arrives before it attaches is held, up to HOLD_BYTES before the socket pauses.
import type { Dispatcher } from './undici';

/** Receives a body's chunks, then exactly one of end or error (an error always in a later microtask than its cause). */
export interface BodySink {
  data(chunk: Buffer): void;
  end(): void;
  error(e: unknown): void;
}

/** What the readers of an upstream body need of it (BodyReader, readBodyText). */
export interface BodySource {
  /** Starts delivery to `sink`: the chunks held so far first, then the end or error if it already came. */
  attach(sink: BodySink): void;
  /** Stops reading from the socket after the current chunk. */
  pause(): void;
  resume(): void;
  /** Drops the rest of the body (the socket is closed); the sink then gets an error unless it already ended. */
  destroy(): void;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: BodySource;
}

/** How much of a body is held for a reader that has not attached yet before the socket pauses. */
export const HOLD_BYTES = 64 * 1024;

const OPEN = 0;
const ENDED = 1;
const FAILED = 2;

/** The error a reader gets after the body was destroyed on its side. */
function discarded(): Error {
  return new Error('upstream closed the stream');
}

function abortError(): Error {
  return Object.assign(new Error('Request aborted'), { name: 'AbortError', code: 'UND_ERR_ABORTED' });
}

export class UpstreamExchange implements Dispatcher.DispatchHandler, BodySource {
  private controller: Dispatcher.DispatchController | null = null;
  /** Set when the signal aborted before undici handed over its controller. */
  private abortReason: Error | null = null;
  private resolve: ((r: UpstreamResponse) => void) | null;
  private reject: ((e: unknown) => void) | null;
  private sink: BodySink | null = null;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private state = OPEN;
  private failure: unknown = null;
  private paused = false;
  private resumeQueued = false;
  private destroyed = false;
  private readonly onAbort = () => this.abort(this.signal.reason instanceof Error ? this.signal.reason : abortError());

  constructor(
    private readonly signal: AbortSignal,
    resolve: (r: UpstreamResponse) => void,
    reject: (e: unknown) => void,
  ) {
    this.resolve = resolve;
    this.reject = reject;
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  private abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.abortReason = reason;
  }

  private unlisten(): void {
    this.signal.removeEventListener('abort', this.onAbort);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: UpstreamResponse['headers']): void {
    if (status < 200) return; // an informational answer: the real one follows
    const resolve = this.resolve;
    this.resolve = this.reject = null;
    resolve?.({ status, headers, body: this });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.sink) return this.sink.data(chunk);
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes > HOLD_BYTES) controller.pause();
  }

  onResponseEnd(): void {
    this.unlisten();
    this.state = ENDED;
    this.sink?.end();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.unlisten();
    const reject = this.reject;
    if (reject) {
      this.resolve = this.reject = null;
      return reject(err);
    }
    if (this.state !== OPEN) return;
    this.state = FAILED;
    const failure = (this.failure = this.destroyed ? discarded() : err);
    // Later, never inside the call that caused it (an abort or destroy() of the reader's own side,
    // whose caller goes on to settle the request its own way), as a destroyed stream's 'error' would.
    const sink = this.sink;
    if (sink) queueMicrotask(() => sink.error(failure));
  }

  attach(sink: BodySink): void {
    this.sink = sink;
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    for (const c of held) sink.data(c);
    if (this.state === ENDED) return sink.end();
    if (this.state === FAILED) return sink.error(this.failure);
    if (!this.paused) this.resume();
  }

  pause(): void {
    this.paused = true;
    this.controller?.pause();
  }

  resume(): void {
    this.paused = false;
    const c = this.controller;
    if (!c?.paused || this.resumeQueued) return;
    // Never from inside undici's parser (a reader may resume in its data callback): next microtask.
    this.resumeQueued = true;
    queueMicrotask(() => {
      this.resumeQueued = false;
      if (!this.paused && !this.destroyed) c.resume();
    });
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.state !== OPEN) return;
    this.abort(discarded());
  }
}

/** Reads up to `limit` bytes of a body as text, then discards the rest. A body that breaks off still yields what arrived. */
export function readBodyText(body: BodySource, limit = 64 * 1024): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    body.attach({
      data: (c) => {
        if (done) return;
        chunks.push(size + c.length > limit ? c.subarray(0, limit - size) : c);
        size += c.length;
        if (size >= limit) {
          finish();
          body.destroy();
        }
      },
      end: finish,
      error: finish,
    });
  });
}
