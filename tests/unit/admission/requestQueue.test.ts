// The rate-limit queue (R-RQ-02, R-RQ-03, R-RQ-11, R-RQ-18): oldest first, each waiter leaves by
// dispatch, deadline or abort; a pause holds every dispatch and ends by itself; a request that gave
// up never costs a later one its dispatch. Driven with a fake clock and a pacer the test controls.
import { describe, expect, it } from 'vitest';
import { RequestQueue } from '../../../src/main/engine/admission/requestQueue';
import { FakeClock } from '../../support/fakeClock';
import { flush, manualPacers, track } from './support';

const never = () => new AbortController().signal;
const timeout = (left: number | null) => Object.assign(new Error('queue timeout'), { left });

function setup(minTime = 0) {
  const clock = new FakeClock();
  const pacers = manualPacers();
  let changes = 0;
  const q = new RequestQueue(clock, pacers, () => changes++);
  q.setMinTime(minTime);
  return { clock, pacers, q, changes: () => changes };
}

describe('RequestQueue', () => {
  it('is idle with nothing queued, paused or spaced', () => {
    const { q, clock } = setup();
    expect(q.isIdle(clock.now())).toBe(true);
    q.setMinTime(100);
    expect(q.isIdle(clock.now())).toBe(false);
  });

  it('a pause for one model holds only that model\'s waiters; the others dispatch, and it ends by itself', async () => {
    const { q, clock, pacers } = setup();
    q.pause(clock.now() + 1_000, 'model-a');
    expect(q.pauseEnd(clock.now())).toBeNull();
    expect(q.pauseEnd(clock.now(), 'model-a')).toBe(clock.now() + 1_000);
    expect(q.isIdle(clock.now(), 'model-b')).toBe(true);
    expect(q.isIdle(clock.now(), 'model-a')).toBe(false);
    const order: string[] = [];
    void q.enter(clock.now() + 10_000, never(), timeout, 'model-a').then(() => order.push('a'));
    void q.enter(clock.now() + 10_000, never(), timeout, 'model-b').then(() => order.push('b'));
    pacers.made[0]!.drain();
    await flush();
    expect(order).toEqual(['b']);
    clock.advance(1_000);
    pacers.made[0]!.drain();
    await flush();
    expect(order).toEqual(['b', 'a']);
    expect(q.pausedModels(clock.now())).toEqual([]);
  });

  it('a model pause refuses at once that model\'s waiters whose budget ends first', async () => {
    const { q, clock } = setup();
    q.pause(clock.now() + 10_000); // everyone queues
    const a = q.enter(clock.now() + 2_000, never(), timeout, 'model-a');
    const b = q.enter(clock.now() + 2_000, never(), timeout, 'model-b');
    q.pause(clock.now() + 5_000, 'model-a');
    await expect(a).rejects.toMatchObject({ left: 10_000 });
    expect(q.waiting).toBe(1);
    q.clearPause();
    void b;
  });

  it('dispatches waiters oldest first as the pacer allows', async () => {
    const { q, clock, pacers } = setup(50);
    const order: number[] = [];
    for (const n of [1, 2, 3]) void q.enter(clock.now() + 10_000, never(), timeout).then(() => order.push(n));
    const pacer = pacers.made[0]!;
    expect(pacer.minTime).toBe(50);
    expect(pacer.jobs).toHaveLength(1); // spacing: one dispatch at a time
    pacer.next();
    await flush();
    expect(order).toEqual([1]);
    pacer.drain();
    await flush();
    expect(order).toEqual([1, 2, 3]);
    expect(q.waiting).toBe(0);
  });

  it('without spacing hands the pacer a few jobs at a time, never more than waiters', () => {
    const { q, clock, pacers } = setup();
    q.pause(clock.now() + 1000); // forces queueing
    for (let i = 0; i < 10; i++) void q.enter(clock.now() + 10_000, never(), timeout);
    expect(pacers.made).toHaveLength(0);
    clock.advance(1000);
    expect(pacers.made[0]!.jobs).toHaveLength(4);
  });

  it('a tiny spacing (at most 10 ms) reserves a few dispatches at once, a real one only one', () => {
    const tiny = setup(5);
    for (let i = 0; i < 10; i++) void tiny.q.enter(tiny.clock.now() + 10_000, never(), timeout);
    expect(tiny.pacers.made[0]!.jobs).toHaveLength(4);
    const real = setup(11);
    for (let i = 0; i < 10; i++) void real.q.enter(real.clock.now() + 10_000, never(), timeout);
    expect(real.pacers.made[0]!.jobs).toHaveLength(1);
  });

  it('a waiter still queued at its deadline is rejected and never dispatched later', async () => {
    const { q, clock, pacers } = setup(100);
    const a = track(q.enter(clock.now() + 500, never(), timeout));
    const b = track(q.enter(clock.now() + 5_000, never(), timeout));
    clock.advance(500);
    await flush();
    expect(a.status).toBe('rejected');
    expect(a.error.message).toBe('queue timeout');
    expect(a.error.left).toBeNull();
    // The job that was meant for a now serves b: giving up cost b nothing.
    pacers.made[0]!.next();
    await flush();
    expect(b.status).toBe('resolved');
    expect(pacers.made[0]!.jobs).toHaveLength(0);
  });

  it('a pause holds every dispatch until it ends, then the queue drains', async () => {
    const { q, clock, pacers } = setup();
    q.pause(clock.now() + 2_000);
    expect(q.pauseEnd(clock.now())).toBe(clock.now() + 2_000);
    const a = track(q.enter(clock.now() + 30_000, never(), timeout));
    clock.advance(1_999);
    await flush();
    expect(pacers.made).toHaveLength(0);
    expect(a.status).toBe('pending');
    clock.advance(1);
    pacers.drainAll();
    await flush();
    expect(a.status).toBe('resolved');
    expect(q.pauseEnd(clock.now())).toBeNull();
    expect(q.isIdle(clock.now())).toBe(true);
  });

  it('a permit that arrives after a pause began dispatches nobody until the pause ends', async () => {
    const { q, clock, pacers } = setup(10);
    const a = track(q.enter(clock.now() + 30_000, never(), timeout));
    q.pause(clock.now() + 1_000);
    pacers.made[0]!.next();
    await flush();
    expect(a.status).toBe('pending');
    clock.advance(1_000);
    pacers.drainAll();
    await flush();
    expect(a.status).toBe('resolved');
  });

  it('a pause rejects at once the waiters whose budget ends before it does', async () => {
    const { q, clock } = setup(10);
    const short = track(q.enter(clock.now() + 1_000, never(), timeout));
    const long = track(q.enter(clock.now() + 60_000, never(), timeout));
    q.pause(clock.now() + 5_000);
    await flush();
    expect(short.status).toBe('rejected');
    expect(short.error.left).toBe(5_000);
    expect(long.status).toBe('pending');
  });

  it('a later pause end wins over an earlier one; a shorter hint does not cut a pause short', () => {
    const { q, clock } = setup();
    q.pause(clock.now() + 5_000);
    q.pause(clock.now() + 1_000);
    expect(q.pauseEnd(clock.now())).toBe(clock.now() + 5_000);
    q.pause(clock.now() + 9_000);
    expect(q.pauseEnd(clock.now())).toBe(clock.now() + 9_000);
  });

  it('clearPause resumes dispatching at once', async () => {
    const { q, clock, pacers } = setup();
    q.pause(clock.now() + 60_000);
    const a = track(q.enter(clock.now() + 90_000, never(), timeout));
    q.clearPause();
    pacers.drainAll();
    await flush();
    expect(a.status).toBe('resolved');
  });

  it('an aborted waiter leaves the queue with the abort reason', async () => {
    const { q, clock } = setup(10);
    const ac = new AbortController();
    const a = track(q.enter(clock.now() + 30_000, ac.signal, timeout));
    ac.abort(new Error('client gone'));
    await flush();
    expect(a.error.message).toBe('client gone');
    expect(q.waiting).toBe(0);
  });

  it('close rejects everyone waiting and stops the pacer', async () => {
    const { q, clock, pacers } = setup(10);
    const a = track(q.enter(clock.now() + 30_000, never(), timeout));
    await q.close();
    await flush();
    expect(a.status).toBe('rejected');
    expect(pacers.made[0]!.closed).toBe(true);
    await expect(q.enter(clock.now() + 1000, never(), timeout)).rejects.toThrow();
  });

  it('reports changes so the dashboard can push queue depth', () => {
    const { q, clock, changes } = setup(10);
    const before = changes();
    void q.enter(clock.now() + 30_000, never(), timeout);
    expect(changes()).toBeGreaterThan(before);
  });
});
