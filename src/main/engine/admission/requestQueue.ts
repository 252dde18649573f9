// One rate-limit queue (a connection's, or one model's on a model-scoped connection; SPEC §5).
// Requests that cannot dispatch at once wait here, oldest first, each with its own queue-wait
// deadline. The queue can be paused until a time (an upstream retry hint) — as a whole, or for one
// model only when the upstream's evidence was about that model — and can space dispatches
// (configured minTime / requests per minute) through its pacer. It hands the pacer only as many
// jobs as it has waiters (a few at a time), so a request that gave up never costs a later one a
// dispatch slot, and nothing can wedge: every waiter leaves by dispatch, deadline or abort.
import type { CancelTimer, Clock } from '../clock';
import type { Pacer, PacerFactory } from './pacer';

/**
 * Pacer jobs reserved at once. A job whose waiter left meanwhile wastes its dispatch slot, so with
 * a real spacing only one is reserved; with none or a tiny one, a few keep Bottleneck's own
 * scheduling delay from limiting how fast a drained queue empties.
 */
const MAX_OUTSTANDING = 4;
const TINY_SPACING_MS = 10;

interface QueueWaiter {
  deadline: number;
  /** The model this request asks for ('' when the queue does not care). */
  model: string;
  resolve: () => void;
  reject: (reason: unknown) => void;
  timeoutError: (pauseLeftMs: number | null) => Error;
  cancelTimer: CancelTimer | null;
  signal: AbortSignal;
  onAbort: () => void;
}

