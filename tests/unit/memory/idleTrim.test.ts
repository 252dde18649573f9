// Memory given back after a burst (issue 25): one trim once traffic has stopped, never while it
// flows, never after a handful of requests, once per burst; stop() cancels the pending look.
import { describe, expect, it } from 'vitest';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { IDLE_TRIM_MIN_REQUESTS, IDLE_TRIM_MS, IdleTrim, SECOND_COLLECTION_MS, STARTUP_TRIM_MS, fullGc, minorGc } from '../../../src/main/engine/memory/idleTrim';
import { FakeClock } from '../../support/fakeClock';

function rig() {
  const clock = new FakeClock();
  const calls: string[] = [];
  const trim = new IdleTrim({ clock, gc: () => calls.push('gc'), others: () => calls.push('others') });
  return { clock, calls, trim };
}

describe('IdleTrim', () => {
  it('trims once, IDLE_TRIM_MS after the last request of a burst', () => {
    const { clock, calls, trim } = rig();
    trim.activity(IDLE_TRIM_MIN_REQUESTS);
    clock.advance(IDLE_TRIM_MS - 1);
    expect(calls).toEqual([]);
    clock.advance(1);
    expect(calls).toEqual(['others', 'gc']);
    expect(trim.trims).toBe(1);
    // The second collection, once the first one's sweeping is done; then nothing more.
    clock.advance(SECOND_COLLECTION_MS);
    expect(calls).toEqual(['others', 'gc', 'gc']);
    clock.advance(IDLE_TRIM_MS * 10);
    expect(calls).toHaveLength(3);
    expect(trim.trims).toBe(1);
  });

  it('waits while requests keep flowing, and trims when the last one is IDLE_TRIM_MS old', () => {
    const { clock, trim } = rig();
    // A request batch every 250 ms for a minute: never a quiet stretch.
    for (let i = 0; i < 240; i++) {
      trim.activity(10);
      clock.advance(250);
    }
    expect(trim.trims).toBe(0);
    clock.advance(IDLE_TRIM_MS - 250 - 1);
    expect(trim.trims).toBe(0);
    clock.advance(1);
    expect(trim.trims).toBe(1);
  });

  it('does not pause for a few requests, but counts them toward the next burst', () => {
    const { clock, trim } = rig();
    trim.activity(IDLE_TRIM_MIN_REQUESTS - 1);
    clock.advance(IDLE_TRIM_MS * 3);
    expect(trim.trims).toBe(0);
    trim.activity(1);
    clock.advance(IDLE_TRIM_MS);
    expect(trim.trims).toBe(1);
  });

  it('trims again after a second burst, not after a trickle that follows the first', () => {
    const { clock, trim } = rig();
    trim.activity(1000);
    clock.advance(IDLE_TRIM_MS);
    trim.activity(3);
    clock.advance(IDLE_TRIM_MS);
    expect(trim.trims).toBe(1);
    trim.activity(1000);
    clock.advance(IDLE_TRIM_MS);
    expect(trim.trims).toBe(2);
  });

  it('runs the others when this thread has no collection to offer', () => {
    const clock = new FakeClock();
    let others = 0;
    const trim = new IdleTrim({ clock, gc: null, others: () => others++, idleMs: 5, minRequests: 1 });
    trim.activity(1);
    clock.advance(5);
    expect(others).toBe(1);
  });

  it("gives the allocator's free pages back last, after the second collection has freed Buffers' memory", () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const trim = new IdleTrim({ clock, gc: () => calls.push('gc'), others: () => calls.push('others'), release: () => calls.push('release') });
    trim.activity(IDLE_TRIM_MIN_REQUESTS);
    clock.advance(IDLE_TRIM_MS);
    expect(calls).toEqual(['others', 'gc']);
    clock.advance(SECOND_COLLECTION_MS);
    expect(calls).toEqual(['others', 'gc', 'gc', 'release']);
    // Without a collection to wait for, at once.
    const bare: string[] = [];
    const noGc = new IdleTrim({ clock, gc: null, others: () => bare.push('others'), release: () => bare.push('release'), idleMs: 5, minRequests: 1 });
    noGc.activity(1);
    clock.advance(5);
    expect(bare).toEqual(['others', 'release']);
  });

  it('stop() cancels a pending second collection', () => {
    const { clock, calls, trim } = rig();
    trim.activity(IDLE_TRIM_MIN_REQUESTS);
    clock.advance(IDLE_TRIM_MS);
    trim.stop();
    clock.advance(SECOND_COLLECTION_MS * 2);
    expect(calls).toEqual(['others', 'gc']);
    expect(trim.trims).toBe(1);
  });

  it('stop() cancels a pending trim and ignores later traffic', () => {
    const { clock, calls, trim } = rig();
    trim.activity(IDLE_TRIM_MIN_REQUESTS);
    trim.stop();
    trim.activity(IDLE_TRIM_MIN_REQUESTS);
    clock.advance(IDLE_TRIM_MS * 2);
    expect(calls).toEqual([]);
  });
});

