// Concurrency gates (SPEC R-SQ-04, R-SQ-07): a request needs one slot in each applicable stage,
// ordered global -> provider -> account -> model, and takes them all at once or none, so a request
// never holds an account slot while it waits for its model slot. The strictest cap therefore wins,
// and a stage that cannot be had leaves nothing behind. Waiters are served oldest first among those
// whose every stage has room, so a saturated model does not block other models of the account.
import type { CancelTimer, Clock } from '../clock';

export type StageKind = 'global' | 'provider' | 'account' | 'model';

const STAGE_RANK: Record<StageKind, number> = { global: 0, provider: 1, account: 2, model: 3 };

export interface GateStage {
  kind: StageKind;
  /** Identifies the semaphore, e.g. "acct:<connectionId>" or "model:<connectionId>:glm-5". */
  key: string;
  /** Simultaneous holders allowed (a positive integer; Infinity = no cap). */
  cap: number;
  /** How errors name the stage ("connection", "model glm-5"). */
  label: string;
}

export type GateOutcome =
  | { kind: 'granted'; release: () => void }
  | { kind: 'timeout'; stage: GateStage }
  | { kind: 'full'; stage: GateStage; waiting: number }
  /** The gate was opened for everyone waiting (used by fail-open gates when switched off). */
  | { kind: 'dismissed' };

export interface GateWait {
  /** Clock time at which waiting ends with a timeout. */
  deadline: number;
  /** Most requests that may wait for one stage; more are refused at once. */
  maxWaiting: number;
  signal: AbortSignal;
}

interface Slot {
  cap: number;
  held: number;
  waiting: number;
}

interface Waiter {
  stages: readonly GateStage[];
  settle: (o: GateOutcome) => void;
  fail: (reason: unknown) => void;
  cancelTimer: CancelTimer | null;
  signal: AbortSignal;
  onAbort: () => void;
}

/** Puts stages in the spec's acquisition order. */
export function orderStages(stages: readonly GateStage[]): GateStage[] {
  return [...stages].sort((a, b) => STAGE_RANK[a.kind] - STAGE_RANK[b.kind]);
}

