// The cooldown manager's REST API (§3b) and the push events the dashboard receives.
import { describe, expect, it } from 'vitest';
import type { EventPayload } from '../../../src/shared/contract';
import { accountLimited, anthropicError, ask, cooldownOf, unavailable, rigPerTest } from './support';

const KA = 'sk-ant-key-aaaaaaaaaaaa';
const KB = 'sk-ant-key-bbbbbbbbbbbb';
const KG = 'sk-glm-key-gggggggggggg';
const KH = 'sk-glm-key-hhhhhhhhhhhh';

describe('cooldown manager', () => {
  const { fake, startRig } = rigPerTest();

  /** Four connections: A (cooling), B (banned), G and H (glm, both cooling), plus a lockout on A. */
  const setUp = async () => {
    const r = await startRig();
    const a = await r.add('Key A', KA, { priority: 1 });
    const b = await r.add('Key B', KB, { priority: 2 });
    const g = await r.add('GLM G', KG, { kind: 'anthropic-compatible', provider: 'glm' });
    const h = await r.add('GLM H', KH, { kind: 'anthropic-compatible', provider: 'glm' });
    await r.t.api.patchResilience({ patch: { modelLockout: { enabled: true } } });
    const invalidKey = anthropicError(401, 'authentication_error', 'invalid x-api-key');
    fake.script({ key: KB }, [anthropicError(403, 'permission_error', 'This account has been banned.')]);
    fake.script({ key: KA, model: 'model-x' }, [anthropicError(404, 'not_found_error', 'model: model-x')]);
    fake.script({ key: KA, model: 'model-y' }, [invalidKey]);
    fake.script({ key: KG }, [invalidKey]);
    fake.script({ key: KH }, [invalidKey]);
    await ask(r.client, 'model-x'); // A: model-x locked (404), then B: banned
    await ask(r.client, 'model-y'); // A: 401 -> cooling
    await ask(r.client, 'glm/glm-4.6'); // G and H: 401 -> cooling
    return { r, a, b, g, h };
  };

  it('lists status, remaining cooldown, backoff level, last error type, lockouts and terminal states, never a credential', async () => {
    const { r, a, b, g } = await setUp();
    const view = await r.t.api.listCooldowns({});
    expect(view.now).toBe(r.clock.now());
    const byName = Object.fromEntries(view.connections.map((c) => [c.name, c]));
    expect(byName['Key A']).toMatchObject({ connectionId: a.id, status: 'cooling', remainingMs: 3_000, backoffLevel: 1, lastErrorType: 'auth_error', terminal: false });
    expect(byName['Key A']!.lockouts).toEqual([expect.objectContaining({ model: 'model-x', reason: 'not_found', scope: 'exact' })]);
    expect(byName['Key B']).toMatchObject({ connectionId: b.id, status: 'banned', terminal: true, lastErrorType: 'banned' });
    expect(byName['GLM G']).toMatchObject({ connectionId: g.id, status: 'cooling', provider: 'glm' });
    const raw = JSON.stringify(view);
    for (const k of [KA, KB, KG, KH]) expect(raw).not.toContain(k.slice(4));

    const glm = await r.t.api.listCooldowns({ provider: 'glm' });
    expect(glm.connections.map((c) => c.name)).toEqual(['GLM G', 'GLM H']);
    const res = await fetch(`${r.t.managementUrl}/api/resilience/cooldowns?provider=glm`, { headers: { authorization: `Bearer ${r.t.token}` } });
    expect(((await res.json()) as { connections: unknown[] }).connections).toHaveLength(2);
  });

  it('clears one connection: its cooldown and its lockouts, nothing else', async () => {
    const { r, a, g } = await setUp();
    const result = await r.t.api.clearCooldowns({ connectionIds: [a.id] });
    expect(result).toEqual({ cleared: [a.id], unchanged: [], skippedTerminal: [], lockoutsCleared: 1, pausesLifted: 0, remaining: [] });
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'active', backoffLevel: 0, lockouts: [] });
    expect((await cooldownOf(r.t, g.id)).status).toBe('cooling');
    fake.reset();
    expect((await ask(r.client, 'model-x')).selected).toBe(a.id);
  });

  it('clears all connections of a provider', async () => {
    const { r, a, g, h } = await setUp();
    const result = await r.t.api.clearCooldowns({ all: true, provider: 'glm' });
    expect(result.cleared.sort()).toEqual([g.id, h.id].sort());
    expect(result.skippedTerminal).toEqual([]);
    expect((await cooldownOf(r.t, a.id)).status).toBe('cooling');
    expect((await cooldownOf(r.t, g.id)).status).toBe('active');
  });

  it('never clears a terminal state and reports it under skippedTerminal', async () => {
    const { r, a, b, g, h } = await setUp();
    const result = await r.t.api.clearCooldowns({ all: true });
    expect(result.skippedTerminal).toEqual([b.id]);
    expect(result.cleared.sort()).toEqual([a.id, g.id, h.id].sort());
    expect(await cooldownOf(r.t, b.id)).toMatchObject({ status: 'banned', terminal: true });
    const again = await r.t.api.clearCooldowns({ connectionIds: [a.id, b.id] });
    expect(again).toEqual({ cleared: [], unchanged: [a.id], skippedTerminal: [b.id], lockoutsCleared: 0, pausesLifted: 0, remaining: [] });
  });

  it('refuses unknown connections and providers without clearing anything', async () => {
    const { r, a } = await setUp();
    expect(await r.t.api.clearCooldowns({ connectionIds: [a.id, 'nope'] }).catch((e: unknown) => e)).toMatchObject({ code: 'not_found' });
    expect((await cooldownOf(r.t, a.id)).status).toBe('cooling');
    expect(await r.t.api.clearCooldowns({ all: true, provider: 'nope' }).catch((e: unknown) => e)).toMatchObject({ code: 'not_found' });
    const res = await fetch(`${r.t.managementUrl}/api/resilience/cooldowns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${r.t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ all: false }),
    });
    expect(res.status).toBe(400);
  });

  it('pushes a resilience event when a connection cools and when a breaker moves', async () => {
    const r = await startRig();
    const a = await r.add('Key A', KA);
    const events: EventPayload<'resilience'>[] = [];
    const health: EventPayload<'health'>[] = [];
    const offR = r.t.api.on('resilience', (p) => events.push(p));
    const offH = r.t.api.on('health', (p) => health.push(p));
    try {
      await fake.waitFor(() => events.length > 0 && health.length > 0);
      fake.script({ key: KA }, [accountLimited()]);
      await ask(r.client);
      r.clock.advance(300);
      await fake.waitFor(() => events.some((e) => e.cooldowns.connections.some((c) => c.connectionId === a.id && c.status === 'cooling')));
      await r.t.api.clearCooldowns({ all: true });
      fake.reset();
      fake.script({ key: KA }, [unavailable()]);
      for (let i = 0; i < 7; i++) await ask(r.client);
      r.clock.advance(300);
      await fake.waitFor(() => health.some((h) => h.breakers.some((b) => b.provider === 'anthropic' && b.state === 'DEGRADED')));
    } finally {
      offR();
      offH();
    }
  });
});
