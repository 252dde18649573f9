// Connections store: form saves throw for the form, quick toggles are optimistic and roll back,
// rate-limit protection goes through its own write path, tests record their result.
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import { connection } from './builders';
import { testDashboard } from './fakeBridge';

async function started(list = [connection()]) {
  const t = testDashboard();
  t.bridge.listConnections.mockResolvedValue(list);
  await t.dash.start();
  return t;
}

describe('connections store', () => {
  it('create adds the new connection in priority order and says so', async () => {
    const { dash, bridge } = await started();
    bridge.createConnection.mockResolvedValue(connection({ id: 'c2', name: 'Zero', priority: 0 }));
    await dash.connections.getState().create({ name: 'Zero', kind: 'anthropic', secret: 'k', priority: 0 });
    expect(dash.connections.getState().list.map((c) => c.name)).toEqual(['Zero', 'Alpha']);
    expect(dash.toasts.getState().items.at(-1)?.message).toBe('Added Zero');
  });

  it('create rethrows the engine error with its field so the form can show it', async () => {
    const { dash, bridge } = await started();
    bridge.createConnection.mockRejectedValue(new BridgeError('invalid_input', 'baseUrl: must be an http:// or https:// URL', 'baseUrl'));
    await expect(dash.connections.getState().create({ name: 'x', kind: 'openai-compatible', provider: 'x' })).rejects.toMatchObject({ field: 'baseUrl' });
    expect(dash.connections.getState().list).toHaveLength(1);
    expect(dash.toasts.getState().items).toHaveLength(0);
  });

  it('a quick toggle shows at once and rolls back with a toast when the engine refuses', async () => {
    const { dash, bridge } = await started();
    let release!: () => void;
    bridge.updateConnection.mockImplementation(
      () =>
        new Promise((_, reject) => {
          release = () => reject(new BridgeError('not_found', 'connection c1 not found'));
        }),
    );
    const p = dash.connections.getState().patch('c1', { disableCooling: true }, 'cooling');
    expect(dash.connections.getState().list[0]!.disableCooling).toBe(true);
    expect(dash.connections.getState().pending.c1).toBe(true);
    release();
    expect(await p).toBe(false);
    expect(dash.connections.getState().list[0]!.disableCooling).toBe(false);
    expect(dash.connections.getState().pending.c1).toBeUndefined();
    expect(dash.toasts.getState().items.at(-1)?.message).toBe('Could not change cooling of Alpha: connection c1 not found');
  });

  it('the Claude toggles are saved inside providerSpecificData, keeping its other fields', async () => {
    const { dash, bridge } = await started([connection({ providerSpecificData: { organizationUUID: 'org-1' } })]);
    bridge.updateConnection.mockImplementation(async ({ patch }) => connection({ providerSpecificData: patch.providerSpecificData }));
    const psd = dash.connections.getState().list[0]!.providerSpecificData;
    await dash.connections.getState().patch('c1', { providerSpecificData: { ...psd, lowPriorityMode: true } }, 'the low-priority lane');
    expect(bridge.updateConnection).toHaveBeenCalledWith({ id: 'c1', patch: { providerSpecificData: { organizationUUID: 'org-1', lowPriorityMode: true } } });
    expect(dash.connections.getState().list[0]!.providerSpecificData.lowPriorityMode).toBe(true);
  });

  it('rate-limit protection uses its own write path, never the connection update', async () => {
    const { dash, bridge } = await started();
    bridge.setRateLimitProtection.mockResolvedValue({ connectionId: 'c1', rateLimitProtection: false, mode: 'off', protected: false, protectionSource: 'off' });
    expect(await dash.connections.getState().setRateLimitProtection('c1', 'off')).toBe(true);
    expect(bridge.setRateLimitProtection).toHaveBeenCalledWith({ connectionId: 'c1', mode: 'off' });
    expect(bridge.updateConnection).not.toHaveBeenCalled();
    expect(dash.connections.getState().list[0]).toMatchObject({ rateLimitProtection: false, rateLimitProtectionMode: 'off' });
  });

  it('saving the edit form changes protection only when it changed', async () => {
    const { dash, bridge } = await started();
    bridge.updateConnection.mockResolvedValue(connection({ name: 'Renamed' }));
    bridge.setRateLimitProtection.mockResolvedValue({ connectionId: 'c1', rateLimitProtection: true, mode: 'on', protected: true, protectionSource: 'explicit' });
    await dash.connections.getState().save('c1', { name: 'Renamed' }, 'auto');
    expect(bridge.setRateLimitProtection).not.toHaveBeenCalled();
    await dash.connections.getState().save('c1', { name: 'Renamed' }, 'on');
    expect(bridge.setRateLimitProtection).toHaveBeenCalledWith({ connectionId: 'c1', mode: 'on' });
    expect(dash.connections.getState().list[0]).toMatchObject({ name: 'Renamed', rateLimitProtection: true, rateLimitProtectionMode: 'on' });
  });

  it('a test records the result; a failed call becomes a failed result with the message', async () => {
    const { dash, bridge } = await started();
    bridge.testConnection.mockResolvedValueOnce({ ok: true, status: 200, latencyMs: 12, models: ['m'], message: 'the upstream accepted the credentials' });
    await dash.connections.getState().test('c1');
    expect(dash.connections.getState().tests.c1).toMatchObject({ running: false, result: { ok: true } });
    bridge.testConnection.mockRejectedValueOnce(new BridgeError('network_error', 'Switchyard is not reachable; is it still running?'));
    await dash.connections.getState().test('c1');
    expect(dash.connections.getState().tests.c1?.result).toMatchObject({ ok: false, message: 'Switchyard is not reachable; is it still running?' });
  });

  it('delete removes the connection and its test result', async () => {
    const { dash, bridge } = await started();
    bridge.testConnection.mockResolvedValue({ ok: true, status: 200, latencyMs: 1, models: [], message: 'ok' });
    await dash.connections.getState().test('c1');
    bridge.deleteConnection.mockResolvedValue({ deleted: true });
    expect(await dash.connections.getState().remove('c1')).toBe(true);
    expect(dash.connections.getState().list).toEqual([]);
    expect(dash.connections.getState().tests.c1).toBeUndefined();
  });
});
