// Team mode (issue 26): a connection's caps held for the whole team. After the local gates have
// granted a request its slots (the single-process rules: R-SQ-04's atomic composite, FIFO, typed
// errors), it also takes one slot of each of the team's clustered limiters that apply, one at a
// time, always in the same order (model, then connection, then shared quota), within the same
// deadline, and gives them back with its lease. Bottleneck cannot take two limiters at once; why
// this order keeps R-SQ-04's intent is in docs/decisions/team-26-admission.md.
//
// Redis is a dependency that fails: while it is not connected no slot is asked for, and a call that
// goes unanswered (the limiters' bound) or fails ends the wait at once: the request goes on with
// its local slots only, and the link is told. A request never fails because Redis is down.
import type { CancelTimer, Clock } from '../clock';
import type { Logger } from '../logger';
import type { ClusterLimiter, ClusterLimiters } from './teamLimiters';

export type TeamSlotKind = 'model' | 'account' | 'shared';

export interface TeamSlot {
  kind: TeamSlotKind;
  /** The clustered limiter's id (under the team's prefix). */
  id: string;
  /** Slots the team shares (a positive integer). */
  cap: number;
  /** How errors name it ("connection", "model glm-5", "shared-quota"). */
  label: string;
}

export interface TeamWait {
  /** Clock time at which a strict slot's wait ends with a timeout (a shared-quota slot's: fails open). */
  deadline: number;
  signal: AbortSignal;
  /** How long Redis keeps a held slot counted without word from this instance (a crash). */
  expirationMs: number;
}

export type TeamGateOutcome =
  | {
      kind: 'granted';
      /** Gives every team slot taken back (idempotent). */
      release: () => void;
      /** The first slot that had to wait for room somewhere in the team (null: none did). */
      waitedFor: TeamSlotKind | null;
      /** True when Redis could not be asked (or stopped answering): the request goes on with its local slots. */
      local: boolean;
    }
  /** A strict slot stayed full until the deadline: nothing is held. */
  | { kind: 'timeout'; slot: TeamSlot };

const ORDER: Record<TeamSlotKind, number> = { model: 0, account: 1, shared: 2 };

/** The team's acquisition order: the narrowest first, the fail-open shared quota last. */
export function orderTeamSlots(slots: readonly TeamSlot[]): TeamSlot[] {
  return [...slots].sort((a, b) => ORDER[a.kind] - ORDER[b.kind]);
}

type SlotOutcome = { kind: 'granted'; release: () => void; waited: boolean } | { kind: 'timeout' } | { kind: 'unavailable' };

interface SlotWaiter {
  kind: TeamSlotKind;
  /** Stops waiting: Redis is gone (`unavailable`), or the shared-quota layer was switched off (`timeout`). */
  end(outcome: 'unavailable' | 'timeout'): void;
  fail(reason: unknown): void;
}

const noop = () => {};

export class TeamGate {
  private readonly waiters = new Set<SlotWaiter>();
  private seq = 0;
  private readonly offDown: () => void;

  constructor(
    private readonly limiters: ClusterLimiters,
    private readonly clock: Clock,
    private readonly instanceId: string,
    private readonly log?: Logger,
  ) {
    this.offDown = limiters.onDown(() => {
      for (const w of [...this.waiters]) w.end('unavailable');
    });
  }

  /** Whether team slots can be asked for now. */
  get up(): boolean {
    return this.limiters.up;
  }

