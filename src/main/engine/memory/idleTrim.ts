// Memory given back after a burst (issue 25). Under load V8 grows its young generation to its
// maximum and promotes the in-flight requests' objects, so the old generation fills with garbage
// that no collection reclaims while the process then sits idle: nothing allocates, so nothing
// collects, and the resident set stays at its peak for as long as the app is open. Once traffic
// has stopped for IDLE_MS after at least MIN_REQUESTS requests, one full collection runs on this
// thread and the log worker does the same and releases SQLite's page cache; V8 then returns the
// emptied pages. It runs once per burst, never while requests flow, and a request arriving during
// it waits for one full collection of a small heap (tens of milliseconds).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CancelTimer, Clock } from '../clock';

/** Quiet time after the last request before memory is given back. */
export const IDLE_TRIM_MS = 10_000;
/** A burst worth trimming after: fewer requests leave too little garbage to be worth a pause. */
export const IDLE_TRIM_MIN_REQUESTS = 500;

let gcFn: (() => void) | null | undefined;

/**
 * A full, synchronous V8 collection, or null when the runtime refuses one. Node exposes `gc` only
 * behind a flag; the flag is set here at run time, so neither shell's command line has to carry
 * it. Call it before starting worker threads: they see the flag too (the log worker uses it).
 */
export function fullGc(): (() => void) | null {
  if (gcFn !== undefined) return gcFn;
  try {
    setFlagsFromString('--expose-gc');
    const fn = runInNewContext('gc') as unknown;
    gcFn = typeof fn === 'function' ? (fn as () => void) : null;
  } catch {
    gcFn = null;
  }
  return gcFn;
}

export interface IdleTrimDeps {
  clock: Clock;
  /** This thread's full collection (fullGc()); null: only `others` run. */
  gc: (() => void) | null;
  /** Work off this thread (the log worker's collection and cache release); errors are its own. */
  others: () => void;
  idleMs?: number;
  minRequests?: number;
}

export class IdleTrim {
  private sinceTrim = 0;
  private lastActivity = 0;
  private cancel: CancelTimer | null = null;
  private stopped = false;
  /** How many trims ran (shown nowhere; tests and the bench read it). */
  trims = 0;

  constructor(private readonly deps: IdleTrimDeps) {}

  /** `n` requests were served or refused just now. */
  activity(n: number): void {
    if (this.stopped || n <= 0) return;
    this.sinceTrim += n;
    this.lastActivity = this.deps.clock.monotonic();
    if (!this.cancel) this.arm(this.idleMs);
  }

  private get idleMs(): number {
    return this.deps.idleMs ?? IDLE_TRIM_MS;
  }

  private arm(ms: number): void {
    this.cancel = this.deps.clock.setTimer(() => this.check(), ms);
  }

  private check(): void {
    this.cancel = null;
    if (this.stopped) return;
    const quiet = this.deps.clock.monotonic() - this.lastActivity;
    // Still busy: look again when the last request is IDLE_MS old (one timer, not one per request).
    if (quiet < this.idleMs) return this.arm(this.idleMs - quiet);
    if (this.sinceTrim < (this.deps.minRequests ?? IDLE_TRIM_MIN_REQUESTS)) return;
    this.sinceTrim = 0;
    this.trims++;
    this.deps.others();
    this.deps.gc?.();
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = null;
  }
}
