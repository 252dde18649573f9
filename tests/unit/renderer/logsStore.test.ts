// Request log store: live pushes, filters applied to pushes as the engine applies them to pages,
// pushes during a load kept, older pages appended.
import { describe, expect, it } from 'vitest';
import type { LogsPage } from '../../../src/shared/model';
import { matchesFilter, mergeEntries, REQUEST_ID_RE } from '../../../src/renderer/stores/logsStore';
import { logEntry } from './builders';
import { deferred, testDashboard } from './fakeBridge';

describe('logs store', () => {
  it('pushed entries go on top, newest first, one row per id', async () => {
    const { dash, bridge } = testDashboard();
    bridge.listLogs.mockResolvedValue({ entries: [logEntry({ id: 'old', startedAt: 1 })], nextBefore: null });
    await dash.start();
    bridge.emit('logs', [logEntry({ id: 'new', startedAt: 5 }), logEntry({ id: 'old', startedAt: 1, status: 500 })]);
    const entries = dash.logs.getState().entries;
    expect(entries.map((e) => e.id)).toEqual(['new', 'old']);
    expect(entries[1]!.status).toBe(500);
  });

  it('with "errors only", pushed successes are not shown', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    await dash.logs.getState().setFilter({ errorsOnly: true });
    expect(bridge.listLogs).toHaveBeenLastCalledWith({ limit: 100, errorsOnly: true });
    bridge.emit('logs', [logEntry({ id: 'ok', status: 200 }), logEntry({ id: 'bad', status: 429 })]);
    expect(dash.logs.getState().entries.map((e) => e.id)).toEqual(['bad']);
  });

  it('a connection filter matches the serving connection or any attempt', () => {
    const f = { errorsOnly: false, connectionId: 'c2' };
    expect(matchesFilter(logEntry({ connectionId: 'c2' }), f)).toBe(true);
    expect(
      matchesFilter(
        logEntry({
          connectionId: 'c1',
          attempts: [
            { attempt: 1, connectionId: 'c2', connectionName: 'B', provider: 'p', model: 'm', startedAt: 0, status: 429, errorClass: 'rate_limit_exceeded', errorCode: null, errorMessage: null, ttfbMs: null, durationMs: 1, failedOver: true, queuedMs: 0 },
          ],
        }),
        f,
      ),
    ).toBe(true);
    expect(matchesFilter(logEntry({ connectionId: 'c1' }), f)).toBe(false);
  });

  it('entries pushed while the first page loads are kept', async () => {
    const { dash, bridge } = testDashboard();
    const page = deferred<LogsPage>();
    bridge.listLogs.mockReturnValueOnce(page.promise);
    const started = dash.start();
    bridge.emit('logs', [logEntry({ id: 'live', startedAt: 10 })]);
    page.resolve({ entries: [logEntry({ id: 'stored', startedAt: 1 })], nextBefore: null });
    await started;
    expect(dash.logs.getState().entries.map((e) => e.id)).toEqual(['live', 'stored']);
  });

  it('"load older" asks for the page before the last one and appends it', async () => {
    const { dash, bridge } = testDashboard();
    bridge.listLogs.mockResolvedValueOnce({ entries: [logEntry({ id: 'a', startedAt: 9 })], nextBefore: 42 });
    await dash.start();
    bridge.listLogs.mockResolvedValueOnce({ entries: [logEntry({ id: 'b', startedAt: 3 })], nextBefore: null });
    await dash.logs.getState().loadMore();
    expect(bridge.listLogs).toHaveBeenLastCalledWith({ limit: 100, before: 42 });
    expect(dash.logs.getState().entries.map((e) => e.id)).toEqual(['a', 'b']);
    expect(dash.logs.getState().nextBefore).toBeNull();
    await dash.logs.getState().loadMore();
    expect(bridge.listLogs).toHaveBeenCalledTimes(2);
  });

  it('keeps at most the newest 2000 entries in memory', () => {
    const many = Array.from({ length: 2_100 }, (_, i) => logEntry({ id: `r${i}`, startedAt: i }));
    const merged = mergeEntries([], many);
    expect(merged).toHaveLength(2_000);
    expect(merged[0]!.id).toBe('r2099');
  });

  it('status, text, id and time-range filters go to the engine and apply to pushes the same way', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    await dash.logs.getState().setFilter({ status: 'rate_limited', search: 'robot', from: 100, to: 900, range: 'custom' });
    expect(bridge.listLogs).toHaveBeenLastCalledWith({ limit: 100, status: 'rate_limited', search: 'robot', from: 100, to: 900 });
    bridge.emit('logs', [
      logEntry({ id: 'match', status: 429, startedAt: 500, clientKeyName: 'Build robot' }),
      logEntry({ id: 'ok-status', status: 200, startedAt: 500, clientKeyName: 'Build robot' }),
      logEntry({ id: 'other-key', status: 429, startedAt: 500, clientKeyName: 'Laptop' }),
      logEntry({ id: 'too-late', status: 429, startedAt: 901, clientKeyName: 'Build robot' }),
    ]);
    expect(dash.logs.getState().entries.map((e) => e.id)).toEqual(['match']);
    await dash.logs.getState().setFilter({ status: null, search: '', from: null, to: null, range: 'all', requestId: 'req_0123456789ab000001' });
    expect(bridge.listLogs).toHaveBeenLastCalledWith({ limit: 100, requestId: 'req_0123456789ab000001' });
    bridge.emit('logs', [logEntry({ id: 'req_0123456789ab000002' }), logEntry({ id: 'req_0123456789ab000001' })]);
    expect(dash.logs.getState().entries.map((e) => e.id)).toEqual(['req_0123456789ab000001']);
  });

  it('a whole request id is searched exactly; a part of one is searched as text', () => {
    expect(REQUEST_ID_RE.test('req_0123456789ab000001')).toBe(true);
    expect(REQUEST_ID_RE.test('req_0123')).toBe(false);
    expect(REQUEST_ID_RE.test('claude-x')).toBe(false);
  });
});