  /** Takes a slot of each limiter, in the team's order. Rejects only with the signal's reason. */
  async acquire(slots: readonly TeamSlot[], wait: TeamWait): Promise<TeamGateOutcome> {
    const held: (() => void)[] = [];
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      for (const r of held.reverse()) r();
    };
    let waitedFor: TeamSlotKind | null = null;
    for (const slot of orderTeamSlots(slots)) {
      if (!this.limiters.up) return { kind: 'granted', release, waitedFor, local: true };
      let out: SlotOutcome;
      try {
        out = await this.take(slot, wait);
      } catch (err) {
        release();
        throw err;
      }
      if (out.kind === 'granted') {
        held.push(out.release);
        if (out.waited && waitedFor === null) waitedFor = slot.kind;
      } else if (out.kind === 'unavailable') {
        // Slots already taken stay held (and are given back with the lease): Redis may be back by then.
        return { kind: 'granted', release, waitedFor, local: true };
      } else if (slot.kind === 'shared') {
        // The shared-quota serialisation fails open (R-SQ-13): the request goes ahead without it.
        if (waitedFor === null) waitedFor = slot.kind;
      } else {
        release();
        return { kind: 'timeout', slot };
      }
    }
    return { kind: 'granted', release, waitedFor, local: false };
  }

  /** The shared-quota layer was switched off: requests waiting for a shared slot go ahead. */
  openShared(): void {
    for (const w of [...this.waiters]) if (w.kind === 'shared') w.end('timeout');
  }

  /** Engine shutdown: every waiter is rejected. */
  close(reason: Error): void {
    this.offDown();
    for (const w of [...this.waiters]) w.fail(reason);
  }

  /** One slot of one limiter: granted, timed out at the deadline, or given up on Redis. */
  private take(slot: TeamSlot, wait: TeamWait): Promise<SlotOutcome> {
    const { signal } = wait;
    if (signal.aborted) return Promise.reject(signal.reason);
    const settings = { maxConcurrent: slot.cap, minTime: 0 };
    const limiter = this.limiters.limiter(slot.id, settings);
    limiter.configure(settings);
    const jobId = `${this.instanceId}:${++this.seq}`;
    return new Promise<SlotOutcome>((resolve, reject) => {
      let phase: 'waiting' | 'held' | 'gone' = 'waiting';
      let noRoom = false;
      let cancelDeadline: CancelTimer = noop;
      let cancelGuard: CancelTimer = noop;
      let unwatch = noop;
      const onAbort = () => waiter.fail(signal.reason);
      const leave = (next: 'held' | 'gone'): boolean => {
        if (phase !== 'waiting') return false;
        phase = next;
        this.waiters.delete(waiter);
        cancelDeadline();
        cancelGuard();
        unwatch();
        signal.removeEventListener('abort', onAbort);
        return true;
      };
      const giveUp = (err: unknown | null) => {
        if (!leave('gone')) return;
        if (err !== null) this.limiters.failed(err);
        resolve({ kind: 'unavailable' });
      };
      const waiter: SlotWaiter = {
        kind: slot.kind,
        end: (outcome) => {
          if (outcome === 'unavailable') giveUp(null);
          else if (leave('gone')) resolve({ kind: 'timeout' });
        },
        fail: (reason) => {
          if (leave('gone')) reject(reason);
        },
      };
      this.waiters.add(waiter);
      // The limiter's errors are already reported to the link; they only end this wait.
      unwatch = limiter.watch({ error: () => giveUp(null), noRoom: () => (noRoom = true) });
      this.schedule(limiter, jobId, wait.expirationMs, slot, {
        granted: (release) => {
          if (!leave('held')) return false;
          resolve({ kind: 'granted', release, waited: noRoom });
          return true;
        },
        dropped: (err) => giveUp(err),
      });
      const now = this.clock.now();
      cancelDeadline = this.clock.setTimer(() => waiter.end('timeout'), Math.max(0, wait.deadline - now));
      // Bottleneck has no cancel: a job whose first call went unanswered is left to run empty later.
      cancelGuard = this.clock.setTimer(() => {
        if (limiter.jobStatus(jobId) === 'RECEIVED') giveUp(new Error('Redis did not answer in time'));
      }, this.limiters.boundMs);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private schedule(
    limiter: ClusterLimiter,
    jobId: string,
    expiration: number,
    slot: TeamSlot,
    on: { granted: (release: () => void) => boolean; dropped: (err: unknown) => void },
  ): void {
    let held = false;
    limiter
      .schedule({ id: jobId, expiration }, () => {
        return new Promise<void>((done) => {
          let released = false;
          const release = () => {
            if (released) return;
            released = true;
            done();
          };
          // Nobody waits for this slot any more (timed out, aborted, gave up): it goes straight back.
          if (!on.granted(release)) return release();
          held = true;
        });
      })
      .catch((err: unknown) => {
        if (!held) return on.dropped(err);
        // The lease outlived the job's expiration: the team already has the slot back.
        this.log?.debug('admission.teamSlotExpired', { limiter: slot.id, message: String((err as Error)?.message ?? err) });
      });
  }
}
