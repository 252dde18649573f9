// The watchdogs of one streamed attempt (SPEC §2.5, §2.7, §6), on the injected Clock:
// - time to first output: from sending the request to the first progress frame (text, a tool call,
//   or thinking: R-CC-30 counts reasoning as progress);
// - content stall: the longest time without a progress frame once output has started; pings,
//   comments, metadata and empty deltas never reset it (R-CC-32, R-CC-34);
// - throughput (opt-in, §6): text slower than a minimum rate over a full rolling window after a
//   warm-up, judged only while the stream is still sending bytes, suspended while the model reasons
//   or writes a tool call (R-TW-01..06);
// - the hard attempt deadline, whatever the output (R-TW-03).
// The throughput judgement is a pure state machine (`throughputNext`); StreamWatch holds the timers.
// Stall timers are re-armed lazily: a progress frame only moves a timestamp, and a timer that fires
// early re-arms itself for what is left, so a busy stream costs no timer churn.
import type { StreamWatchdog } from '../../../shared/model';
import type { CancelTimer, Clock } from '../clock';
import type { Frame } from './frame';

export interface ThroughputLimits {
  warmupMs: number;
  windowMs: number;
  /** Characters of text deltas per second (a conservative proxy for UTF-8 bytes). */
  minBytesPerSecond: number;
  /** Wire bytes a window must carry to be judged at all. */
  minMeasurableBytes: number;
}

export interface WatchLimits {
  /** 0 = off. */
  firstOutputMs: number;
  contentStallMs: number;
  attemptDeadlineMs: number;
  /** null = the throughput watchdog is off. */
  throughput: ThroughputLimits | null;
  /** Where each deadline came from, for the message (e.g. "connection setting"). */
  sources?: Partial<Record<StreamWatchdog, string>>;
}

export interface WatchFire {
  watchdog: StreamWatchdog;
  message: string;
}

// ---- throughput: a pure machine -----------------------------------------------------------------

const BUCKETS = 20;

export interface ThroughputState {
  /** Monotonic time from which a full window may be judged (null until the first output). */
  judgeFrom: number | null;
  /** Reasoning or a tool call is in progress: no judgement (R-TW-06). */
  suspended: boolean;
  /** Bucket index (time / bucketMs) of each slot, and its text characters and wire bytes. */
  slot: number[];
  chars: number[];
  bytes: number[];
}

export interface ThroughputEvent {
  /** Characters of text deltas in this chunk. */
  textChars: number;
  /** Wire bytes of this chunk. */
  bytes: number;
  /** The last progress frame's kind in this chunk: text, reasoning or tool; null when it had none. */
  phase: 'text' | 'reasoning' | 'tool' | null;
}

export const throughputStart = (): ThroughputState => ({
  judgeFrom: null,
  suspended: false,
  slot: new Array<number>(BUCKETS).fill(-1),
  chars: new Array<number>(BUCKETS).fill(0),
  bytes: new Array<number>(BUCKETS).fill(0),
});

/**
 * One chunk through the throughput watchdog. Returns the new state and whether the stream is too
 * slow. The state arrays are updated in place (the machine is pure in its inputs and outputs; the
 * arrays are its own).
 */
export function throughputNext(s: ThroughputState, e: ThroughputEvent, now: number, l: ThroughputLimits): { state: ThroughputState; slow: boolean } {
  let { judgeFrom, suspended } = s;
  if (judgeFrom === null) {
    if (e.phase === null) return { state: s, slow: false };
    judgeFrom = now + l.warmupMs;
  }
  if (e.phase === 'reasoning' || e.phase === 'tool') suspended = true;
  else if (e.phase === 'text' && suspended) {
    // Back to text after reasoning or a tool call: a fresh full window before any judgement.
    suspended = false;
    judgeFrom = Math.max(judgeFrom, now);
  }
  const bucketMs = l.windowMs / BUCKETS;
  const idx = Math.floor(now / bucketMs);
  const at = idx % BUCKETS;
  if (s.slot[at] !== idx) {
    s.slot[at] = idx;
    s.chars[at] = 0;
    s.bytes[at] = 0;
  }
  s.chars[at]! += e.textChars;
  s.bytes[at]! += e.bytes;
  const state: ThroughputState = { judgeFrom, suspended, slot: s.slot, chars: s.chars, bytes: s.bytes };
  if (suspended || now < judgeFrom + l.windowMs) return { state, slow: false };
  let chars = 0;
  let bytes = 0;
  for (let i = 0; i < BUCKETS; i++) {
    const sl = s.slot[i]!;
    if (sl > idx - BUCKETS && sl <= idx) {
      chars += s.chars[i]!;
      bytes += s.bytes[i]!;
    }
  }
  if (bytes < l.minMeasurableBytes) return { state, slow: false };
  return { state, slow: chars < (l.minBytesPerSecond * l.windowMs) / 1000 };
}

