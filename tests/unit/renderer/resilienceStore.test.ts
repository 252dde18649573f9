// Cooldown manager actions: clear one / a selection / a provider / all, terminal states reported
// as left alone, lockouts re-enabled, breakers reset; each followed by one fresh read.
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import { describeClear } from '../../../src/renderer/stores/resilienceStore';
import { cooldownEntry, lockout } from './builders';
import { testDashboard } from './fakeBridge';

const cooling = (id: string, name: string) => cooldownEntry({ connectionId: id, name, status: 'cooling', rateLimitedUntil: 2_000_000 });

async function started() {
  const t = testDashboard();
  t.bridge.listCooldowns.mockResolvedValue({ now: 1_000_000, connections: [cooling('a', 'A'), cooling('b', 'B'), cooling('c', 'C')] });
  await t.dash.start();
  return t;
}

describe('resilience store', () => {
  it('clears the selected connections only, then drops them from the selection', async () => {
    const { dash, bridge } = await started();
    const s = dash.resilience.getState();
    s.toggleSelected('a');
    s.toggleSelected('c');
    bridge.clearCooldowns.mockResolvedValue({ cleared: ['a', 'c'], unchanged: [], skippedTerminal: [], lockoutsCleared: 0 });
    const reads = bridge.listCooldowns.mock.calls.length;
    await dash.resilience.getState().clear({ connectionIds: dash.resilience.getState().selected });
    expect(bridge.clearCooldowns).toHaveBeenCalledWith({ connectionIds: ['a', 'c'] });
    expect(dash.resilience.getState().selected).toEqual([]);
    expect(bridge.listCooldowns.mock.calls.length).toBe(reads + 1);
    expect(dash.toasts.getState().items.at(-1)).toMatchObject({ kind: 'success', message: 'Cleared 2 connections' });
  });

  it('an empty selection sends nothing', async () => {
    const { dash, bridge } = await started();
    expect(await dash.resilience.getState().clear({ connectionIds: [] })).toBeNull();
    expect(bridge.clearCooldowns).not.toHaveBeenCalled();
  });

  it('clears all of one provider, or everything', async () => {
    const { dash, bridge } = await started();
    bridge.clearCooldowns.mockResolvedValue({ cleared: ['a'], unchanged: [], skippedTerminal: [], lockoutsCleared: 1 });
    await dash.resilience.getState().clear({ all: true, provider: 'anthropic' });
    expect(bridge.clearCooldowns).toHaveBeenLastCalledWith({ all: true, provider: 'anthropic' });
    await dash.resilience.getState().clear({ all: true });
    expect(bridge.clearCooldowns).toHaveBeenLastCalledWith({ all: true });
  });

  it('says that terminal states were left as they are', () => {
    expect(describeClear({ cleared: ['a'], unchanged: [], skippedTerminal: ['t1', 't2'], lockoutsCleared: 2 })).toBe(
      'Cleared 1 connection and 2 model lockouts; 2 terminal states left as is (terminal states are never cleared here)',
    );
    expect(describeClear({ cleared: [], unchanged: ['a'], skippedTerminal: [], lockoutsCleared: 0 })).toBe('Nothing to clear');
  });

  it('a snapshot drops selected ids that no longer exist', async () => {
    const { dash, bridge } = await started();
    dash.resilience.getState().setSelected(['a', 'b']);
    bridge.emit('resilience', { now: 1, breakers: [], cooldowns: { now: 1, connections: [cooling('b', 'B')] }, lockouts: [] });
    expect(dash.resilience.getState().selected).toEqual(['b']);
  });

  it('re-enables a locked model by provider, connection and model', async () => {
    const { dash, bridge } = await started();
    bridge.clearModelCooldown.mockResolvedValue({ removed: 1, pausesLifted: 0, remaining: [] });
    expect(await dash.resilience.getState().clearLockout(lockout({ model: 'gpt-5' }))).toBe(true);
    expect(bridge.clearModelCooldown).toHaveBeenCalledWith({ provider: 'anthropic', connection: 'c1', model: 'gpt-5' });
  });

  it('resets one breaker or all of them', async () => {
    const { dash, bridge } = await started();
    bridge.resetResilience.mockResolvedValue({ providers: ['glm'], remaining: [] });
    await dash.resilience.getState().resetBreakers('glm');
    expect(bridge.resetResilience).toHaveBeenLastCalledWith({ provider: 'glm' });
    bridge.resetResilience.mockResolvedValue({ providers: ['glm', 'openai'], remaining: [] });
    await dash.resilience.getState().resetBreakers();
    expect(bridge.resetResilience).toHaveBeenLastCalledWith({});
    expect(dash.toasts.getState().items.at(-1)?.message).toBe('Reset 2 provider breakers');
  });

  it('a failed clear is a toast and leaves the state as it was', async () => {
    const { dash, bridge } = await started();
    dash.resilience.getState().setSelected(['a']);
    bridge.clearCooldowns.mockRejectedValue(new BridgeError('internal', 'database is locked'));
    expect(await dash.resilience.getState().clear({ connectionIds: ['a'] })).toBeNull();
    expect(dash.resilience.getState().selected).toEqual(['a']);
    expect(dash.resilience.getState().busy).toBe(false);
    expect(dash.toasts.getState().items.at(-1)).toMatchObject({ kind: 'error', message: 'Could not clear cooldowns: database is locked' });
  });
});

describe('what a clear reports', () => {
  it('names what it cleared and lifted, and what still holds with when it lifts', () => {
    const text = describeClear(
      {
        cleared: ['a'],
        unchanged: [],
        skippedTerminal: [],
        lockoutsCleared: 1,
        pausesLifted: 1,
        remaining: [
          { connectionId: 'a', connectionName: 'Alpha', model: null, kind: 'breaker_open', reason: 'the provider is taken out after repeated failures.', until: 1_042_000, clearedBy: 'reset' },
        ],
      },
      1_000_000,
    );
    expect(text).toBe('Cleared 1 connection and 1 model lockout and lifted 1 queue pause. Still held: Alpha: the provider is taken out after repeated failures (lifts in 42s)');
  });

  it('says when nothing was held, and never claims success for what remains', () => {
    expect(describeClear({ cleared: [], unchanged: ['a'], skippedTerminal: [], lockoutsCleared: 0 }, 0)).toBe('Nothing to clear');
    const held = describeClear(
      {
        cleared: [],
        unchanged: ['a'],
        skippedTerminal: [],
        lockoutsCleared: 0,
        remaining: [{ connectionId: 'a', connectionName: 'Alpha', model: 'm1', kind: 'terminal', reason: 'its key was rejected', until: null, clearedBy: 'person' }],
      },
      0,
    );
    expect(held).toContain('Still held: m1 on Alpha: its key was rejected (until someone acts)');
  });
});