export class CompositeGate {
  private readonly slots = new Map<string, Slot>();
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly clock: Clock) {}

  /** Takes a slot in every stage at once, or returns null and takes nothing. Never waits. */
  tryAcquire(stages: readonly GateStage[]): (() => void) | null {
    if (this.applyCaps(stages)) this.drain();
    for (const s of stages) {
      const slot = this.slots.get(s.key);
      if (slot && slot.held >= slot.cap) return null;
    }
    return this.take(stages);
  }

  /** Waits (oldest first) until every stage has room, the deadline passes, or the signal aborts. */
  acquire(stages: readonly GateStage[], wait: GateWait): Promise<GateOutcome> {
    if (wait.signal.aborted) return Promise.reject(wait.signal.reason);
    const release = this.tryAcquire(stages);
    if (release) return Promise.resolve({ kind: 'granted', release });
    const blocked = this.firstBlocked(stages) ?? stages[0]!;
    const waiting = this.slots.get(blocked.key)?.waiting ?? 0;
    if (waiting >= wait.maxWaiting) return Promise.resolve({ kind: 'full', stage: blocked, waiting });
    const now = this.clock.now();
    if (wait.deadline <= now) return Promise.resolve({ kind: 'timeout', stage: blocked });

    return new Promise<GateOutcome>((resolve, reject) => {
      const w: Waiter = {
        stages,
        settle: resolve,
        fail: reject,
        cancelTimer: null,
        signal: wait.signal,
        onAbort: () => {
          if (this.unqueue(w)) reject(wait.signal.reason);
        },
      };
      for (const s of stages) this.slotFor(s).waiting++;
      this.waiters.add(w);
      w.cancelTimer = this.clock.setTimer(() => {
        w.cancelTimer = null;
        if (this.unqueue(w)) resolve({ kind: 'timeout', stage: this.firstBlocked(stages) ?? blocked });
      }, wait.deadline - now);
      wait.signal.addEventListener('abort', w.onAbort, { once: true });
    });
  }

  /** Whether a request for these stages would wait now (one of them is at its cap). */
  blocked(stages: readonly GateStage[]): GateStage | null {
    return this.firstBlocked(stages);
  }

  /** Holders and waiters of one semaphore (for the dashboard). */
  usage(key: string): { held: number; waiting: number; cap: number } | null {
    const s = this.slots.get(key);
    return s ? { held: s.held, waiting: s.waiting, cap: s.cap } : null;
  }

  /** Changes a semaphore's cap (a connection edit); waiters that now fit are served at once. */
  setCap(key: string, cap: number): void {
    const slot = this.slots.get(key);
    if (!slot || slot.cap === cap) return;
    const raised = cap > slot.cap;
    slot.cap = cap;
    if (raised) this.drain();
  }

  /** Keys of the semaphores that currently exist (held or waited for). */
  keys(): IterableIterator<string> {
    return this.slots.keys();
  }

  /** Lets every waiter go without a slot (a fail-open gate that was switched off). */
  dismissAll(): void {
    for (const w of [...this.waiters]) if (this.unqueue(w)) w.settle({ kind: 'dismissed' });
  }

  /** Rejects every waiter (engine shutdown). */
  close(reason: Error): void {
    for (const w of [...this.waiters]) if (this.unqueue(w)) w.fail(reason);
  }

  private slotFor(s: GateStage): Slot {
    let slot = this.slots.get(s.key);
    if (!slot) this.slots.set(s.key, (slot = { cap: s.cap, held: 0, waiting: 0 }));
    return slot;
  }

  /** Brings each stage's semaphore to the cap the caller read from configuration. True if one rose. */
  private applyCaps(stages: readonly GateStage[]): boolean {
    let raised = false;
    for (const s of stages) {
      const slot = this.slotFor(s);
      if (slot.cap !== s.cap) {
        if (s.cap > slot.cap) raised = true;
        slot.cap = s.cap;
      }
    }
    return raised;
  }

  private firstBlocked(stages: readonly GateStage[]): GateStage | null {
    for (const s of stages) {
      const slot = this.slots.get(s.key);
      if (slot && slot.held >= slot.cap) return s;
    }
    return null;
  }

  private fits(stages: readonly GateStage[]): boolean {
    for (const s of stages) {
      const slot = this.slots.get(s.key);
      if (slot && slot.held >= slot.cap) return false;
    }
    return true;
  }

  private take(stages: readonly GateStage[]): () => void {
    for (const s of stages) this.slotFor(s).held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const s of stages) {
        const slot = this.slots.get(s.key);
        if (!slot) continue;
        slot.held = Math.max(0, slot.held - 1);
        this.forgetIfUnused(s.key, slot);
      }
      this.drain();
    };
  }

  /** Removes a waiter; false when it was already settled. */
  private unqueue(w: Waiter): boolean {
    if (!this.waiters.delete(w)) return false;
    w.cancelTimer?.();
    w.cancelTimer = null;
    w.signal.removeEventListener('abort', w.onAbort);
    for (const s of w.stages) {
      const slot = this.slots.get(s.key);
      if (!slot) continue;
      slot.waiting = Math.max(0, slot.waiting - 1);
      this.forgetIfUnused(s.key, slot);
    }
    return true;
  }

  private forgetIfUnused(key: string, slot: Slot): void {
    if (slot.held === 0 && slot.waiting === 0) this.slots.delete(key);
  }

  /** Serves, oldest first, every waiter whose stages all have room. */
  private drain(): void {
    if (this.waiters.size === 0) return;
    for (const w of this.waiters) {
      if (!this.fits(w.stages)) continue;
      const release = this.take(w.stages);
      this.unqueue(w);
      w.settle({ kind: 'granted', release });
    }
  }
}
