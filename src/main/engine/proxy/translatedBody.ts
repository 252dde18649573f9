// The client side of a translated attempt: what commit.ts streams instead of the upstream bytes.
// A translated stream runs on frames: upstream chunks go through a FrameReader, each frame through
// the codec's translator, and the inbound protocol's SSE text is written with backpressure (the
// upstream is paused while the client's buffer is full). An in-band error, a cut body or a stream
// that ends without its terminal event ends the client's stream with the inbound protocol's error
// event and reports a failure — never a clean end. A translated answer (non-stream) is one buffer.
//
// Seam for stream resilience: frames read before commit are held (`held`) and translated only when
// the body is piped, so a caller that keeps reading frames until the first model output (hold-back)
// hands them over the same way; every later frame passes through `translate()`, the one place a
// stall timer, an output check or a mid-stream splice would look at it.
import type { ServerResponse } from 'node:http';
import type { ResponseTranslator } from '../codecs';
import type { ShapedError } from '../streams/errorEvents';
import type { Frame, FrameReader } from '../streams/frames';
import type { UsageTap } from '../upstream/usage';
import type { BodyReader, PumpResult, ResponseBody } from './bodyReader';

export type StreamFailureCode = 'stream_truncated' | 'upstream_stream_error' | 'stream_interrupted';

/** Why a committed translated stream did not end cleanly (commit reports it, the request log keeps `code`). */
export class StreamFailure extends Error {
  constructor(
    readonly code: StreamFailureCode,
    message: string,
    /** The in-band error's status, when the upstream sent one. */
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'StreamFailure';
  }
}

export const TRUNCATED_MESSAGE = 'the upstream stream ended before its stop event; the answer is incomplete';

export class TranslatedStream implements ResponseBody {
  private failure: StreamFailure | null = null;

  constructor(
    private readonly body: BodyReader,
    private readonly frames: FrameReader,
    private readonly translator: ResponseTranslator,
    /** Frames already read (before commit), translated when the body is piped. */
    private readonly held: Frame[],
    /** Scrubs secrets out of upstream error text before it reaches the client. */
    private readonly scrub: (text: string) => string,
  ) {}

  usage() {
    return this.translator.usage();
  }

  /** `first` is ignored: its frames were read already (`held`). */
  pipeTo(res: ServerResponse, _first: Buffer | null, _tap: UsageTap): Promise<PumpResult> {
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
      /** Ends the client's stream with `text` and reports the failure, if any. */
      const finish = (text: string) => {
        if (settled) return;
        res.end(text);
        if (this.failure) {
          this.body.destroy();
          done({ ok: false, error: this.failure });
        } else done({ ok: true });
      };
      res.on('drain', onDrain);
      res.once('close', onResClose);

      const head = this.translate(this.held);
      if (this.failure) return finish(head);
      if (head) res.write(head);
      this.body.consume({
        data: (c) => {
          if (settled) return false;
          const text = this.translate(this.frames.push(c).frames);
          if (this.failure) {
            finish(text);
            return false;
          }
          return text ? res.write(text) : true;
        },
        end: () => {
          if (settled) return;
          let text = this.translate(this.frames.end().frames);
          if (!this.failure) {
            const end = this.translator.end();
            text += end.text;
            if (end.outcome !== 'complete') {
              this.failure = new StreamFailure(end.truncated ? 'stream_truncated' : 'upstream_stream_error', TRUNCATED_MESSAGE);
              text += this.translator.fail({ status: 502, message: TRUNCATED_MESSAGE, code: 'stream_truncated' });
            }
          }
          finish(text);
        },
        error: (e) => {
          if (settled) return;
          const message = `the upstream stream broke off: ${e instanceof Error ? e.message : String(e)}`;
          this.failure = new StreamFailure('stream_interrupted', message);
          finish(this.translator.fail({ status: 502, message, code: 'upstream_stream_failed' }));
        },
      });
    });
  }

  /** Frames → the inbound protocol's text; an in-band error ends the translation with its error event. */
  private translate(frames: readonly Frame[]): string {
    let out = '';
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i]!;
      if (f.error) {
        const e: ShapedError = { status: f.error.status, message: this.scrub(f.error.message), code: f.error.code };
        this.failure = new StreamFailure('upstream_stream_error', e.message, e.status);
        return out + this.translator.fail(e);
      }
      out += this.translator.frame(f);
    }
    return out;
  }

  destroy(): void {
    this.body.destroy();
  }
}

/** A translated non-stream answer: one JSON buffer. */
export class TranslatedJson implements ResponseBody {
  constructor(
    private readonly buf: Buffer,
    private readonly counted: { inputTokens: number | null; outputTokens: number | null },
  ) {}

  usage() {
    return this.counted;
  }

  pipeTo(res: ServerResponse): Promise<PumpResult> {
    return new Promise((resolve) => {
      res.end(this.buf, () => resolve({ ok: true }));
      res.once('close', () => {
        if (!res.writableFinished) resolve({ ok: false, error: new Error('client closed the connection') });
      });
    });
  }

  destroy(): void {}
}
