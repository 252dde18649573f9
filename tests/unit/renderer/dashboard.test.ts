// The dashboard's wiring: first load, pushes into the stores, a load that must not overwrite a
// newer push, resync after the live link comes back, and an unauthorized answer.
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import type { ConnectionView } from '../../../src/shared/model';
import { connection, cooldownEntry, logEntry } from './builders';
import { deferred, testDashboard } from './fakeBridge';

describe('dashboard', () => {
  it('subscribes to every push and reads each topic once on start', async () => {
    const { dash, bridge } = testDashboard();
    bridge.listConnections.mockResolvedValue([connection()]);
    await dash.start();
    for (const e of ['connections', 'resilience', 'admission', 'logs', 'settings', 'health'] as const) {
      expect(bridge.listenerCount(e)).toBe(1);
    }
    expect(dash.connections.getState().list.map((c) => c.name)).toEqual(['Alpha']);
    expect(dash.app.getState().info?.dataDir).toBe('/tmp/data');
    expect(dash.settings.getState().loaded).toBe(true);
    expect(bridge.listConnections).toHaveBeenCalledTimes(1);
  });

  it('applies pushes to the stores without calling the engine', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    const calls = bridge.listConnections.mock.calls.length;
    bridge.emit('connections', [connection({ id: 'c2', name: 'Beta', priority: 0 }), connection()]);
    bridge.emit('resilience', {
      now: 5_000_000,
      breakers: [],
      cooldowns: { now: 5_000_000, connections: [cooldownEntry({ status: 'cooling', rateLimitedUntil: 5_060_000 })] },
      lockouts: [],
    });
    bridge.emit('logs', [logEntry({ id: 'r9' })]);
    expect(dash.connections.getState().list.map((c) => c.name)).toEqual(['Beta', 'Alpha']);
    expect(dash.resilience.getState().cooldowns[0]?.rateLimitedUntil).toBe(5_060_000);
    expect(dash.logs.getState().entries.map((e) => e.id)).toEqual(['r9']);
    expect(bridge.listConnections.mock.calls.length).toBe(calls);
  });

  it('measures the engine clock offset from pushed snapshots', async () => {
    const { dash, bridge, setNow } = testDashboard();
    await dash.start();
    setNow(1_000);
    bridge.emit('resilience', { now: 61_000, breakers: [], cooldowns: { now: 61_000, connections: [] }, lockouts: [] });
    expect(dash.app.getState().clockOffsetMs).toBe(60_000);
  });

  it('a first load that finishes after a push does not overwrite the newer push', async () => {
    const { dash, bridge } = testDashboard();
    const slow = deferred<ConnectionView[]>();
    bridge.listConnections.mockReturnValueOnce(slow.promise);
    const started = dash.start();
    bridge.emit('connections', [connection({ name: 'Pushed' })]);
    slow.resolve([connection({ name: 'Stale' })]);
    await started;
    expect(dash.connections.getState().list.map((c) => c.name)).toEqual(['Pushed']);
  });

  it('reads everything again when the live link comes back after a drop', async () => {
    const { dash, bridge, status } = testDashboard();
    await dash.start();
    status('open');
    expect(bridge.listLogs).toHaveBeenCalledTimes(1);
    status('closed');
    expect(dash.app.getState().link).toBe('closed');
    status('open');
    await Promise.resolve();
    expect(bridge.listLogs).toHaveBeenCalledTimes(2);
    expect(bridge.listConnections).toHaveBeenCalledTimes(2);
    expect(dash.app.getState().link).toBe('open');
  });

  it('a refused token signs out, from the live link or from a call', async () => {
    const a = testDashboard();
    await a.dash.start();
    a.status('unauthorized');
    expect(a.onUnauthorized).toHaveBeenCalled();
    expect(a.dash.app.getState().link).toBe('unauthorized');

    const b = testDashboard();
    b.bridge.listClientKeys.mockRejectedValue(new BridgeError('unauthorized', 'missing or wrong token', undefined, 401));
    await b.dash.start();
    expect(b.onUnauthorized).toHaveBeenCalled();
    expect(b.dash.app.getState().link).toBe('unauthorized');
  });

  it('a refusal that comes back after stop does not sign out again (the gate may be judging a newer token)', async () => {
    // The first refused read opens the token gate, which stops this dashboard; the other reads of
    // its first load were still on their way. Come back refused after that, they must not reach the
    // gate: it may already say that the token typed next was not accepted.
    const { dash, bridge, onUnauthorized } = testDashboard();
    const late = deferred<never>();
    bridge.listConnections.mockReturnValue(late.promise);
    bridge.listClientKeys.mockRejectedValue(new BridgeError('unauthorized', 'missing or wrong token', undefined, 401));
    const started = dash.start();
    await new Promise((r) => setTimeout(r, 0));
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    dash.stop();
    late.reject(new BridgeError('unauthorized', 'missing or wrong token', undefined, 401));
    await started;
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
  });

  it('stop unsubscribes every push, and start can run again', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    dash.stop();
    expect(bridge.listenerCount('connections')).toBe(0);
    await dash.start();
    expect(bridge.listenerCount('connections')).toBe(1);
  });

  it('a failed load is shown as a toast with the engine message, not a stack', async () => {
    const { dash, bridge } = testDashboard();
    bridge.getSettings.mockRejectedValue(new BridgeError('internal', 'the settings table is locked'));
    await dash.start();
    expect(dash.toasts.getState().items.map((t) => t.message)).toEqual(['Could not load settings: the settings table is locked']);
  });

  it('a store read made before start waits for the connection instead of failing', async () => {
    // React runs a page's effects before its parent's, so on a direct load a page asks for its
    // data before the dashboard has connected.
    const { dash, bridge } = testDashboard();
    bridge.listErrorRules.mockResolvedValue({ builtIn: [], restatements: [], allowlists: [] } as never);
    const early = dash.bridge.listErrorRules();
    const loading = dash.settings.getState().load();
    await dash.start();
    await expect(early).resolves.toMatchObject({ builtIn: [] });
    await loading;
    expect(dash.settings.getState().loaded).toBe(true);
    expect(dash.toasts.getState().items).toEqual([]);
  });

  it('a subscription made before start hears pushes once connected, and again after a restart', async () => {
    const { dash, bridge } = testDashboard();
    const heard: number[] = [];
    dash.bridge.on('logs', (p) => heard.push(p.length));
    await dash.start();
    bridge.emit('logs', [logEntry({ id: 'r1' })]);
    dash.stop();
    await dash.start();
    bridge.emit('logs', [logEntry({ id: 'r2' }), logEntry({ id: 'r3' })]);
    expect(heard).toEqual([1, 2]);
  });
});
