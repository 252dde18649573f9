// A translated non-stream answer: what commit.ts pipes instead of the upstream bytes (one JSON
// buffer). Translated streams are rendered by clientStream.ts, frame by frame.
import type { ServerResponse } from 'node:http';
import type { TappedUsage } from '../upstream/usage';
import type { PumpResult, ResponseBody, WholeAnswer } from './bodyReader';

/** Why a committed stream did not end cleanly (the request log keeps it as the attempt's errorCode). */
export type StreamFailureCode = 'stream_truncated' | 'upstream_stream_error' | 'stream_interrupted' | 'stream_stalled';

/** A translated non-stream answer: one JSON buffer. */
export class TranslatedJson implements ResponseBody {
  constructor(
    private readonly buf: Buffer,
    private readonly counted: TappedUsage,
  ) {}

  usage() {
    return this.counted;
  }

  whole(): WholeAnswer {
    return { body: this.buf, usage: this.counted };
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
