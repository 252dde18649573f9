// Shared-quota serialisation (R-SQ-12..14): requests beyond max_concurrent wait for a slot, and the
// layer fails open: a full queue or an expired wait proceeds without a slot instead of refusing.
import { describe, expect, it } from 'vitest';
import { QuotaShareGate } from '../../../src/main/engine/admission/quotaShareGate';
import { FakeClock } from '../../support/fakeClock';
import { flush, track } from './support';

const never = () => new AbortController().signal;

describe('QuotaShareGate', () => {
  it('serialises requests to the account: the next waits until a slot frees', async () => {
    const clock = new FakeClock();
    const gate = new QuotaShareGate(clock);
    const first = gate.tryAcquire('c1', 1)!;
    expect(gate.tryAcquire('c1', 1)).toBeNull();
    const next = track(gate.acquire('c1', 1, { deadline: clock.now() + 5000, maxWaiting: 10, signal: never() }));
    await flush();
    expect(next.status).toBe('pending');
    first();
    await flush();
    expect(next.value).toMatchObject({ failedOpen: false });
    expect(gate.usage('c1')).toEqual({ held: 1, waiting: 0, cap: 1 });
  });

  it('fails open when the wait runs out: the request proceeds without a slot', async () => {
    const clock = new FakeClock();
    const gate = new QuotaShareGate(clock);
    gate.tryAcquire('c1', 1);
    const next = track(gate.acquire('c1', 1, { deadline: clock.now() + 5000, maxWaiting: 10, signal: never() }));
    clock.advance(5000);
    await flush();
    expect(next.value).toMatchObject({ failedOpen: true });
    next.value!.release(); // a no-op: it never held a slot
    expect(gate.usage('c1')).toEqual({ held: 1, waiting: 0, cap: 1 });
  });

  it('fails open when too many already wait', async () => {
    const clock = new FakeClock();
    const gate = new QuotaShareGate(clock);
    gate.tryAcquire('c1', 1);
    const r = await gate.acquire('c1', 1, { deadline: clock.now() + 5000, maxWaiting: 0, signal: never() });
    expect(r.failedOpen).toBe(true);
  });

  it('keeps each connection separate', () => {
    const gate = new QuotaShareGate(new FakeClock());
    expect(gate.tryAcquire('c1', 1)).not.toBeNull();
    expect(gate.tryAcquire('c2', 1)).not.toBeNull();
  });

  it('opening the gate lets everyone waiting through', async () => {
    const clock = new FakeClock();
    const gate = new QuotaShareGate(clock);
    gate.tryAcquire('c1', 1);
    const a = track(gate.acquire('c1', 1, { deadline: clock.now() + 5000, maxWaiting: 10, signal: never() }));
    const b = track(gate.acquire('c1', 1, { deadline: clock.now() + 5000, maxWaiting: 10, signal: never() }));
    gate.openAll();
    await flush();
    expect([a.value?.failedOpen, b.value?.failedOpen]).toEqual([true, true]);
  });

  it('still rejects when the client goes away', async () => {
    const clock = new FakeClock();
    const gate = new QuotaShareGate(clock);
    gate.tryAcquire('c1', 1);
    const ac = new AbortController();
    const p = track(gate.acquire('c1', 1, { deadline: clock.now() + 5000, maxWaiting: 10, signal: ac.signal }));
    ac.abort(new Error('gone'));
    await flush();
    expect(p.status).toBe('rejected');
  });
});
