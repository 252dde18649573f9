// A 429's scope follows its evidence (issue 9): without an account-wide signal it cools only that
// model on that connection (whatever the model-lockout switch says); quota wording, a unified or
// account-wide limit header, or a provider that meters per account cool the whole connection.
// Model locks honour the upstream's Retry-After.
import { describe, expect, it } from 'vitest';
import { anthropicError, ask, cooldownOf, rateLimited, rigPerTest, type Rig } from './support';

const KA = 'sk-ant-key-aaaaaaaaaaaa';
const KB = 'sk-ant-key-bbbbbbbbbbbb';

describe('rate-limit scope', () => {
  const { fake, startRig } = rigPerTest();
  const lockouts = async (r: Rig) => (await r.t.api.listModelCooldowns()).lockouts;

  it('a burst of hint-less 429s on model X leaves model Y served on the same connections', async () => {
    const r = await startRig();
    const a = await r.add('Key A', KA);
    const b = await r.add('Key B', KB);
    fake.script({ model: 'model-x' }, [rateLimited()]);
    for (let i = 0; i < 5; i++) expect((await ask(r.client, 'model-x')).status).not.toBe(200);
    const y = await ask(r.client, 'model-y');
    expect(y.status).toBe(200);
    expect([a.id, b.id]).toContain(y.selected);
    for (const c of [a, b]) {
      const e = await cooldownOf(r.t, c.id);
      expect(e).toMatchObject({ status: 'active', remainingMs: 0 });
      expect(e.lockouts).toEqual([expect.objectContaining({ model: 'model-x', origin: 'rate_limit', reason: 'rate_limit_exceeded', status: 429 })]);
    }
    expect((await lockouts(r)).map((l) => [l.connectionName, l.model, l.origin])).toEqual(
      expect.arrayContaining([
        ['Key A', 'model-x', 'rate_limit'],
        ['Key B', 'model-x', 'rate_limit'],
      ]),
    );
  });

  it('a model-scoped 429 uses the connection-cooldown durations for that model: 3 s, 6 s, 12 s, and a success clears it', async () => {
    const r = await startRig();
    await r.add('Key A', KA);
    fake.script({ model: 'model-x' }, [rateLimited()]);
    const lengths: number[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await ask(r.client, 'model-x');
      expect(answer.status).toBe(429);
      const [lock] = await lockouts(r);
      lengths.push(lock!.expiresAt - r.clock.now());
      // Another model keeps flowing meanwhile.
      expect((await ask(r.client, 'model-y')).status).toBe(200);
      r.clock.advance(lock!.expiresAt - r.clock.now());
    }
    expect(lengths).toEqual([3_000, 6_000, 12_000]);
    fake.reset();
    expect((await ask(r.client, 'model-x')).status).toBe(200);
    expect(await lockouts(r)).toEqual([]);
    fake.script({ model: 'model-x' }, [rateLimited()], { repeatLast: false });
    await ask(r.client, 'model-x');
    const [again] = await lockouts(r);
    expect(again!.expiresAt - r.clock.now()).toBe(3_000);
  });

  it('Retry-After: 3600 on a model-scoped 429 takes that model out for an hour; the connection keeps serving the others', async () => {
    const r = await startRig({ env: { RATE_LIMIT_AUTO_ENABLE: 'false' } });
    const a = await r.add('Key A', KA);
    fake.script({ model: 'model-x' }, [rateLimited({ 'retry-after': '3600' })]);
    const x = await ask(r.client, 'model-x');
    expect(x).toMatchObject({ status: 429, retryAfter: '3600' });
    const [lock] = await lockouts(r);
    expect(lock).toMatchObject({ connectionId: a.id, model: 'model-x', origin: 'rate_limit' });
    expect(lock!.expiresAt - r.clock.now()).toBe(3_600_000);
    expect((await ask(r.client, 'model-y')).selected).toBe(a.id);
    r.clock.advance(3_599_000);
    expect((await ask(r.client, 'model-x')).code).toBe('all_targets_cooling_down');
  });

  it('with model lockout on, a lock honours the upstream Retry-After (longer than the lockout step), capped at 24 h', async () => {
    const r = await startRig({ env: { RATE_LIMIT_AUTO_ENABLE: 'false' } });
    await r.add('Key A', KA);
    await r.t.api.patchResilience({ patch: { modelLockout: { enabled: true } } });
    fake.script({ model: 'model-x' }, [rateLimited({ 'retry-after': '3600' })]);
    fake.script({ model: 'model-z' }, [rateLimited({ 'retry-after': '200000' })]);
    fake.script({ model: 'model-w' }, [rateLimited({ 'retry-after': '7' })]);
    await ask(r.client, 'model-x');
    await ask(r.client, 'model-z');
    await ask(r.client, 'model-w');
    const byModel = Object.fromEntries((await lockouts(r)).map((l) => [l.model, l]));
    expect(byModel['model-x']).toMatchObject({ origin: 'status', status: 429 });
    expect(byModel['model-x']!.expiresAt - r.clock.now()).toBe(3_600_000);
    expect(byModel['model-z']!.expiresAt - r.clock.now()).toBe(86_400_000);
    // A hint shorter than the lockout step does not shorten it.
    expect(byModel['model-w']!.expiresAt - r.clock.now()).toBe(120_000);
  });

  it.each([
    ['a unified limit header', { 'anthropic-ratelimit-unified-status': 'rejected' }, undefined],
    ['a rejected unified window', { 'anthropic-ratelimit-unified-5h-status': 'rejected' }, undefined],
    ['an exhausted key-wide x-ratelimit-remaining', { 'x-ratelimit-remaining': '0' }, undefined],
    ['quota wording', {}, 'You exceeded your current quota, please check your plan and billing details.'],
    ['account-wide wording', {}, "This request would exceed your account's rate limit. Please try again later."],
  ])('%s cools the whole connection: the other model goes to the next key', async (_n, headers, message) => {
    const r = await startRig();
    const a = await r.add('Key A', KA, { priority: 1 });
    const b = await r.add('Key B', KB, { priority: 2 });
    fake.script({ key: KA, model: 'model-x' }, [rateLimited(headers as Record<string, string>, message)]);
    expect((await ask(r.client, 'model-x')).selected).toBe(b.id);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'cooling', remainingMs: 3_000, backoffLevel: 1, lockouts: [] });
    expect((await ask(r.client, 'model-y')).selected).toBe(b.id);
  });

  it('a rejected unified limit cools the connection until its reset', async () => {
    const r = await startRig();
    const a = await r.add('Key A', KA, { authClass: 'oauth' });
    const reset = Math.floor(r.clock.now() / 1000) + 7_200;
    fake.script({ key: KA }, [
      rateLimited({ 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-reset': String(reset) }),
    ]);
    const answer = await ask(r.client);
    expect(answer).toMatchObject({ status: 429, retryAfter: '7200' });
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'cooling', remainingMs: 7_200_000 });
  });

  it.each([
    ['a GLM coding-plan connection', { kind: 'anthropic-compatible' as const, provider: 'glm' }, 'glm/model-x', 'glm/model-y'],
    ['a Claude subscription (OAuth) connection', { authClass: 'oauth' as const }, 'model-x', 'model-y'],
  ])('%s meters per account: a plain 429 cools the whole connection', async (_n, extra, x, y) => {
    const r = await startRig();
    const a = await r.add('Key A', KA, extra);
    fake.script({ key: KA, model: 'model-x' }, [rateLimited()]);
    await ask(r.client, x);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'cooling', lockouts: [] });
    expect((await ask(r.client, y)).code).toBe('all_targets_cooling_down');
  });

  it('quota wording on a provider that meters quota per model (Gemini) stays with that model', async () => {
    const r = await startRig();
    const a = await r.add('Gem', KA, { kind: 'anthropic-compatible', provider: 'gemini' });
    fake.script({ key: KA, model: 'model-x' }, [anthropicError(429, 'rate_limit_error', 'Quota exceeded for metric generate_content_free_tier_requests, model: model-x')]);
    await ask(r.client, 'gemini/model-x');
    const e = await cooldownOf(r.t, a.id);
    expect(e).toMatchObject({ status: 'active' });
    expect(e.lockouts).toEqual([expect.objectContaining({ model: 'model-x', reason: 'quota_exhausted', origin: 'rate_limit' })]);
    expect((await ask(r.client, 'gemini/model-y')).selected).toBe(a.id);
  });

  it('the cooldown manager’s Clear lifts a model-scoped cooldown, and the lockout switch going off does not', async () => {
    const r = await startRig();
    const a = await r.add('Key A', KA);
    await r.t.api.patchResilience({ patch: { modelLockout: { enabled: true, errorCodes: [404] } } });
    fake.script({ model: 'model-x' }, [rateLimited()], { repeatLast: false });
    await ask(r.client, 'model-x');
    expect(await lockouts(r)).toHaveLength(1);
    await r.t.api.patchResilience({ patch: { modelLockout: { enabled: false } } });
    expect(await lockouts(r)).toHaveLength(1);
    const result = await r.t.api.clearCooldowns({ connectionIds: [a.id] });
    expect(result).toMatchObject({ cleared: [a.id], lockoutsCleared: 1 });
    expect(await lockouts(r)).toEqual([]);
    expect((await ask(r.client, 'model-x')).selected).toBe(a.id);
  });

  it('stampede protection for a model: ten concurrent hint-less 429s on one model take one backoff step', async () => {
    const r = await startRig({ env: { RATE_LIMIT_AUTO_ENABLE: 'false' } });
    await r.add('Key A', KA);
    let release!: () => void;
    const allIn = new Promise<void>((res) => (release = res));
    const body = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    fake.script({ key: KA, model: 'model-x' }, [{ status: 429, headers: { 'content-type': 'application/json' }, chunks: [{ data: body, gate: allIn }] }]);
    const pending = Array.from({ length: 10 }, () => ask(r.client, 'model-x'));
    await fake.waitFor(() => fake.requestsFor({ key: KA }).length === 10, 10_000);
    release();
    expect((await Promise.all(pending)).map((x) => x.status)).toEqual(Array(10).fill(429));
    const [lock] = await lockouts(r);
    expect(lock).toMatchObject({ origin: 'rate_limit', failureCount: 1 });
    expect(lock!.expiresAt - r.clock.now()).toBe(3_000);
  });
});