describe('fullGc', () => {
  it('offers a full collection under plain Node without a command-line flag', () => {
    const gc = fullGc();
    expect(typeof gc).toBe('function');
    expect(fullGc()).toBe(gc);
    // Garbage made here is gone after it: a weakly held object is collected.
    let obj: object | null = { big: new Array(1000).fill('x') };
    const ref = new WeakRef(obj);
    obj = null;
    gc!();
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        gc!();
        expect(ref.deref()).toBeUndefined();
        resolve();
      }),
    );
  });
});

describe('minorGc', () => {
  it('runs a young collection, not a full one', async () => {
    const minor = minorGc();
    expect(typeof minor).toBe('function');
    const kinds: number[] = [];
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) kinds.push((e as unknown as { detail: { kind: number } }).detail.kind);
    });
    obs.observe({ entryTypes: ['gc'] });
    minor!();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    obs.disconnect();
    expect(kinds).toContain(constants.NODE_PERFORMANCE_GC_MINOR);
    expect(kinds).not.toContain(constants.NODE_PERFORMANCE_GC_MAJOR);
  });
});

describe('IdleTrim after start-up', () => {
  it('trims STARTUP_TRIM_MS after start, once after the first requests, then only after bursts', () => {
    const clock = new FakeClock();
    const calls: string[] = [];
    const trim = new IdleTrim({ clock, gc: () => calls.push('gc'), others: () => calls.push('others'), startup: true });
    clock.advance(STARTUP_TRIM_MS - 1);
    expect(trim.trims).toBe(0);
    clock.advance(1);
    expect(trim.trims).toBe(1);
    expect(calls.slice(0, 2)).toEqual(['others', 'gc']);
    // Quiet: nothing more.
    clock.advance(IDLE_TRIM_MS * 3);
    expect(trim.trims).toBe(1);
    // The first requests, however few, get their own trim once quiet.
    trim.activity(5);
    clock.advance(STARTUP_TRIM_MS);
    expect(trim.trims).toBe(2);
    // From then on a handful of requests is no burst.
    trim.activity(5);
    clock.advance(IDLE_TRIM_MS * 3);
    expect(trim.trims).toBe(2);
    trim.activity(IDLE_TRIM_MIN_REQUESTS);
    clock.advance(IDLE_TRIM_MS);
    expect(trim.trims).toBe(3);
    trim.stop();
  });

  it('waits for a quiet stretch after start: requests that keep flowing postpone it, a few are enough once they stop', () => {
    const clock = new FakeClock();
    const trim = new IdleTrim({ clock, gc: () => {}, others: () => {}, startup: true });
    for (let i = 0; i < 40; i++) {
      trim.activity(1);
      clock.advance(250);
    }
    expect(trim.trims).toBe(0);
    clock.advance(STARTUP_TRIM_MS - 250);
    expect(trim.trims).toBe(1);
    trim.stop();
  });
});
