// The body of one upstream response, owned from the moment the response arrives: it is the body's
// one reader (upstream/body.ts) for its whole life, so an end or error that comes between reading
// the first chunk and committing the response is never lost. Until it is handed to a consumer (the
// client pipe, a translating stream, a bounded read), it holds the first chunk (and anything after
// it) back, so a stream that dies early can still fail over; past HOLD_BYTES held, the socket pauses.
import type { ServerResponse } from 'node:http';
import { HOLD_BYTES, type BodySink, type BodySource } from '../upstream/body';
import type { TappedUsage, UsageTap } from '../upstream/usage';

export type FirstChunk = { kind: 'chunk'; chunk: Buffer } | { kind: 'end' } | { kind: 'error'; error: unknown };
export type PumpResult = { ok: true } | { ok: false; error: unknown };

/**
 * What commit.ts streams to the client: the upstream body as is (BodyReader), or a body derived
 * from it (a translated stream or answer, translatedBody.ts).
 */
export interface ResponseBody {
  /** Streams `first` (the first upstream chunk, when the body has not read it itself) and the rest to the client. */
  pipeTo(res: ServerResponse, first: Buffer | null, tap: UsageTap): Promise<PumpResult>;
  destroy(): void;
  /** Token usage when the body knows it better than the byte tap on what was written (translated bodies). */
  usage?(): TappedUsage;
  /**
   * The complete answer, when it is already in memory (read ahead whole, or translated): it is then
   * written in one go instead of piped (delivery.ts). Null when the body still has to be read.
   */
  whole?(): WholeAnswer | null;
}

/** A complete non-stream answer held in memory, with its token usage. */
export interface WholeAnswer {
  body: Buffer;
  usage: TappedUsage;
  /** The body as text and parsed, when the read-ahead parsed it (a translated answer is then not parsed again). */
  json?: { text: string; value: unknown };
}

/** Receives the body's chunks once handed over. `data` returning false pauses the body until `resume()`. */
export interface ChunkConsumer {
  data(c: Buffer): boolean;
  end(): void;
  error(e: unknown): void;
}

export type ReadAllResult = { ok: true; body: Buffer } | { ok: false; error: unknown } | { ok: false; tooLarge: true };

export class BodyReader implements ResponseBody, BodySink {
  private firstWaiter: ((f: FirstChunk) => void) | null = null;
  private firstSeen: FirstChunk | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private ended = false;
  private failure: unknown = null;
  private consumer: ChunkConsumer | null = null;
  /** Set by the read-ahead (emptyAnswer.ts) when the whole body ended within its limit. */
  private complete: WholeAnswer | null = null;

  constructor(private readonly body: BodySource) {
    body.attach(this);
  }

  /** Resolves with the first chunk (held with what follows until a consumer takes over), the end of an empty body, or an error. */
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

  // BodySink: the source's callbacks.
  data(c: Buffer): void {
    if (this.consumer) {
      if (!this.consumer.data(c)) this.body.pause();
      return;
    }
    if (this.firstSeen) this.pending.push(c);
    else this.settleFirst({ kind: 'chunk', chunk: c });
    this.pendingBytes += c.length;
    if (this.pendingBytes > HOLD_BYTES) this.body.pause();
  }

  end(): void {
    this.ended = true;
    this.settleFirst({ kind: 'end' });
    this.consumer?.end();
  }

  error(e: unknown): void {
    if (this.ended || this.failure !== null) return;
    this.failure = e;
    this.settleFirst({ kind: 'error', error: e });
    this.consumer?.error(e);
  }

  /**
   * Hands the rest of the body to `consumer`: `head` (if given) and the chunks held back so far
   * first, then the end or error if it already happened, else the body resumes.
   */
  consume(consumer: ChunkConsumer, head: Buffer | null = null): void {
    this.consumer = consumer;
    let ok = true;
    const held = head ? [head, ...this.pending] : this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    for (const c of held) ok = consumer.data(c) && ok;
    if (this.failure !== null) return consumer.error(this.failure);
    if (this.ended) return consumer.end();
    if (ok) this.body.resume();
  }

  resume(): void {
    this.body.resume();
  }

  /**
   * Marks the body as read whole: `body` is every byte of it (the read-ahead's result, its end
   * seen), `usage` its token usage and `json` its text parsed. whole() answers with it until the
   * body is handed over.
   */
  holdWhole(body: Buffer, usage: TappedUsage, json?: WholeAnswer['json']): void {
    if (this.ended && this.failure === null && this.consumer === null) this.complete = { body, usage, json };
  }

  whole(): WholeAnswer | null {
    return this.consumer === null && this.failure === null ? this.complete : null;
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
          done({ ok: false, error: new Error('client closed the connection') });
          this.body.destroy();
        }
      };
      res.on('drain', onDrain);
      res.once('close', onResClose);
      this.consume(
        {
          data: (c) => {
            tap.push(c);
            return res.write(c);
          },
          end: () => {
            res.end();
            done({ ok: true });
          },
          error: (e) => done({ ok: false, error: e }),
        },
        first,
      );
    });
  }

  /**
   * Reads ahead without handing the body over: the whole body (`first` included) when it ends
   * within `limit` bytes, else null. Either way every chunk read stays held, in order, for the
   * consumer that follows (pass it the same `first`), and an end or error is replayed to it.
   */
  peek(first: Buffer | null, limit: number): Promise<{ ok: true; body: Buffer | null } | { ok: false; error: unknown }> {
    return new Promise((resolve) => {
      const read: Buffer[] = [];
      let size = first?.length ?? 0;
      let settled = false;
      const settle = (r: { ok: true; body: Buffer | null } | { ok: false; error: unknown }) => {
        if (settled) return;
        settled = true;
        // Back to holding: what was read is the pending head again (chunks still being handed to
        // this consumer by consume() land in the same array, so the order holds).
        this.consumer = null;
        this.pending = read;
        this.pendingBytes = size;
        resolve(r);
      };
      this.consume({
        data: (c) => {
          read.push(c);
          if (settled) return false;
          size += c.length;
          if (size > limit) {
            this.body.pause();
            settle({ ok: true, body: null });
            return false;
          }
          return true;
        },
        end: () => settle({ ok: true, body: Buffer.concat(first ? [first, ...read] : read, size) }),
        error: (e) => settle({ ok: false, error: e }),
      });
    });
  }

  /** Reads the whole body (first chunk included) up to `limit` bytes; past it the body is dropped. */
  readAll(first: Buffer | null, limit: number): Promise<ReadAllResult> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const done = (r: ReadAllResult) => {
        if (settled) return;
        settled = true;
        resolve(r);
      };
      this.consume(
        {
          data: (c) => {
            if (settled) return true;
            size += c.length;
            if (size > limit) {
              done({ ok: false, tooLarge: true });
              this.destroy();
              return false;
            }
            chunks.push(c);
            return true;
          },
          end: () => done({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) }),
          error: (e) => done({ ok: false, error: e }),
        },
        first,
      );
    });
  }

  destroy() {
    this.body.destroy();
  }
}
