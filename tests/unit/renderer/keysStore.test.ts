// Client keys store: create shows the new key, reveal asks the engine once, revoke re-reads.
import { describe, expect, it } from 'vitest';
import type { ClientKeyView } from '../../../src/shared/model';
import { activeKeys } from '../../../src/renderer/stores/keysStore';
import { testDashboard } from './fakeBridge';

const key = (p: Partial<ClientKeyView> = {}): ClientKeyView => ({ id: 'k1', name: 'Default', masked: 'sk-sy-ab…cd', createdAt: 1, lastUsedAt: null, revokedAt: null, scopes: [], allowedConnections: [], ...p });

describe('keys store', () => {
  it('a created key is listed and its full value is at hand', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    bridge.createClientKey.mockResolvedValue({ key: key({ id: 'k2', name: 'CI' }), secret: 'sk-sy-full' });
    await dash.keys.getState().create('CI');
    expect(dash.keys.getState().list.map((k) => k.name)).toEqual(['CI']);
    expect(dash.keys.getState().revealed.k2).toBe('sk-sy-full');
  });

  it('reveal asks the engine once and remembers the value until hidden', async () => {
    const { dash, bridge } = testDashboard();
    bridge.listClientKeys.mockResolvedValue([key()]);
    await dash.start();
    bridge.revealClientKey.mockResolvedValue({ secret: 'sk-sy-secret' });
    expect(await dash.keys.getState().reveal('k1')).toBe('sk-sy-secret');
    expect(await dash.keys.getState().reveal('k1')).toBe('sk-sy-secret');
    expect(bridge.revealClientKey).toHaveBeenCalledTimes(1);
    dash.keys.getState().hide('k1');
    expect(dash.keys.getState().revealed.k1).toBeUndefined();
  });

  it('revoke forgets the revealed value and re-reads the list', async () => {
    const { dash, bridge } = testDashboard();
    bridge.listClientKeys.mockResolvedValueOnce([key()]).mockResolvedValueOnce([key({ revokedAt: 5 })]);
    await dash.start();
    bridge.revealClientKey.mockResolvedValue({ secret: 's' });
    await dash.keys.getState().reveal('k1');
    bridge.revokeClientKey.mockResolvedValue({ revoked: true });
    expect(await dash.keys.getState().revoke('k1')).toBe(true);
    expect(dash.keys.getState().revealed.k1).toBeUndefined();
    expect(activeKeys(dash.keys.getState().list)).toEqual([]);
  });
});
