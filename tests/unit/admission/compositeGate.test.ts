// The composite concurrency gate (R-SQ-04, R-SQ-07, R-SQ-09): all stages at once or none, the
// strictest cap wins, oldest waiter first among those that fit, typed outcomes for timeouts and
// full queues, and nothing left held after a wait fails.
import { describe, expect, it } from 'vitest';
import { CompositeGate, orderStages, type GateStage } from '../../../src/main/engine/admission/compositeGate';
import { FakeClock } from '../../support/fakeClock';
import { flush, track } from './support';

const acct = (cap: number): GateStage => ({ kind: 'account', key: 'acct:c1', cap, label: 'connection' });
const model = (name: string, cap: number): GateStage => ({ kind: 'model', key: `model:c1:${name}`, cap, label: `model ${name}` });
const never = () => new AbortController().signal;

describe('CompositeGate', () => {
  it('orders stages global -> provider -> account -> model', () => {
    const stages: GateStage[] = [
      model('m', 1),
      { kind: 'global', key: 'g', cap: 9, label: 'global' },
      acct(2),
      { kind: 'provider', key: 'p', cap: 5, label: 'provider' },
    ];
    expect(orderStages(stages).map((s) => s.kind)).toEqual(['global', 'provider', 'account', 'model']);
  });

  it('the strictest cap wins: a model capped at 1 under an account cap of 4 admits one at a time', () => {
    const gate = new CompositeGate(new FakeClock());
    const stages = [acct(4), model('glm-5', 1)];
    const first = gate.tryAcquire(stages);
    expect(first).not.toBeNull();
    expect(gate.tryAcquire(stages)).toBeNull();
    first!();
    expect(gate.tryAcquire(stages)).not.toBeNull();
  });

  it('mixed models share the account cap', () => {
    const gate = new CompositeGate(new FakeClock());
    const held = [
      gate.tryAcquire([acct(2), model('a', 5)]),
      gate.tryAcquire([acct(2), model('b', 5)]),
    ];
    expect(held.every((r) => r !== null)).toBe(true);
    expect(gate.tryAcquire([acct(2), model('c', 5)])).toBeNull();
    expect(gate.usage('acct:c1')).toEqual({ held: 2, waiting: 0, cap: 2 });
  });

  it('a request never holds the account slot while it waits for its model slot', async () => {
    const clock = new FakeClock();
    const gate = new CompositeGate(clock);
    const release = gate.tryAcquire([acct(2), model('glm-5', 1)])!;
    const waiting = track(gate.acquire([acct(2), model('glm-5', 1)], { deadline: clock.now() + 1000, maxWaiting: 10, signal: never() }));
    await flush();
    expect(waiting.status).toBe('pending');
    expect(gate.usage('acct:c1')!.held).toBe(1);
    // Another model still gets the second account slot.
    expect(gate.tryAcquire([acct(2), model('glm-4.7', 3)])).not.toBeNull();
    release();
    await flush();
    expect(waiting.status).toBe('resolved');
    expect(waiting.value!.kind).toBe('granted');
  });

  it('serves waiters oldest first', async () => {
    const clock = new FakeClock();
    const gate = new CompositeGate(clock);
    const release = gate.tryAcquire([acct(1)])!;
    const order: number[] = [];
    const waits = [1, 2, 3].map((n) =>
      gate.acquire([acct(1)], { deadline: clock.now() + 10_000, maxWaiting: 10, signal: never() }).then((o) => {
        order.push(n);
        return o;
      }),
    );
    release();
    const first = await waits[0]!;
    expect(first.kind).toBe('granted');
    expect(order).toEqual([1]);
    (first as { release: () => void }).release();
    await flush();
    expect(order).toEqual([1, 2]);
  });

  it('times out with the stage that was full, and leaves nothing held', async () => {
    const clock = new FakeClock();
    const gate = new CompositeGate(clock);
    gate.tryAcquire([acct(4), model('glm-5', 1)]);
    const p = track(gate.acquire([acct(4), model('glm-5', 1)], { deadline: clock.now() + 500, maxWaiting: 10, signal: never() }));
    clock.advance(499);
    await flush();
    expect(p.status).toBe('pending');
    clock.advance(1);
    await flush();
    expect(p.value).toMatchObject({ kind: 'timeout', stage: { kind: 'model' } });
    expect(gate.usage('acct:c1')).toEqual({ held: 1, waiting: 0, cap: 4 });
    expect(gate.usage('model:c1:glm-5')).toEqual({ held: 1, waiting: 0, cap: 1 });
  });

  it('refuses at once when maxWaiting requests already wait for the full stage', async () => {
    const clock = new FakeClock();
    const gate = new CompositeGate(clock);
    gate.tryAcquire([model('m', 1)]);
    const first = track(gate.acquire([model('m', 1)], { deadline: clock.now() + 1000, maxWaiting: 1, signal: never() }));
    const second = await gate.acquire([model('m', 1)], { deadline: clock.now() + 1000, maxWaiting: 1, signal: never() });
    expect(second).toMatchObject({ kind: 'full', waiting: 1, stage: { kind: 'model' } });
    expect(first.status).toBe('pending');
    const none = await gate.acquire([model('m', 1)], { deadline: clock.now() + 1000, maxWaiting: 0, signal: never() });
    expect(none.kind).toBe('full');
  });

  it('an aborted wait rejects with the signal reason and gives up its place', async () => {
    const clock = new FakeClock();
    const gate = new CompositeGate(clock);
    const release = gate.tryAcquire([acct(1)])!;
    const ac = new AbortController();
    const p = track(gate.acquire([acct(1)], { deadline: clock.now() + 1000, maxWaiting: 10, signal: ac.signal }));
    ac.abort(new Error('client gone'));
    await flush();
    expect(p.status).toBe('rejected');
    expect(p.error.message).toBe('client gone');
    expect(gate.usage('acct:c1')).toEqual({ held: 1, waiting: 0, cap: 1 });
    release();
    expect(gate.usage('acct:c1')).toBeNull();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('raising a cap serves waiters that now fit', async () => {
    const clock = new FakeClock();
    const gate = new CompositeGate(clock);
    gate.tryAcquire([acct(1)]);
    const p = track(gate.acquire([acct(1)], { deadline: clock.now() + 1000, maxWaiting: 10, signal: never() }));
    gate.setCap('acct:c1', 2);
    await flush();
    expect(p.value?.kind).toBe('granted');
    // A request that reads a higher cap from configuration raises it too, and fits at once.
    const q = await gate.acquire([acct(3)], { deadline: clock.now() + 1000, maxWaiting: 10, signal: never() });
    expect(q.kind).toBe('granted');
    expect(gate.usage('acct:c1')).toEqual({ held: 3, waiting: 0, cap: 3 });
  });

  it('a released slot goes to a waiter whose every stage fits, skipping one still blocked', async () => {
    const clock = new FakeClock();
    const gate = new CompositeGate(clock);
    const a = gate.tryAcquire([acct(2), model('x', 1)])!;
    const b = gate.tryAcquire([acct(2), model('y', 1)])!;
    const wantsX = track(gate.acquire([acct(2), model('x', 1)], { deadline: clock.now() + 1000, maxWaiting: 10, signal: never() }));
    const wantsZ = track(gate.acquire([acct(2), model('z', 1)], { deadline: clock.now() + 1000, maxWaiting: 10, signal: never() }));
    b(); // frees an account slot, but x is still held by a
    await flush();
    expect(wantsX.status).toBe('pending');
    expect(wantsZ.value?.kind).toBe('granted');
    a(); // frees x and an account slot
    await flush();
    expect(wantsX.value?.kind).toBe('granted');
    expect(gate.usage('acct:c1')).toEqual({ held: 2, waiting: 0, cap: 2 });
  });

  it('dismissAll lets every waiter go without a slot; close rejects them', async () => {
    const clock = new FakeClock();
    const gate = new CompositeGate(clock);
    gate.tryAcquire([acct(1)]);
    const p = track(gate.acquire([acct(1)], { deadline: clock.now() + 1000, maxWaiting: 10, signal: never() }));
    gate.dismissAll();
    await flush();
    expect(p.value).toEqual({ kind: 'dismissed' });
    const q = track(gate.acquire([acct(1)], { deadline: clock.now() + 1000, maxWaiting: 10, signal: never() }));
    gate.close(new Error('stopping'));
    await flush();
    expect(q.status).toBe('rejected');
  });
});
