// The execution budget of dispatched requests (SPEC R-RQ-05..07): each protected lease gets a
// signal that aborts when its budget runs out. Its only listener is the request it belongs to
// (proxy/pipeline.ts), so the signal is a light one (lightSignal.ts): adding and removing a
// listener on an EventTarget cost microseconds on every request. Leases of one connection whose
// budgets end in the same short window share one signal: a budget is rounded up to the next tick
// of a tenth of itself (at most one second), never down.
// A connection's latest window is kept even when its leases have ended, so requests one after
// another share it too. One clock timer serves every budget, armed for the earliest end.
import type { CancelTimer, Clock } from '../clock';
import { LightAbortController } from '../lightSignal';

const MAX_GRAIN_MS = 1_000;

interface Budget {
  id: string;
  key: string;
  ms: number;
  expiresAt: number;
  controller: LightAbortController;
  reason: () => unknown;
  holders: number;
}

export class ExecutionBudgets {
  private readonly budgets = new Map<string, Budget>();
  /** Each key's newest window, kept while idle so the next lease can share it. */
  private readonly latest = new Map<string, Budget>();
  private timer: CancelTimer | null = null;
  private armedFor = Infinity;

  constructor(private readonly clock: Clock) {}

  /**
   * Starts a budget of `ms` (ending between `ms` and `ms` plus a tenth, at most a second, from now).
   * `key` names what shares a signal (a connection); `reason` is what the signal aborts with.
   * Returns the signal and a stop function, called when the lease ends.
   */
  start(ms: number, key: string, reason: () => unknown): { signal: AbortSignal; stop: () => void } {
    const grain = Math.max(1, Math.min(MAX_GRAIN_MS, Math.floor(ms / 10)));
    const expiresAt = Math.ceil((this.clock.now() + ms) / grain) * grain;
    // Most leases share their connection's latest window: found without building its id.
    const latest = this.latest.get(key);
    let b = latest !== undefined && latest.ms === ms && latest.expiresAt === expiresAt ? latest : undefined;
    if (!b) {
      const id = `${key}|${ms}|${expiresAt}`;
      b = this.budgets.get(id);
      if (!b) {
        b = { id, key, ms, expiresAt, controller: new LightAbortController(), reason, holders: 0 };
        this.budgets.set(id, b);
        if (latest && latest.holders === 0) this.budgets.delete(latest.id);
        this.latest.set(key, b);
        if (expiresAt < this.armedFor) this.arm(expiresAt);
      }
    }
    b.holders++;
    const budget = b;
    let stopped = false;
    return {
      signal: budget.controller.signal,
      stop: () => {
        if (stopped) return;
        stopped = true;
        if (--budget.holders === 0 && this.latest.get(budget.key) !== budget) this.budgets.delete(budget.id);
      },
    };
  }

  /** Budgets still running (for tests and diagnostics). */
  get size(): number {
    return this.budgets.size;
  }

  close(): void {
    this.timer?.();
    this.timer = null;
    this.armedFor = Infinity;
    this.budgets.clear();
    this.latest.clear();
  }

  private arm(at: number): void {
    this.timer?.();
    this.armedFor = at;
    this.timer = this.clock.setTimer(() => this.expire(), Math.max(0, at - this.clock.now()));
  }

  private expire(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.clock.now();
    let next = Infinity;
    for (const b of this.budgets.values()) {
      if (b.expiresAt <= now) {
        this.budgets.delete(b.id);
        if (this.latest.get(b.key) === b) this.latest.delete(b.key);
        if (b.holders > 0) b.controller.abort(b.reason());
      } else if (b.expiresAt < next) next = b.expiresAt;
    }
    if (next !== Infinity) this.arm(next);
  }
}
