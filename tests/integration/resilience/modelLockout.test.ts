// Model lockout through HTTP (§3): GET/DELETE /api/resilience/model-cooldowns, the selected
// connection header, and which models the fake upstream saw on which key.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../support/fakeClock';
import { accountLimited, anthropicError, ask, cooldownOf, rateLimited, rigPerTest, type Rig } from './support';

const KA = 'sk-ant-key-aaaaaaaaaaaa';
const KB = 'sk-ant-key-bbbbbbbbbbbb';

describe('model lockout', () => {
  const { fake, startRig } = rigPerTest();

  const start = async (enabled: boolean, provider?: string) => {
    const r = await startRig();
    const extra = provider ? { kind: 'anthropic-compatible' as const, provider } : {};
    const a = await r.add('Key A', KA, { priority: 1, ...extra });
    const b = await r.add('Key B', KB, { priority: 2, ...extra });
    if (enabled) await r.t.api.patchResilience({ patch: { modelLockout: { enabled: true } } });
    return { r, a, b };
  };
  const lockouts = async (r: Rig) => (await r.t.api.listModelCooldowns()).lockouts;

  it('is off by default: a 404 locks nothing and an account-wide 429 cools the connection, not a model', async () => {
    const { r, a } = await start(false);
    fake.script({ key: KA, model: 'model-x' }, [accountLimited()]);
    fake.script({ key: KA, model: 'model-z' }, [anthropicError(404, 'not_found_error', 'model: model-z')]);
    await ask(r.client, 'model-z');
    await ask(r.client, 'model-x');
    expect(await lockouts(r)).toEqual([]);
    expect((await cooldownOf(r.t, a.id)).status).toBe('cooling');
  });

  it('with the switch off, a plain 429 still rests its model (origin rate_limit, not the status rule)', async () => {
    const { r, a } = await start(false);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()]);
    await ask(r.client, 'model-x');
    expect(await lockouts(r)).toEqual([expect.objectContaining({ connectionId: a.id, model: 'model-x', origin: 'rate_limit' })]);
    expect((await cooldownOf(r.t, a.id)).status).toBe('active');
  });

  it('when on, a 429 locks only that model for 120 s; the connection keeps serving its other models', async () => {
    const { r, a, b } = await start(true);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()]);
    expect((await ask(r.client, 'model-x')).selected).toBe(b.id);
    const [lock] = await lockouts(r);
    expect(lock).toMatchObject({ connectionId: a.id, connectionName: 'Key A', model: 'model-x', scope: 'family', status: 429, failureCount: 1 });
    expect(lock!.expiresAt - r.clock.now()).toBe(120_000);
    expect((await cooldownOf(r.t, a.id)).status).toBe('active');
    expect((await ask(r.client, 'model-y')).selected).toBe(a.id);
    expect((await ask(r.client, 'model-x')).selected).toBe(b.id);
    expect(fake.requestsFor({ key: KA, model: 'model-x' })).toHaveLength(1);
  });

  it('uses the errorCodes list: 403/404/429/502/503/504 lock, 500 does not', async () => {
    const { r } = await start(true);
    // Key A fails on every model while B serves: keep it in routing (no outlier ejection) for this test.
    await r.t.api.patchResilience({ patch: { outlierEjection: { enabled: false } } });
    for (const status of [403, 404, 429, 502, 503, 504, 500]) {
      fake.script({ key: KA, model: `m-${status}` }, [anthropicError(status, 'error', `status ${status}`)]);
      await ask(r.client, `m-${status}`);
    }
    expect((await lockouts(r)).map((l) => l.model).sort()).toEqual(['m-403', 'm-404', 'm-429', 'm-502', 'm-503', 'm-504']);
  });

  it('404 and 5xx lock the exact model; codex 429 locks the whole gpt-5* family, codex 502 only the one model', async () => {
    const { r, a, b } = await start(true, 'codex');
    fake.script({ key: KA, model: 'gpt-5.6-luna' }, [anthropicError(502, 'api_error', 'empty response')]);
    await ask(r.client, 'codex/gpt-5.6-luna');
    expect(await lockouts(r)).toEqual([expect.objectContaining({ model: 'gpt-5.6-luna', scope: 'exact', status: 502 })]);
    expect((await ask(r.client, 'codex/gpt-5.2')).selected).toBe(a.id);

    fake.script({ key: KA, model: 'gpt-5.1' }, [rateLimited()]);
    await ask(r.client, 'codex/gpt-5.1');
    expect((await lockouts(r)).find((l) => l.scope === 'family')).toMatchObject({ model: 'gpt-5*', connectionId: a.id });
    expect((await ask(r.client, 'codex/gpt-5.3-codex-spark')).selected).toBe(b.id);
    expect((await ask(r.client, 'codex/o3')).selected).toBe(a.id);
  });

  it('repeated failures escalate 120 s, 240 s, 480 s … and never past 30 min', async () => {
    const { r } = await start(true);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()]);
    const lengths: number[] = [];
    for (let i = 0; i < 6; i++) {
      await ask(r.client, 'model-x');
      const lock = (await lockouts(r))[0]!;
      lengths.push(lock.expiresAt - r.clock.now());
      r.clock.advance(lock.expiresAt - r.clock.now());
    }
    expect(lengths).toEqual([120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000]);
  });

  it('a success halves the count: count 1 is removed at once, so the next failure locks for 120 s again', async () => {
    const { r, a } = await start(true);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()], { repeatLast: false });
    await ask(r.client, 'model-x');
    r.clock.advance(120_000);
    expect((await ask(r.client, 'model-x')).selected).toBe(a.id); // expired: served by A, decays to 0
    expect(await lockouts(r)).toEqual([]);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()], { repeatLast: false });
    await ask(r.client, 'model-x');
    const lock = (await lockouts(r))[0]!;
    expect(lock).toMatchObject({ failureCount: 1 });
    expect(lock.expiresAt - r.clock.now()).toBe(120_000);
  });

  it('count 3, one success, one failure: the new lock is the count-2 step (240 s), not the count-4 one', async () => {
    const { r } = await start(true);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited(), rateLimited(), rateLimited()], { repeatLast: false });
    for (let i = 0; i < 3; i++) {
      await ask(r.client, 'model-x');
      const lock = (await lockouts(r))[0]!;
      r.clock.advance(lock.expiresAt - r.clock.now());
    }
    await ask(r.client, 'model-x'); // success on A
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()], { repeatLast: false });
    await ask(r.client, 'model-x');
    const lock = (await lockouts(r))[0]!;
    expect(lock.failureCount).toBe(2);
    expect(lock.expiresAt - r.clock.now()).toBe(240_000);
  });

  it('DELETE /api/resilience/model-cooldowns re-enables the model and the next request reaches A', async () => {
    const { r, a } = await start(true);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()], { repeatLast: false });
    await ask(r.client, 'model-x');
    expect(await r.t.api.clearModelCooldown({ provider: 'anthropic', connection: a.id, model: 'model-x' })).toEqual({ removed: 1, pausesLifted: 0, remaining: [] });
    expect(await lockouts(r)).toEqual([]);
    expect((await ask(r.client, 'model-x')).selected).toBe(a.id);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()], { repeatLast: false });
    await ask(r.client, 'model-x');
    expect(await r.t.api.clearModelCooldown({ provider: 'anthropic', connection: 'Key A', model: 'model-x' })).toEqual({ removed: 1, pausesLifted: 0, remaining: [] });
    const missing = await r.t.api.clearModelCooldown({ provider: 'anthropic', connection: 'nope', model: 'model-x' }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'not_found' });
  });

  it('the lockout settings are validated: the longest lockout may not be shorter than the first', async () => {
    const { r } = await start(true);
    const err = await r.t.api.patchResilience({ patch: { modelLockout: { baseCooldownMs: 600_000, maxCooldownMs: 60_000 } } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'invalid_input', field: 'modelLockout.maxCooldownMs' });
  });

  it('turning lockout off lifts the locks it made', async () => {
    const { r, a } = await start(true);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()], { repeatLast: false });
    await ask(r.client, 'model-x');
    await r.t.api.patchResilience({ patch: { modelLockout: { enabled: false } } });
    expect(await lockouts(r)).toEqual([]);
    expect((await ask(r.client, 'model-x')).selected).toBe(a.id);
  });

  it('lockouts live in memory: a restart forgets them and keeps the settings', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-lockout-'));
    const clock = new FakeClock();
    let rig: Rig | null = null;
    try {
      const first = await startRig({ clock, dataDir });
      await first.add('Key A', KA);
      await first.t.api.patchResilience({ patch: { modelLockout: { enabled: true } } });
      fake.script({ key: KA, model: 'model-x' }, [rateLimited()]);
      await ask(first.client, 'model-x');
      expect(await lockouts(first)).toHaveLength(1);
      await first.stop();
      rig = await startRig({ clock, dataDir });
      expect(await lockouts(rig)).toEqual([]);
      const s = await rig.t.api.getResilience();
      expect(s.settings.find((x) => x.key === 'modelLockout.enabled')).toMatchObject({ value: true, source: 'persisted' });
    } finally {
      await rig?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
