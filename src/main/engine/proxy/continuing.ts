// The continuation of a broken answer (mid-stream recovery), as the attempt chain sees it: which
// request a continuation attempt sends (streams/continuation.ts: the answer so far as a prefill
// where the target takes one, else as a "continue" turn), and the dispatch step that sends it —
// innermost, so interceptors (sessions, Claude accounts, restatement) see the client's own request
// and one outcome. A target that refuses the prefill with a 400 is asked again at once with the
// "continue" turn: a refused prefill never becomes the client's answer.
import { upstreamShapeOf } from './translation';
import type { AttemptContext, Dispatch } from './attempt';
import type { InboundCall } from './inbound';
import { continuationRequest, prefillFits } from '../streams/continuation';
import type { ContinuationMode } from '../streams/splice';
import { inboundShapeOf } from '../routing/upstreamShape';
import type { Target } from '../routing/target';

export class Continuation {
  private readonly calls = new Map<ContinuationMode, InboundCall>();

  constructor(
    /** The client's request. */
    readonly call: InboundCall,
    /** The visible text the client already has. */
    readonly soFar: string,
  ) {}

  /** How this target is asked to continue. */
  modeFor(target: Target): ContinuationMode {
    return prefillFits(inboundShapeOf(this.call.protocol), upstreamShapeOf(this.call, target), this.call.json) ? 'prefill' : 'continue';
  }

  /** The client's request extended with the answer so far (one per mode; translation caches per call). */
  callFor(mode: ContinuationMode): InboundCall {
    let c = this.calls.get(mode);
    if (!c) {
      const json = continuationRequest(inboundShapeOf(this.call.protocol), this.call.json, this.soFar, mode);
      c = { ...this.call, json, body: Buffer.from(JSON.stringify(json)) };
      this.calls.set(mode, c);
    }
    return c;
  }
}

/** The dispatch step that sends a continuation attempt's request instead of the client's. */
export function continuingDispatch(next: Dispatch): Dispatch {
  return async (ctx) => {
    const c = ctx.continuation;
    if (!c) return next(ctx);
    const mode = c.modeFor(ctx.target);
    ctx.entry.continuation = mode;
    const out = await next(withCall(ctx, c.callFor(mode)));
    if (mode !== 'prefill' || out.kind !== 'failed' || out.failure.status !== 400) return out;
    ctx.entry.prefillRefused = true;
    ctx.entry.continuation = 'continue';
    ctx.entry.status = null;
    return next(withCall(ctx, c.callFor('continue')));
  };
}

const withCall = (ctx: AttemptContext, call: InboundCall): AttemptContext => ({ ...ctx, call });
