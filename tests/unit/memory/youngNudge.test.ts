import { describe, expect, it } from 'vitest';
import { NUDGE_BYTES, YoungNudge } from '../../../src/main/engine/memory/youngNudge';

describe('YoungNudge (memory/youngNudge.ts)', () => {
  it('runs a young collection once enough large bodies came in and the last request in flight ends', () => {
    let runs = 0;
    const nudge = new YoungNudge(() => runs++, 1000);
    nudge.start(600);
    nudge.end();
    expect(runs).toBe(0); // 600 bytes: not yet
    nudge.start(600);
    nudge.end();
    expect(runs).toBe(1); // 1,200 bytes, nothing in flight
    nudge.start(600);
    nudge.end();
    expect(runs).toBe(1); // counted again from zero
  });

  it('never while a request is in flight: under concurrent load nothing is forced', () => {
    let runs = 0;
    const nudge = new YoungNudge(() => runs++, 1000);
    nudge.start(0);
    for (let i = 0; i < 50; i++) {
      nudge.start(800);
      nudge.end();
    }
    expect(runs).toBe(0);
    nudge.end(); // the long one ends: the bodies since are freed at once
    expect(runs).toBe(1);
  });

  it('small bodies (0 counted) never start one, and without a collector it does nothing', () => {
    let runs = 0;
    const nudge = new YoungNudge(() => runs++);
    for (let i = 0; i < 1000; i++) {
      nudge.start(0);
      nudge.end();
    }
    expect(runs).toBe(0);
    const none = new YoungNudge(null);
    none.start(NUDGE_BYTES * 2);
    expect(() => none.end()).not.toThrow();
  });
});
