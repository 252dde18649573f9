// Hold-back: the part of an upstream attempt between a streamed 2xx's headers and the moment it is
// worth committing to the client. The stream is read into frames (UpstreamStream) until the first
// progress frame (model output or thinking) or the hold-back byte budget; until then nothing has
// reached the client, so every way a stream goes wrong early is an ordinary failed attempt that
// fails over (R-TW-10): an in-band error frame (classified by its status, like an HTTP error), a
// body that breaks off, a watchdog (time to first output, the hard deadline), a stream that ends
// without its terminal event (`truncated`) or ends properly with nothing in it (`empty`, unless
// its stop reason says the emptiness was asked for: max tokens, a stop sequence).
import type { AttemptEntry } from '../../../shared/model';
import type { Clock } from '../clock';
import { LightAbortController } from '../lightSignal';
import type { SecretRedactor } from '../logger';
import type { UpstreamFailure } from '../resilience/port';
import { askedForEmpty } from '../streams/emptyAnswer';
import { errorBodyFor } from '../streams/errorEvents';
import type { InbandError } from '../streams/errorStatus';
import type { ApiShape } from '../streams/shape';
import { StreamWatch, type WatchFire } from '../streams/watchdogs';
import { toTransportError } from '../upstream/client';
import type { AttemptOutcome, ReadyResponse } from './attempt';
import { BodyReader } from './bodyReader';
import type { StreamPolicy } from './streamPolicy';
import { UpstreamStream } from './upstreamStream';

type Outcome = AttemptOutcome<UpstreamStream>;

/** Why a watchdog ended the attempt (the abort reason of its signal). */
export class WatchdogAbort extends Error {
  constructor(readonly fire: WatchFire) {
    super(fire.message);
    this.name = 'WatchdogAbort';
  }
}

/**
 * A streamed attempt's watchdogs and the signal the upstream call runs under: aborted by the
 * request's own signal (client gone, execution budget) or by a watchdog. (Linked by hand: cheaper
 * than AbortSignal.any per attempt, and unlinked when the watch stops.)
 */
export class AttemptWatch {
  readonly watch: StreamWatch;
  private readonly ctl = new LightAbortController();
  private readonly follow: () => void;

  constructor(
    clock: Clock,
    policy: StreamPolicy,
    private readonly request: AbortSignal,
  ) {
    this.follow = () => this.ctl.abort(request.reason);
    this.watch = new StreamWatch(clock, policy.limits, (f) => this.ctl.abort(new WatchdogAbort(f)), () => request.removeEventListener('abort', this.follow));
    if (request.aborted) this.follow();
    else request.addEventListener('abort', this.follow, { once: true });
  }

  get signal(): AbortSignal {
    return this.ctl.signal;
  }

  get fired(): WatchFire | null {
    return this.watch.fired;
  }
}

export interface HoldBackDeps {
  clock: Clock;
  redactor: SecretRedactor;
}

export interface HoldBackInput {
  shape: ApiShape;
  /** The stream is forwarded as it is (not translated): its bytes are cut at event boundaries. */
  native: boolean;
  status: number;
  headers: Record<string, string>;
  body: ConstructorParameters<typeof BodyReader>[0];
  /** Monotonic time the request was sent. */
  t0: number;
  watch: AttemptWatch;
  policy: StreamPolicy;
  entry: AttemptEntry;
  /** The attempt's outcome when its signal was aborted (client gone, execution budget), else null. */
  aborted: () => Extract<AttemptOutcome, { kind: 'aborted' | 'execution_timeout' }> | null;
}

/** A failed attempt whose answer, if it is the last, is a JSON error in the upstream's shape. */
function failed(i: HoldBackInput, kind: UpstreamFailure['kind'], e: InbandError, rawBody: string, ttfbMs: number): Outcome {
  const body = JSON.stringify(errorBodyFor(i.shape, e));
  return {
    kind: 'failed',
    failure: { kind, status: kind === 'stream_error' ? e.status : null, headers: i.headers, body: rawBody, message: e.message },
    response: { status: e.status, headers: { 'content-type': 'application/json' }, body },
    ttfbMs,
  };
}

