// Execution budgets (R-RQ-05..07): a lease's signal aborts once its budget has run out (never
// before, at most a tenth later), leases of one connection ending in the same window share a
// signal, a window nobody holds any more aborts nothing, and all budgets share one clock timer.
import { describe, expect, it } from 'vitest';
import { ExecutionBudgets } from '../../../src/main/engine/admission/executionBudget';
import { FakeClock } from '../../support/fakeClock';

describe('ExecutionBudgets', () => {
  it('aborts a signal once its budget has run out, never before, with the given reason', () => {
    const clock = new FakeClock();
    const budgets = new ExecutionBudgets(clock);
    const a = budgets.start(1_000, 'c1', () => 'a expired');
    clock.advance(999);
    expect(a.signal.aborted).toBe(false);
    clock.advance(100); // the budget may end up to a tenth late
    expect(a.signal.aborted).toBe(true);
    expect(a.signal.reason).toBe('a expired');
    expect(budgets.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('keeps each lease to its own budget: a later one ends later', () => {
    const clock = new FakeClock();
    const budgets = new ExecutionBudgets(clock);
    const a = budgets.start(1_000, 'c1', () => 'a');
    clock.advance(500);
    const b = budgets.start(1_000, 'c1', () => 'b');
    expect(clock.pendingTimers()).toBe(1);
    clock.advance(600);
    expect(a.signal.aborted).toBe(true);
    expect(b.signal.aborted).toBe(false);
    clock.advance(500);
    expect(b.signal.aborted).toBe(true);
  });

  it('leases of one connection that end in the same window share a signal; other connections do not', () => {
    const clock = new FakeClock();
    const budgets = new ExecutionBudgets(clock);
    const a = budgets.start(600_000, 'c1', () => 'x');
    const b = budgets.start(600_000, 'c1', () => 'x');
    const c = budgets.start(600_000, 'c2', () => 'y');
    expect(a.signal).toBe(b.signal);
    expect(c.signal).not.toBe(a.signal);
    a.stop();
    clock.advance(601_000);
    expect(b.signal.aborted).toBe(true);
  });

  it('a shared signal takes a listener per lease without a leak warning', async () => {
    const clock = new FakeClock();
    const budgets = new ExecutionBudgets(clock);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 50; i++) budgets.start(600_000, 'c1', () => 'x').signal.addEventListener('abort', () => {});
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('every lease listening on a shared window hears its end once, with the reason; one that stopped listening does not', () => {
    const clock = new FakeClock();
    const budgets = new ExecutionBudgets(clock);
    const heard: [number, unknown][] = [];
    const leases = Array.from({ length: 40 }, (_, i) => {
      const lease = budgets.start(60_000, 'c1', () => 'c1 expired');
      const listener = () => heard.push([i, lease.signal.reason]);
      lease.signal.addEventListener('abort', listener, { once: true });
      return { lease, listener };
    });
    expect(new Set(leases.map((l) => l.lease.signal)).size).toBe(1);
    // The request whose response started stops listening (pipeline.ts's unwatch) and ends its lease.
    leases[7]!.lease.signal.removeEventListener('abort', leases[7]!.listener);
    leases[7]!.lease.stop();
    clock.advance(59_000);
    expect(heard).toEqual([]);
    clock.advance(7_000);
    expect(heard).toHaveLength(39);
    expect(heard.map(([i]) => i)).not.toContain(7);
    expect(heard.every(([, reason]) => reason === 'c1 expired')).toBe(true);
    clock.advance(60_000);
    expect(heard).toHaveLength(39);
  });

  it('a window whose leases all ended aborts nothing; only the newest one per connection is kept', () => {
    const clock = new FakeClock();
    const budgets = new ExecutionBudgets(clock);
    const a = budgets.start(1_000, 'c1', () => 'x');
    a.stop();
    a.stop();
    const again = budgets.start(1_000, 'c1', () => 'x'); // one after another: same window, same signal
    expect(again.signal).toBe(a.signal);
    again.stop();
    clock.advance(5_000);
    const later = budgets.start(1_000, 'c1', () => 'x');
    expect(later.signal).not.toBe(a.signal);
    expect(a.signal.aborted).toBe(false);
    expect(budgets.size).toBe(1);
    later.stop();
    clock.advance(10_000);
    expect(later.signal.aborted).toBe(false);
    expect(budgets.size).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('a shorter budget started later is honoured on time', () => {
    const clock = new FakeClock();
    const budgets = new ExecutionBudgets(clock);
    const long = budgets.start(10_000, 'c1', () => 'long');
    const short = budgets.start(100, 'c1', () => 'short');
    clock.advance(110);
    expect(short.signal.aborted).toBe(true);
    expect(long.signal.aborted).toBe(false);
    clock.advance(10_000);
    expect(long.signal.aborted).toBe(true);
  });
});
