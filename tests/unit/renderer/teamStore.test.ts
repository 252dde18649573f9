// The dashboard's team store (renderer/stores/teamStore.ts): the view follows the `team` push and
// is read on start; a refused save keeps the engine's words for the page; `managedOwner` names the
// publisher of what the team manages here.
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import type { TeamView } from '../../../src/shared/team';
import { managedOwner } from '../../../src/renderer/stores/teamStore';
import { fakeBridge, testDashboard } from './fakeBridge';

const following = (over: Partial<TeamView['managed']> = {}): TeamView => ({
  enabled: true,
  instanceId: 'B',
  status: { state: 'connected', since: 1, reason: null, pendingWrites: 0 },
  settings: {
    address: { value: 'redis://r:6379', source: 'env', setBy: 'SWITCHYARD_REDIS_URL', saved: null },
    team: { value: 'acme', source: 'env', setBy: 'SWITCHYARD_TEAM', saved: null },
    key: { set: true, source: 'saved', setBy: null, masked: '…abcd', fingerprint: 'ABCD-1234' },
    role: { value: 'follow', source: 'saved', setBy: null, saved: 'follow' },
    displayName: { value: 'Bob', source: 'saved', setBy: null, saved: 'Bob' },
    restartNeeded: null,
  },
  config: { state: 'following', message: null, publisher: { name: 'Alice', instanceId: 'A', revision: 3, publishedAt: 5 }, appliedAt: 6, appliedRevision: 3 },
  managed: { owner: 'Alice', connections: ['c1'], combos: ['k1'], mappings: [], settings: ['proxy.maxAttempts'], ...over },
});

describe('the team store', () => {
  it('reads the view on start and follows the team push', async () => {
    const bridge = fakeBridge();
    const { dash } = testDashboard(bridge);
    await dash.start();
    expect(dash.team.getState().view?.status.state).toBe('off');
    bridge.emit('team', following());
    expect(dash.team.getState().view?.config.state).toBe('following');
    dash.stop();
  });

  it('keeps a refused change in words for the page, and clears it when asked', async () => {
    const bridge = fakeBridge();
    bridge.updateTeamSettings.mockRejectedValueOnce(new BridgeError('invalid_input', 'This is not a team key: paste the whole key.', 'key'));
    const { dash } = testDashboard(bridge);
    await dash.start();
    expect(await dash.team.getState().save({ key: 'nope' }, 'key')).toBe(false);
    expect(dash.team.getState().errors.key).toBe('This is not a team key: paste the whole key.');
    expect(dash.team.getState().busy).toBeNull();
    dash.team.getState().clearError('key');
    expect(dash.team.getState().errors.key).toBeUndefined();
    bridge.updateTeamSettings.mockResolvedValueOnce(following());
    expect(await dash.team.getState().save({ role: 'follow' }, 'role')).toBe(true);
    expect(dash.team.getState().view?.settings.role.value).toBe('follow');
    dash.stop();
  });

  it('names the publisher of what the team manages, and nobody for this instance’s own', () => {
    const v = following();
    expect(managedOwner(v, 'connections', 'c1')).toBe('Alice');
    expect(managedOwner(v, 'connections', 'mine')).toBeNull();
    expect(managedOwner(v, 'settings', 'proxy.maxAttempts')).toBe('Alice');
    expect(managedOwner(following({ owner: null }), 'connections', 'c1')).toBeNull();
    expect(managedOwner(null, 'combos', 'k1')).toBeNull();
  });
});
