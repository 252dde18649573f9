// Sessions and leases for their pages: read on start, kept current by the engine's pushes, re-read
// after forget and release, errors shown as toasts and kept for the page; and the sentences the request log uses for a pin or a lease.
import { describe, expect, it } from 'vitest';
import type { AffinityTrace, LeaseTrace, LeasesView, SessionsView } from '../../../src/shared/model';
import { describeAffinity, describeLease, shortSession } from '../../../src/renderer/lib/sessionWords';
import { testDashboard } from './fakeBridge';

const sessions = (ids: string[]): SessionsView => ({
  now: 1_000_000,
  ttlMs: 3_600_000,
  sessions: ids.map((id) => ({
    id,
    session: `session-${id}`,
    source: 'x-claude-code-session-id',
    clientKeyId: 'k1',
    clientKeyName: 'Default',
    comboId: null,
    comboName: null,
    target: null,
    model: 'claude-x',
    connectionId: 'c1',
    connectionName: 'Alpha',
    createdAt: 1,
    pinnedAt: 1,
    lastUsedAt: 2,
    expiresAt: 3_600_002,
  })),
});

const leases = (ids: string[]): LeasesView => ({
  now: 1_000_000,
  leases: ids.map((id) => ({
    id,
    clientKeyId: 'k1',
    clientKeyName: 'Worker',
    connectionId: 'c1',
    connectionName: 'Alpha',
    provider: 'anthropic',
    generation: 3,
    label: null,
    acquiredAt: 1,
    renewedAt: 1,
    expiresAt: 2_000_000,
    ttlMs: 300_000,
  })),
});

describe('sessions store', () => {
  it('reads pins and leases on start and follows their pushes', async () => {
    const { dash, bridge } = testDashboard();
    bridge.listSessions.mockResolvedValue(sessions(['p1']));
    bridge.listLeases.mockResolvedValue(leases(['l1']));
    await dash.start();
    expect(dash.sessions.getState().sessions?.sessions.map((s) => s.id)).toEqual(['p1']);
    expect(dash.sessions.getState().leases?.leases.map((l) => l.id)).toEqual(['l1']);
    bridge.emit('sessions', sessions(['p1', 'p2']));
    bridge.emit('leases', leases([]));
    expect(dash.sessions.getState().sessions?.sessions.map((s) => s.id)).toEqual(['p1', 'p2']);
    expect(dash.sessions.getState().leases?.leases).toEqual([]);
  });

  it('a push that lands while a read is on its way wins over the older read', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    let answer!: (v: SessionsView) => void;
    bridge.listSessions.mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)));
    const read = dash.sessions.getState().loadSessions();
    bridge.emit('sessions', sessions(['new']));
    answer(sessions(['old']));
    await read;
    expect(dash.sessions.getState().sessions?.sessions.map((s) => s.id)).toEqual(['new']);
  });

  it('a failed read is kept for the page, and a retry clears it', async () => {
    const { dash, bridge } = testDashboard();
    bridge.listLeases.mockRejectedValueOnce(new Error('the lease table is locked'));
    await dash.start();
    expect(dash.loads.getState().errors.leases).toContain('the lease table is locked');
    await dash.reload('leases');
    expect(dash.loads.getState().errors.leases).toBeUndefined();
    expect(dash.sessions.getState().leases).not.toBeNull();
  });

  it('loads pins, forgets one and reads the list again', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    bridge.listSessions.mockResolvedValueOnce(sessions(['p1', 'p2'])).mockResolvedValueOnce(sessions(['p2']));
    bridge.forgetSession.mockResolvedValue({ forgotten: true });
    await dash.sessions.getState().loadSessions();
    expect(dash.sessions.getState().sessions?.sessions.map((s) => s.id)).toEqual(['p1', 'p2']);
    expect(await dash.sessions.getState().forget('p1')).toBe(true);
    expect(bridge.forgetSession).toHaveBeenCalledWith({ id: 'p1' });
    expect(dash.sessions.getState().sessions?.sessions.map((s) => s.id)).toEqual(['p2']);
    expect(dash.toasts.getState().items.at(-1)?.message).toContain('session-p1');
  });

  it('releases a lease and reports a failure as a toast', async () => {
    const { dash, bridge } = testDashboard();
    await dash.start();
    bridge.listLeases.mockResolvedValue(leases(['l1']));
    await dash.sessions.getState().loadLeases();
    bridge.releaseLease.mockRejectedValueOnce(Object.assign(new Error('lease l1 does not exist'), { status: 404 }));
    expect(await dash.sessions.getState().release('l1')).toBe(false);
    expect(dash.toasts.getState().items.at(-1)).toMatchObject({ kind: 'error' });
    bridge.releaseLease.mockResolvedValueOnce({ released: true });
    expect(await dash.sessions.getState().release('l1')).toBe(true);
    expect(dash.toasts.getState().items.at(-1)?.message).toBe("Released Worker's lease on Alpha");
  });
});

describe('session words', () => {
  const a = (over: Partial<AffinityTrace>): AffinityTrace => ({
    session: 's',
    source: 'x-session-id',
    comboId: null,
    pinnedConnectionId: 'c1',
    pinnedConnectionName: 'Alpha',
    pin: 'followed',
    reason: null,
    result: 'kept',
    ...over,
  });

  it('says what the pin did', () => {
    expect(describeAffinity(a({}), 'Alpha')).toBe('Followed its pin to Alpha.');
    expect(describeAffinity(a({ result: 'moved' }), 'Beta')).toBe('Followed its pin to Alpha, which failed; re-pinned to Beta.');
    expect(describeAffinity(a({ pin: 'bypassed', reason: 'cooling_down', result: 'moved' }), 'Beta')).toBe('Its pin to Alpha was skipped (cooling down); re-pinned to Beta.');
    expect(describeAffinity(a({ pin: 'none', pinnedConnectionId: null, pinnedConnectionName: null, result: 'created' }), 'Beta')).toBe('New session: pinned to Beta.');
    expect(describeAffinity(a({ pin: 'not_candidate' }), 'Beta')).toContain('does not serve this model');
  });

  it('says what the lease did', () => {
    const l = (over: Partial<LeaseTrace>): LeaseTrace => ({ leaseId: 'l', generation: 4, connectionId: 'c1', connectionName: 'Alpha', result: 'held', ...over });
    expect(describeLease(l({}), 'Alpha')).toBe('Served under its exclusive lease on Alpha (generation 4).');
    expect(describeLease(l({ result: 'moved' }), 'Beta')).toContain('moved to Beta');
    expect(describeLease(l({ result: 'refused', code: 'lease_generation_stale' }), null)).toContain('lease_generation_stale');
    expect(shortSession('3f8a2c1e-7b4d-4e2a-9c61-0d5e8f7a1b23')).toBe('3f8a2c1e…7a1b23');
  });
});
