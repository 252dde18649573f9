// The dashboard's combo pieces: the form (reorder, checks keyed by the API's fields, the input it
// builds), live eligibility per target from the resilience snapshot, and the combos store.
import { describe, expect, it } from 'vitest';
import type { BreakerView, ComboTarget, ComboView } from '../../../src/shared/model';
import { targetEligibility } from '../../../src/renderer/lib/comboEligibility';
import { buildComboInput, emptyComboForm, emptyTarget, formFromCombo, moveTarget, type ComboForm } from '../../../src/renderer/lib/comboForm';
import { agentGuides } from '../../../src/renderer/lib/agentSetup';
import { connection, cooldownEntry } from './builders';
import { testDashboard } from './fakeBridge';

const NOW = 1_000_000;
const combo = (p: Partial<ComboView> = {}): ComboView => ({
  id: 'k1',
  name: 'pool',
  strategy: 'priority',
  targets: [{ provider: 'alpha', model: 'x', connectionId: null, weight: 1 }],
  options: {},
  createdAt: 1,
  updatedAt: 1,
  ...p,
});

describe('combo form', () => {
  const filled = (): ComboForm => ({
    ...emptyComboForm('alpha'),
    name: 'pool',
    targets: [
      { ...emptyTarget('alpha'), model: 'x' },
      { ...emptyTarget('beta'), model: 'y', weight: '3' },
      { ...emptyTarget('gamma'), model: 'z' },
    ],
  });

  it('moves a target to a new position (drag and drop, or the arrows)', () => {
    const f = filled();
    expect(moveTarget(f.targets, 2, 0).map((t) => t.model)).toEqual(['z', 'x', 'y']);
    expect(moveTarget(f.targets, 0, 1).map((t) => t.model)).toEqual(['y', 'x', 'z']);
    expect(moveTarget(f.targets, 0, 9)).toBe(f.targets);
  });

  it('builds the API input in the listed order, with options only when set', () => {
    const f = { ...filled(), noWaits: true, targetTimeoutMs: '15000' };
    const built = buildComboInput(f);
    expect(built).toEqual({
      ok: true,
      input: {
        name: 'pool',
        strategy: 'priority',
        targets: [
          { provider: 'alpha', model: 'x', weight: 1 },
          { provider: 'beta', model: 'y', weight: 3 },
          { provider: 'gamma', model: 'z', weight: 1 },
        ],
        options: { comboCooldownWaitEnabled: false, targetTimeoutMs: 15_000 },
      },
    });
  });

  it('names the field of each problem the way the API does', () => {
    const f = filled();
    f.name = 'my pool';
    f.targets[1]!.model = '';
    f.targets[2]!.weight = '0';
    f.targetTimeoutMs = '5';
    const built = buildComboInput(f);
    expect(built.ok).toBe(false);
    if (built.ok) return;
    expect(Object.keys(built.errors).sort()).toEqual(['name', 'options.targetTimeoutMs', 'targets.1.model', 'targets.2.weight']);
    expect(buildComboInput({ ...filled(), targets: [] })).toMatchObject({ ok: false, errors: { targets: expect.any(String) } });
  });

  it('round-trips a stored combo', () => {
    const c = combo({ strategy: 'reset-window', options: { resetWindowMs: 600_000, comboCooldownWaitEnabled: false } });
    const built = buildComboInput(formFromCombo(c));
    expect(built).toMatchObject({ ok: true, input: { strategy: 'reset-window', options: { resetWindowMs: 600_000, comboCooldownWaitEnabled: false } } });
  });
});

describe('target eligibility', () => {
  const t: ComboTarget = { provider: 'alpha', model: 'x', connectionId: null, weight: 1 };
  const a1 = connection({ id: 'a1', provider: 'alpha', models: ['x'], passthroughModels: false });
  const a2 = connection({ id: 'a2', provider: 'alpha', models: ['x'], passthroughModels: false });
  const none = { cooldowns: [], lockouts: [], breakers: [] as BreakerView[] };

  it('ready while any connection may be called', () => {
    expect(targetEligibility(t, [a1, a2], none, NOW)).toEqual({ kind: 'ready', connections: 2 });
  });

  it('cooling, locked or breaker open when none may: what lifts first is reported', () => {
    const cooldowns = [cooldownEntry({ connectionId: 'a1', rateLimitedUntil: NOW + 9_000, status: 'cooling' })];
    const lockouts = [{ provider: 'alpha', connectionId: 'a2', connectionName: 'A2', model: 'x', scope: 'exact' as const, reason: 'rate_limit_exceeded', origin: 'rate_limit' as const, status: 429, failureCount: 1, lockedAt: NOW, expiresAt: NOW + 4_000 }];
    expect(targetEligibility(t, [a1, a2], { ...none, cooldowns, lockouts }, NOW)).toEqual({ kind: 'locked', until: NOW + 4_000 });
    // Lazily: once the lock has passed, a2 is ready again.
    expect(targetEligibility(t, [a1, a2], { ...none, cooldowns, lockouts }, NOW + 4_000)).toEqual({ kind: 'ready', connections: 1 });
    const breakers = [{ provider: 'alpha', state: 'OPEN', halfOpenAt: NOW + 20_000 } as BreakerView];
    expect(targetEligibility(t, [a1, a2], { ...none, breakers }, NOW)).toEqual({ kind: 'breaker_open', until: NOW + 20_000 });
  });

  it('no connection when nothing serves the target; a pinned connection counts alone', () => {
    expect(targetEligibility({ ...t, model: 'other' }, [a1], none, NOW)).toEqual({ kind: 'no_connection' });
    expect(targetEligibility({ ...t, connectionId: 'a2' }, [a1, connection({ id: 'a2', enabled: false })], none, NOW)).toEqual({ kind: 'disabled' });
  });
});