/** The phase and text of a chunk's frames, for the throughput watchdog. */
export function chunkPhase(frames: readonly Frame[]): { phase: ThroughputEvent['phase']; textChars: number } {
  let phase: ThroughputEvent['phase'] = null;
  let textChars = 0;
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i]!;
    textChars += f.textChars;
    if (f.toolStart || f.toolArgChars > 0) phase = 'tool';
    else if (f.textChars > 0) phase = 'text';
    else if (f.reasoning) phase = 'reasoning';
  }
  return { phase, textChars };
}

// ---- the timers -----------------------------------------------------------------------------------

const secs = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`);

export class StreamWatch {
  private lastProgress: number | null = null;
  private cancelFirst: CancelTimer | null = null;
  private cancelStall: CancelTimer | null = null;
  private cancelDeadline: CancelTimer | null = null;
  private throughput: ThroughputState | null;
  private _fired: WatchFire | null = null;
  private stopped = false;
  private startedAt = 0;
  /** Monotonic time of the first progress frame. */
  firstProgressAt: number | null = null;

  constructor(
    private readonly clock: Clock,
    readonly limits: WatchLimits,
    private readonly onFire: (f: WatchFire) => void,
    /** Called once when the watch stops (the attempt is over). */
    private readonly onStop: () => void = () => {},
  ) {
    this.throughput = limits.throughput ? throughputStart() : null;
  }

  get fired(): WatchFire | null {
    return this._fired;
  }

  private source(w: StreamWatchdog): string {
    const s = this.limits.sources?.[w];
    return s ? `, ${s}` : '';
  }

  /** The request is being sent: the first-output deadline and the hard deadline start now. */
  start(): void {
    this.startedAt = this.clock.monotonic();
    const l = this.limits;
    if (l.attemptDeadlineMs > 0) {
      this.cancelDeadline = this.clock.setTimer(
        () => this.fire('attempt_deadline', `the attempt ran into its hard deadline of ${secs(l.attemptDeadlineMs)}${this.source('attempt_deadline')}`),
        l.attemptDeadlineMs,
      );
    }
    if (l.firstOutputMs > 0) {
      this.cancelFirst = this.clock.setTimer(
        () => this.fire('first_output', `no model output within ${secs(l.firstOutputMs)} of the request (time to first output${this.source('first_output')})`),
        l.firstOutputMs,
      );
    }
  }

  /** One chunk's frames arrived. `progress`: some frame was output or reasoning. */
  observe(frames: readonly Frame[], progress: boolean, bytes: number): void {
    if (this.stopped) return;
    const now = this.clock.monotonic();
    if (progress) {
      if (this.firstProgressAt === null) {
        this.firstProgressAt = now;
        this.cancelFirst?.();
        this.cancelFirst = null;
        if (this.limits.contentStallMs > 0) this.armStall(this.limits.contentStallMs);
      }
      this.lastProgress = now;
    }
    if (this.throughput) {
      const { phase, textChars } = chunkPhase(frames);
      const r = throughputNext(this.throughput, { phase, textChars, bytes }, now, this.limits.throughput!);
      this.throughput = r.state;
      if (r.slow) {
        const t = this.limits.throughput!;
        this.fire('throughput', `text arrived slower than ${t.minBytesPerSecond}/s over the last ${secs(t.windowMs)} while the stream kept sending (throughput watchdog)`);
      }
    }
  }

  private armStall(ms: number): void {
    this.cancelStall = this.clock.setTimer(() => {
      this.cancelStall = null;
      if (this.stopped) return;
      const limit = this.limits.contentStallMs;
      const idle = this.clock.monotonic() - (this.lastProgress ?? this.startedAt);
      if (idle >= limit) this.fire('content_stall', `no model output for ${secs(limit)} (content stall timeout${this.source('content_stall')}); heartbeats do not count`);
      else this.armStall(limit - idle);
    }, ms);
  }

  private fire(watchdog: StreamWatchdog, message: string): void {
    if (this.stopped || this._fired) return;
    this._fired = { watchdog, message };
    this.stop();
    this.onFire(this._fired);
  }

  /** The stream ended (or reached its terminal event, or the attempt is over): no more judgements. */
  stop(): void {
    if (!this.stopped) this.onStop();
    this.stopped = true;
    this.cancelFirst?.();
    this.cancelStall?.();
    this.cancelDeadline?.();
    this.cancelFirst = this.cancelStall = this.cancelDeadline = null;
  }
}