export class RequestQueue {
  private readonly waiters = new Set<QueueWaiter>();
  private outstanding = 0;
  private pausedUntil: number | null = null;
  private wake: CancelTimer | null = null;
  /** Pauses that hold only one model's waiters (a model-scoped 429 on a connection-wide queue). */
  private readonly modelPauses = new Map<string, { until: number; wake: CancelTimer | null }>();
  private pacer: Pacer | null = null;
  private minTimeMs = 0;
  private pumping = false;
  private pumpAgain = false;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly pacerFactory: PacerFactory,
    private readonly changed: () => void,
  ) {}

  /** Requests waiting in this queue. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * The pause end while paused, else null (read lazily: a past pause is no pause). With a model,
   * the later of the whole queue's pause and that model's own.
   */
  pauseEnd(now: number, model?: string): number | null {
    const all = this.pausedUntil !== null && this.pausedUntil > now ? this.pausedUntil : null;
    if (model === undefined) return all;
    const own = this.modelPauses.get(model);
    const mine = own !== undefined && own.until > now ? own.until : null;
    return mine === null ? all : all === null ? mine : Math.max(all, mine);
  }

  /** Models paused on their own right now. */
  pausedModels(now: number): string[] {
    return [...this.modelPauses].filter(([, p]) => p.until > now).map(([m]) => m);
  }

  /**
   * Nothing to wait for: no pause, no spacing, nobody queued. A request (for `model`) may dispatch
   * without the pacer.
   */
  isIdle(now: number, model?: string): boolean {
    if (this.minTimeMs !== 0 || this.waiters.size !== 0 || this.outstanding !== 0) return false;
    if (model !== undefined) return this.pauseEnd(now, model) === null;
    return this.pauseEnd(now) === null && this.pausedModels(now).length === 0;
  }

  /** Applies the configured spacing (read from the connection on each request). */
  setMinTime(ms: number): void {
    if (ms === this.minTimeMs) return;
    this.minTimeMs = ms;
    this.pacer?.setMinTime(ms);
    this.pump();
  }

  /**
   * Holds every dispatch until `until` (a later pause end wins over an earlier one). Waiters whose
   * queue-wait budget ends before the pause does are told at once (R-RQ-18).
   */
  pause(until: number, model?: string): void {
    const now = this.clock.now();
    if (until <= now) return;
    if (model !== undefined) return this.pauseModel(model, until, now);
    this.pausedUntil = Math.max(this.pauseEnd(now) ?? 0, until);
    for (const w of [...this.waiters]) {
      if (w.deadline < this.pausedUntil && this.unqueue(w)) w.reject(w.timeoutError(this.pausedUntil - now));
    }
    this.armWake(now);
    this.changed();
  }

  private pauseModel(model: string, until: number, now: number): void {
    const prev = this.modelPauses.get(model);
    const end = Math.max(prev && prev.until > now ? prev.until : 0, until);
    prev?.wake?.();
    const entry = { until: end, wake: null as CancelTimer | null };
    entry.wake = this.clock.setTimer(() => {
      entry.wake = null;
      if (this.modelPauses.get(model) === entry) this.modelPauses.delete(model);
      this.pump();
      this.changed();
    }, end - now);
    this.modelPauses.set(model, entry);
    const left = (this.pauseEnd(now, model) ?? end) - now;
    for (const w of [...this.waiters]) {
      if (w.model === model && w.deadline < end && this.unqueue(w)) w.reject(w.timeoutError(left));
    }
    this.changed();
  }

  /**
   * Ends every pause early (the connection's credentials or endpoint changed, or an operator
   * cleared it). Returns whether a pause was in force.
   */
  clearPause(): boolean {
    const now = this.clock.now();
    const running = this.pauseEnd(now) !== null || this.pausedModels(now).length > 0;
    const hadModel = this.modelPauses.size > 0;
    for (const p of this.modelPauses.values()) p.wake?.();
    this.modelPauses.clear();
    if (this.pausedUntil === null) {
      if (hadModel) {
        this.pump();
        this.changed();
      }
      return running;
    }
    this.pausedUntil = null;
    this.wake?.();
    this.wake = null;
    this.pump();
    this.changed();
    return running;
  }

  /** Ends one model's own pause early (an operator re-enabled the model). Returns whether it was in force. */
  clearModelPause(model: string): boolean {
    const p = this.modelPauses.get(model);
    if (p === undefined) return false;
    const running = p.until > this.clock.now();
    p.wake?.();
    this.modelPauses.delete(model);
    this.pump();
    this.changed();
    return running;
  }

  /**
   * Waits for this request's turn to dispatch. Rejects with `timeoutError(pauseLeftMs)` at the
   * deadline, or with the signal's reason when it aborts.
   */
  enter(
    deadline: number,
    signal: AbortSignal,
    timeoutError: (pauseLeftMs: number | null) => Error,
    model = '',
  ): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the request queue is closed'));
    if (signal.aborted) return Promise.reject(signal.reason);
    const now = this.clock.now();
    if (deadline <= now) return Promise.reject(timeoutError(this.leftOfPause(now, model)));
    return new Promise<void>((resolve, reject) => {
      const w: QueueWaiter = {
        deadline,
        model,
        resolve,
        reject,
        timeoutError,
        cancelTimer: null,
        signal,
        onAbort: () => {
          if (this.unqueue(w)) reject(signal.reason);
        },
      };
      this.waiters.add(w);
      w.cancelTimer = this.clock.setTimer(() => {
        w.cancelTimer = null;
        if (this.unqueue(w)) reject(timeoutError(this.leftOfPause(this.clock.now(), model)));
      }, deadline - now);
      signal.addEventListener('abort', w.onAbort, { once: true });
      this.changed();
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    this.wake = null;
    for (const p of this.modelPauses.values()) p.wake?.();
    this.modelPauses.clear();
    for (const w of [...this.waiters]) if (this.unqueue(w)) w.reject(new Error('the engine is stopping'));
    await this.pacer?.close();
  }

  private leftOfPause(now: number, model?: string): number | null {
    const end = this.pauseEnd(now, model);
    return end === null ? null : end - now;
  }

  private unqueue(w: QueueWaiter): boolean {
    if (!this.waiters.delete(w)) return false;
    w.cancelTimer?.();
    w.cancelTimer = null;
    w.signal.removeEventListener('abort', w.onAbort);
    this.changed();
    return true;
  }

  private armWake(now: number): void {
    this.wake?.();
    this.wake = null;
    const end = this.pauseEnd(now);
    if (end === null) return;
    this.wake = this.clock.setTimer(() => {
      this.wake = null;
      this.pump();
      this.changed();
    }, end - now);
  }

  /** Keeps the pacer fed with one job per waiter (a few at a time) while not paused. */
  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        if (this.closed) return;
        const now = this.clock.now();
        if (this.pauseEnd(now) !== null) {
          if (!this.wake) this.armWake(now);
          return;
        }
        const limit = Math.min(this.minTimeMs > TINY_SPACING_MS ? 1 : MAX_OUTSTANDING, this.dispatchable(now));
        while (this.outstanding < limit) {
          this.outstanding++;
          this.pacerInstance().submit(() => this.onPermit());
        }
      } while (this.pumpAgain);
    } finally {
      this.pumping = false;
    }
  }

  /** Waiters that may dispatch now (their model is not paused on its own). */
  private dispatchable(now: number): number {
    if (this.modelPauses.size === 0) return this.waiters.size;
    let n = 0;
    for (const w of this.waiters) if (this.pauseEnd(now, w.model) === null) n++;
    return n;
  }

  /**
   * The pacer allows one dispatch: it goes to the oldest waiter whose model is not paused, unless
   * a pause of the whole queue began meanwhile.
   */
  private onPermit(): void {
    this.outstanding--;
    const now = this.clock.now();
    if (this.pauseEnd(now) === null) {
      for (const w of this.waiters) {
        if (this.modelPauses.size > 0 && this.pauseEnd(now, w.model) !== null) continue;
        this.unqueue(w);
        w.resolve();
        break;
      }
    }
    this.pump();
  }

  private pacerInstance(): Pacer {
    return (this.pacer ??= this.pacerFactory(this.minTimeMs));
  }
}
