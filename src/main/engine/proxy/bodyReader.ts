// The body of one upstream response, owned from the moment the response arrives: listeners stay
// attached for its whole life, so an 'end' or 'error' that fires between reading the first chunk
// and committing the response is never lost. Until it is piped to the client, it holds the first
// chunk (and anything after it) back, so a stream that dies early can still fail over.
import type { ServerResponse } from 'node:http';
import type { UpstreamResponse } from '../upstream/client';
import type { UsageTap } from '../upstream/usage';

export type FirstChunk = { kind: 'chunk'; chunk: Buffer } | { kind: 'end' } | { kind: 'error'; error: unknown };
export type PumpResult = { ok: true } | { ok: false; error: unknown };

export class BodyReader {
  private firstWaiter: ((f: FirstChunk) => void) | null = null;
  private firstSeen: FirstChunk | null = null;
  private pending: Buffer[] = [];
  private ended = false;
  private error: unknown = null;
  private sink: { res: ServerResponse; tap: UsageTap; done: (r: PumpResult) => void } | null = null;

  constructor(private readonly body: UpstreamResponse['body']) {
    body.on('data', (c: Buffer) => this.onData(c));
    body.once('end', () => this.onEnd());
    body.on('error', (e) => this.onError(e));
    body.once('close', () => {
      if (!this.ended && this.error === null) this.onError(new Error('upstream closed the stream'));
    });
  }

  /** Resolves with the first chunk (then pauses), the end of an empty body, or an error. */
  first(): Promise<FirstChunk> {
    if (this.firstSeen) return Promise.resolve(this.firstSeen);
    return new Promise((resolve) => (this.firstWaiter = resolve));
  }

  private settleFirst(f: FirstChunk) {
    if (this.firstSeen) return;
    this.firstSeen = f;
    this.firstWaiter?.(f);
    this.firstWaiter = null;
  }

  private onData(c: Buffer) {
    if (!this.firstSeen) {
      this.body.pause();
      this.settleFirst({ kind: 'chunk', chunk: c });
      return;
    }
    if (!this.sink) {
      this.body.pause();
      this.pending.push(c);
      return;
    }
    this.sink.tap.push(c);
    if (!this.sink.res.write(c)) this.body.pause();
  }

  private onEnd() {
    this.ended = true;
    this.settleFirst({ kind: 'end' });
    if (this.sink) {
      this.sink.res.end();
      this.sink.done({ ok: true });
    }
  }

  private onError(e: unknown) {
    if (this.ended || this.error !== null) return;
    this.error = e;
    this.settleFirst({ kind: 'error', error: e });
    this.sink?.done({ ok: false, error: e });
  }

  /** Streams the first chunk and the rest of the body to the client with backpressure. */
  pipeTo(res: ServerResponse, first: Buffer | null, tap: UsageTap): Promise<PumpResult> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: PumpResult) => {
        if (settled) return;
        settled = true;
        res.off('drain', onDrain);
        res.off('close', onResClose);
        resolve(r);
      };
      const onDrain = () => this.body.resume();
      const onResClose = () => {
        if (!res.writableFinished) {
          this.body.destroy();
          done({ ok: false, error: new Error('client closed the connection') });
        }
      };
      res.on('drain', onDrain);
      res.once('close', onResClose);
      this.sink = { res, tap, done };
      let ok = true;
      for (const c of first ? [first, ...this.pending] : this.pending) {
        tap.push(c);
        ok = res.write(c) && ok;
      }
      this.pending = [];
      if (this.error !== null) return done({ ok: false, error: this.error });
      if (this.ended) {
        res.end();
        return done({ ok: true });
      }
      if (ok) this.body.resume();
    });
  }

  destroy() {
    if (!this.body.destroyed) this.body.destroy();
  }
}