/** A stream that ended properly with no model output (reasoning alone is not output, R-CC-31), not asked for by its limits. */
export function endedEmpty(stream: UpstreamStream): boolean {
  const f = stream.frames;
  return f.sawTerminal && !f.sawOutput && !askedForEmpty(f.stopReason);
}

export function noteStats(entry: AttemptEntry, stream: UpstreamStream, t0: number, fired: WatchFire | null): void {
  const s = stream.stats(t0);
  entry.firstOutputMs = s.firstOutputMs;
  entry.bytes = s.bytes;
  entry.frames = s.frames;
  entry.outputFrames = s.outputFrames;
  if (fired) entry.watchdog = fired.watchdog;
}

/** Reads a streamed 2xx until it is worth committing; a failure before that is a failed attempt. */
export async function holdBack(deps: HoldBackDeps, i: HoldBackInput): Promise<Outcome> {
  // The upstream answered (a 2xx and its headers): however the stream then fails, the log shows that
  // status, not "no response" (a failure's own status, an in-band error's, still wins).
  i.entry.status = i.status;
  const reader = new BodyReader(i.body);
  const first = await reader.first();
  const firstByteAt = deps.clock.monotonic();
  const ttfbMs = Math.round(firstByteAt - i.t0);
  const broken = (error: unknown): Outcome => {
    const a = i.aborted();
    if (a) return a;
    const fired = i.watch.fired;
    if (fired) {
      i.entry.watchdog = fired.watchdog;
      return { kind: 'failed', failure: { kind: 'stall', status: null, headers: i.headers, body: '', message: fired.message }, response: null, ttfbMs };
    }
    const te = toTransportError(error);
    return {
      kind: 'failed',
      failure: { kind: te.kind === 'idle_timeout' ? 'stall' : 'network', status: null, headers: i.headers, body: '', message: te.message },
      response: null,
      ttfbMs,
    };
  };
  if (first.kind === 'error') {
    i.watch.watch.stop();
    return broken(first.error);
  }
  if (first.kind === 'end') {
    i.watch.watch.stop();
    return failed(i, 'truncated', { status: 502, type: 'api_error', code: null, message: 'the upstream ended the stream before sending anything' }, '', ttfbMs);
  }
  const stream = new UpstreamStream(i.shape, reader, i.watch.watch, i.policy.holdBackBytes, i.native);
  const r = await stream.holdBack(first.chunk);
  const ready = (): Outcome => {
    const response: ReadyResponse<UpstreamStream> = { status: i.status, headers: i.headers, reader: stream, first, ttfbMs, firstByteAt };
    return { kind: 'ready', response };
  };
  const fail = (out: Outcome): Outcome => {
    noteStats(i.entry, stream, i.t0, i.watch.fired);
    stream.destroy();
    return out;
  };
  switch (r.kind) {
    case 'progress':
    case 'budget':
      return ready();
    case 'inband': {
      const e = { ...r.error, message: deps.redactor.scrub(r.error.message) };
      return fail(failed(i, 'stream_error', e, deps.redactor.scrub(r.frame.data), ttfbMs));
    }
    case 'broken':
      return fail(broken(r.error));
    case 'ended': {
      const f = stream.frames;
      if (!f.sawTerminal) {
        return fail(failed(i, 'truncated', { status: 502, type: 'api_error', code: null, message: 'the upstream stream ended before its stop event, with no output' }, '', ttfbMs));
      }
      if (!endedEmpty(stream)) return ready();
      return fail(failed(i, 'empty', { status: 502, type: 'api_error', code: null, message: 'the upstream answered with an empty stream (no text, no tool call)' }, '', ttfbMs));
    }
  }
}