describe('combos store', () => {
  it('loads combos and mappings, and follows pushes', async () => {
    const { dash, bridge } = testDashboard();
    bridge.listCombos.mockResolvedValue([combo()]);
    await dash.start();
    expect(dash.combos.getState().list.map((c) => c.name)).toEqual(['pool']);
    bridge.emit('combos', { combos: [combo(), combo({ id: 'k2', name: 'other' })], mappings: [] });
    expect(dash.combos.getState().list.map((c) => c.name)).toEqual(['pool', 'other']);
  });

  it('shows the engine’s warnings as toasts after a save', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    bridge.createCombo.mockResolvedValue({ combo: combo({ name: 'claude-sonnet-4-5' }), warnings: ['"claude-sonnet-4-5" is also a model id'] });
    await dash.combos.getState().create({ name: 'claude-sonnet-4-5', targets: [{ provider: 'alpha', model: 'x' }] });
    expect(dash.toasts.getState().items.map((t) => [t.kind, t.message])).toEqual([
      ['success', 'Created combo claude-sonnet-4-5'],
      ['info', '"claude-sonnet-4-5" is also a model id'],
    ]);
  });

  it('"Route model ids" adds the combo and the mapping it wrote, and says where the ids now go', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    const routed = combo({ id: 'r1', name: 'claude-route', targets: [{ provider: 'deepseek', model: 'deepseek-chat', connectionId: 'c1', weight: 1 }] });
    const mapping = { id: 'm1', pattern: 'claude-*', comboId: 'r1', comboName: 'claude-route', createdAt: 1, updatedAt: 1 };
    bridge.routeAgentModels.mockResolvedValue({ combo: routed, mapping, warnings: [] });
    await dash.combos.getState().routeAgent({ pattern: 'claude-*', connectionId: 'c1', model: 'deepseek-chat' });
    expect(bridge.routeAgentModels).toHaveBeenCalledWith({ pattern: 'claude-*', connectionId: 'c1', model: 'deepseek-chat' });
    expect(dash.combos.getState().list.map((c) => c.name)).toEqual(['claude-route']);
    expect(dash.combos.getState().mappings).toEqual([mapping]);
    expect(dash.toasts.getState().items.map((t) => t.message)).toEqual(['Models matching claude-* now go to deepseek-chat']);
  });

  it('keeps each combo’s test result; a failed call is a failed result', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    bridge.testCombo.mockResolvedValueOnce({ ok: true, status: 200, connectionId: 'c2', connectionName: 'Beta', servedModel: 'y', latencyMs: 12, requestId: 'r1', message: 'served by Beta' });
    await dash.combos.getState().test('k1');
    expect(dash.combos.getState().tests.k1).toMatchObject({ running: false, result: { ok: true, connectionName: 'Beta' } });
    bridge.testCombo.mockRejectedValueOnce(new Error('boom'));
    await dash.combos.getState().test('k1');
    expect(dash.combos.getState().tests.k1!.result).toMatchObject({ ok: false, message: 'boom' });
  });
});

describe('agent setup with a combo', () => {
  it('Claude Code asks for the combo through ANTHROPIC_MODEL', () => {
    const g = agentGuides({ proxyUrl: 'http://127.0.0.1:8480', key: 'k', openaiModel: 'pool', anthropicModel: 'pool', claudeModel: 'pool' });
    const claude = g.find((x) => x.id === 'claude-code')!;
    expect(claude.snippets[0]!.code).toContain('export ANTHROPIC_MODEL="pool"');
    expect(JSON.parse(claude.snippets[1]!.code).env.ANTHROPIC_MODEL).toBe('pool');
    const plain = agentGuides({ proxyUrl: 'http://127.0.0.1:8480', key: 'k', openaiModel: 'm', anthropicModel: 'm' });
    expect(plain.find((x) => x.id === 'claude-code')!.snippets[0]!.code).not.toContain('ANTHROPIC_MODEL');
  });
});
