// The Overview's usage store: it reads the report and then the state timeline over the report's
// period, re-reads on a `logs` push at most once per THROTTLE_MS while the page is open (a push
// while closed makes the next opening read), re-reads on a range change, and shows a failed read.
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import type { UsageReport } from '../../../src/shared/usage';
import { THROTTLE_MS, type Schedule } from '../../../src/renderer/stores/usageStore';
import { logEntry, usageReport, usageTotals } from './builders';
import { deferred, fakeBridge, testDashboard } from './fakeBridge';

/** A hand-driven timer queue: `advance(ms)` runs what is due, in order. */
function manualTime() {
  let now = 0;
  let timers: { at: number; fn: () => void; live: boolean }[] = [];
  const schedule: Schedule = (fn, ms) => {
    const t = { at: now + ms, fn, live: true };
    timers.push(t);
    return () => {
      t.live = false;
    };
  };
  const advance = async (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      now = due.at;
      due.live = false;
      timers = timers.filter((t) => t !== due);
      due.fn();
      await flush();
    }
    now = end;
  };
  return { schedule, advance };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

async function started() {
  const time = manualTime();
  const t = testDashboard(fakeBridge(), time.schedule);
  await t.dash.start();
  return { ...t, ...time };
}

describe('usage store', () => {
  it('reads the report on start, then the state timeline over the same period', async () => {
    const { dash, bridge } = await started();
    bridge.getUsage.mockClear();
    bridge.getUsage.mockResolvedValue(usageReport({ to: 5_000_000_000, totals: usageTotals({ requests: 3, successes: 3 }) }));
    await dash.usage.getState().load();
    const s = dash.usage.getState();
    expect(bridge.getUsage).toHaveBeenCalledWith({ range: 'day' });
    expect(s.report?.totals.requests).toBe(3);
    expect(bridge.getStateTimeline).toHaveBeenLastCalledWith({ from: 5_000_000_000 - 86_400_000, to: 5_000_000_000 });
    expect(s.timeline).toEqual({ from: 5_000_000_000 - 86_400_000, to: 5_000_000_000, connections: [] });
  });

  it('re-reads on a logs push while the Overview is open, at most once per throttle window', async () => {
    const { dash, bridge, advance } = await started();
    const close = dash.usage.getState().watch();
    bridge.getUsage.mockClear();

    bridge.emit('logs', [logEntry({ id: 'r1' })]);
    await flush();
    expect(bridge.getUsage).toHaveBeenCalledTimes(1);

    // A burst inside the window: one more read when it closes, not one per push.
    for (let i = 0; i < 5; i++) bridge.emit('logs', [logEntry({ id: `r${i + 2}` })]);
    await advance(THROTTLE_MS - 1);
    expect(bridge.getUsage).toHaveBeenCalledTimes(1);
    await advance(1);
    expect(bridge.getUsage).toHaveBeenCalledTimes(2);

    // Quiet after that: no further reads.
    await advance(THROTTLE_MS * 5);
    expect(bridge.getUsage).toHaveBeenCalledTimes(2);

    // The window has closed: the next push reads at once.
    bridge.emit('logs', [logEntry({ id: 'r9' })]);
    await flush();
    expect(bridge.getUsage).toHaveBeenCalledTimes(3);
    close();
  });

  it('does not read on pushes while the Overview is closed; opening it reads once', async () => {
    const { dash, bridge } = await started();
    bridge.getUsage.mockClear();
    bridge.emit('logs', [logEntry({ id: 'r1' })]);
    bridge.emit('logs', [logEntry({ id: 'r2' })]);
    await flush();
    expect(bridge.getUsage).not.toHaveBeenCalled();
    const close = dash.usage.getState().watch();
    await flush();
    expect(bridge.getUsage).toHaveBeenCalledTimes(1);
    close();
    // Nothing new finished: opening again reads nothing.
    dash.usage.getState().watch()();
    await flush();
    expect(bridge.getUsage).toHaveBeenCalledTimes(1);
  });

  it('a range change reads that range and drops the other range\'s figures while it loads', async () => {
    const { dash, bridge } = await started();
    const slow = deferred<UsageReport>();
    bridge.getUsage.mockReturnValueOnce(slow.promise);
    const changed = dash.usage.getState().setRange('week');
    expect(dash.usage.getState().range).toBe('week');
    expect(dash.usage.getState().report).toBeNull();
    slow.resolve(usageReport({ range: 'week', totals: usageTotals({ requests: 40 }) }));
    await changed;
    expect(bridge.getUsage).toHaveBeenLastCalledWith({ range: 'week' });
    expect(dash.usage.getState().report?.range).toBe('week');
    expect(dash.usage.getState().report?.totals.requests).toBe(40);
  });

  it('an answer for the range left behind never replaces the newer range', async () => {
    const { dash, bridge } = await started();
    const old = deferred<UsageReport>();
    bridge.getUsage.mockReturnValueOnce(old.promise);
    const first = dash.usage.getState().setRange('hour');
    const second = dash.usage.getState().setRange('month');
    old.resolve(usageReport({ range: 'hour' }));
    await Promise.all([first, second]);
    expect(dash.usage.getState().report?.range).toBe('month');
  });

  it('a failed first read is kept for the page (with its retry) and shown as a toast', async () => {
    const bridge = fakeBridge();
    bridge.getUsage.mockRejectedValue(new BridgeError('http_404', 'no route for GET /api/usage', undefined, 404));
    const t = testDashboard(bridge, manualTime().schedule);
    await t.dash.start();
    expect(t.dash.usage.getState().report).toBeNull();
    expect(t.dash.loads.getState().errors.usage).toMatch(/no route/);
    expect(t.dash.toasts.getState().items.some((x) => /Could not load usage/.test(x.message))).toBe(true);

    bridge.getUsage.mockResolvedValue(usageReport());
    await t.dash.reload('usage');
    expect(t.dash.loads.getState().errors.usage).toBeUndefined();
    expect(t.dash.usage.getState().report).not.toBeNull();
  });

  it('a failed re-read keeps the figures on screen with a note, without a toast', async () => {
    const { dash, bridge } = await started();
    const toasts = dash.toasts.getState().items.length;
    bridge.getUsage.mockRejectedValueOnce(new BridgeError('network_error', 'Switchyard is not reachable'));
    await dash.usage.getState().load();
    expect(dash.usage.getState().report).not.toBeNull();
    expect(dash.usage.getState().refreshError).toMatch(/not reachable/);
    expect(dash.toasts.getState().items.length).toBe(toasts);
    await dash.usage.getState().load();
    expect(dash.usage.getState().refreshError).toBeNull();
  });

  it('a failed state timeline leaves the report in place and says why', async () => {
    const { dash, bridge } = await started();
    bridge.getStateTimeline.mockRejectedValueOnce(new BridgeError('http_404', 'no route for GET /api/usage/timeline', undefined, 404));
    await dash.usage.getState().load();
    expect(dash.usage.getState().report).not.toBeNull();
    expect(dash.usage.getState().timelineError).toMatch(/no route/);
  });
});
