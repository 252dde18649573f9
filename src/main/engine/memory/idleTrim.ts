// Memory given back after a burst (issue 25). Under load V8 grows its young generation to its
// maximum and promotes the in-flight requests' objects, so the old generation fills with garbage
// that no collection reclaims while the process then sits idle: nothing allocates, so nothing
// collects, and the resident set stays at its peak for as long as the app is open. Once traffic
// has stopped for IDLE_MS after at least MIN_REQUESTS requests, a full collection runs on this
// thread, the log worker is retired (logs/logWriter.ts) and SQLite's page cache released; a second
// collection a second later returns the pages the first one's sweeping freed, and then the C
// allocator gives back the free pages it keeps (mallocTrim.ts). V8 also shrinks the
// young generation back to its minimum in such a collection, but only once the allocation rate of
// the last five seconds is low, hence the quiet times below. The same happens once after start-up
// and once after the first requests. It runs once per burst, never while requests flow, and a
// request arriving during it waits for one full collection of a small heap (milliseconds).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CancelTimer, Clock } from '../clock';

/** Quiet time after the last request before memory is given back. */
export const IDLE_TRIM_MS = 10_000;
/** A burst worth trimming after: fewer requests leave too little garbage to be worth a pause. */
export const IDLE_TRIM_MIN_REQUESTS = 500;
/**
 * The quiet time before the start-up trim and the first-use trim, which need no burst: start-up
 * (modules loaded, migrations, the store opened) and the first requests (code compiled, the
 * upstream parser instantiated, the young generation grown) leave garbage that nothing collects
 * while the app then sits idle, as it mostly does.
 */
export const STARTUP_TRIM_MS = 6_000;
/** The second collection, after the first one's concurrent sweeping has finished. */
export const SECOND_COLLECTION_MS = 1_000;

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

/** A young-generation collection (V8's `gc({ type: 'minor' })`), or null as for fullGc. */
export function minorGc(): (() => void) | null {
  const gc = fullGc() as ((options?: { type: 'minor' | 'major' }) => void) | null;
  return gc ? () => gc({ type: 'minor' }) : null;
}

export interface IdleTrimDeps {
  clock: Clock;
  /** This thread's full collection (fullGc()); null: only `others` run. */
  gc: (() => void) | null;
  /** Work off this thread (the log worker's collection and cache release); errors are its own. */
  others: () => void;
  /**
   * Runs last, after the second collection has freed what the heap held outside itself (Buffers'
   * memory): the C allocator's free pages given back to the system (mallocTrim.ts).
   */
  release?: () => void;
  idleMs?: number;
  minRequests?: number;
  /**
   * Also trim once after start, the first time the engine is quiet for STARTUP_TRIM_MS, and once
   * after its first requests, when they have been quiet that long (whatever their number).
   */
  startup?: boolean;
}

export class IdleTrim {
  private sinceTrim = 0;
  private lastActivity = 0;
  private cancel: CancelTimer | null = null;
  private cancelSecond: CancelTimer | null = null;
  private stopped = false;
  /** How many trims ran (shown nowhere; tests and the bench read it). */
  trims = 0;

  /**
   * 'start': the start-up trim has not run; 'firstUse': it has, before any request, so the first
   * requests get a light trim of their own; 'steady': trims follow bursts only.
   */
  private phase: 'start' | 'firstUse' | 'steady';

  constructor(private readonly deps: IdleTrimDeps) {
    this.phase = deps.startup === true ? 'start' : 'steady';
    if (this.phase === 'start') {
      this.lastActivity = deps.clock.monotonic();
      this.arm(STARTUP_TRIM_MS);
    }
  }

  /** `n` requests were served or refused just now. */
  activity(n: number): void {
    if (this.stopped || n <= 0) return;
    this.sinceTrim += n;
    this.lastActivity = this.deps.clock.monotonic();
    if (!this.cancel) this.arm(this.idleMs);
  }

  /** How long traffic must have stopped: the light trims' shorter wait until they have run. */
  private get idleMs(): number {
    return this.phase !== 'steady' ? STARTUP_TRIM_MS : (this.deps.idleMs ?? IDLE_TRIM_MS);
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
    const needed = this.phase === 'start' ? 0 : this.phase === 'firstUse' ? 1 : (this.deps.minRequests ?? IDLE_TRIM_MIN_REQUESTS);
    if (this.sinceTrim < needed) return;
    this.phase = this.phase === 'start' && this.sinceTrim === 0 ? 'firstUse' : 'steady';
    this.sinceTrim = 0;
    this.trims++;
    this.deps.others();
    const gc = this.deps.gc;
    if (!gc) return this.deps.release?.();
    gc();
    this.cancelSecond?.();
    this.cancelSecond = this.deps.clock.setTimer(() => {
      this.cancelSecond = null;
      if (this.stopped) return;
      gc();
      this.deps.release?.();
    }, SECOND_COLLECTION_MS);
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = null;
    this.cancelSecond?.();
    this.cancelSecond = null;
  }
}
