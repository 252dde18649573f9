// Connection cooldown through HTTP (§2): which keys the fake upstream sees, the selected
// connection header, and what GET /api/resilience/cooldowns reports. The 429s here carry an
// account-wide signal (accountLimited), since a plain 429 rests only its model (rateLimitScope.test.ts).
import { describe, expect, it } from 'vitest';
import { ACCOUNT_WIDE, accountLimited, anthropicError, ask, cooldownOf, breakerOf, keysSeen, rateLimited, rigPerTest } from './support';

const KA = 'sk-ant-key-aaaaaaaaaaaa';
const KB = 'sk-ant-key-bbbbbbbbbbbb';
const KC = 'sk-ant-key-cccccccccccc';

describe('connection cooldown', () => {
  const { fake, startRig } = rigPerTest();

  const start = async (env: Record<string, string> = {}) => startRig({ env });

  it('a cooled target is never called: after a 429 with Retry-After: 30 on key A of three, 20 requests cost one call on A and all succeed', async () => {
    const r = await start();
    const a = await r.add('Key A', KA);
    const b = await r.add('Key B', KB);
    const c = await r.add('Key C', KC);
    fake.script({ key: KA }, [accountLimited({ 'retry-after': '30' })]);
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await ask(r.client));
    expect(answers.every((x) => x.status === 200)).toBe(true);
    expect(keysSeen(fake).filter((k) => k === KA)).toHaveLength(1);
    expect(new Set(answers.map((x) => x.selected))).toEqual(new Set([b.id, c.id]));
    const cd = await cooldownOf(r.t, a.id);
    expect(cd).toMatchObject({ status: 'cooling', remainingMs: 30_000, lastErrorType: 'rate_limit_exceeded', errorCode: '429' });
    expect((await cooldownOf(r.t, b.id)).status).toBe('active');
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
  });

  it('a 429 cools only that connection; the same request fails over to the next key', async () => {
    const r = await start();
    const a = await r.add('Key A', KA, { priority: 1 });
    const b = await r.add('Key B', KB, { priority: 2 });
    fake.script({ key: KA }, [accountLimited()]);
    const first = await ask(r.client);
    expect(first).toMatchObject({ status: 200, selected: b.id });
    expect(keysSeen(fake)).toEqual([KA, KB]);
    for (let i = 0; i < 10; i++) expect((await ask(r.client)).selected).toBe(b.id);
    expect(keysSeen(fake).filter((k) => k === KA)).toHaveLength(1);
    const view = await r.t.api.listCooldowns({});
    expect(view.connections.map((c) => [c.name, c.status])).toEqual([
      ['Key A', 'cooling'],
      ['Key B', 'active'],
    ]);
    expect((await cooldownOf(r.t, a.id)).backoffLevel).toBe(1);
  });

  it('base cooldowns are 3 s for an API key and 5 s for OAuth, and double with each repeat (3, 6, 12 s)', async () => {
    const r = await start();
    const api = await r.add('API', KA);
    const oauth = await r.add('OAuth', KB, { authClass: 'oauth', provider: 'claude' });
    fake.script({}, [accountLimited()]);
    await ask(r.client, 'anthropic/claude-x');
    expect(await cooldownOf(r.t, api.id)).toMatchObject({ remainingMs: 3_000, backoffLevel: 1 });
    await ask(r.client, 'claude/claude-x');
    expect(await cooldownOf(r.t, oauth.id)).toMatchObject({ remainingMs: 5_000, backoffLevel: 1 });

    const seen: [number, number][] = [];
    for (let i = 0; i < 2; i++) {
      r.clock.advance((await cooldownOf(r.t, api.id)).remainingMs);
      // Lazy eligibility: nobody cleared anything, and A is called again.
      const before = fake.requestsFor({ key: KA }).length;
      await ask(r.client, 'anthropic/claude-x');
      expect(fake.requestsFor({ key: KA }).length).toBe(before + 1);
      const cd = await cooldownOf(r.t, api.id);
      seen.push([cd.remainingMs, cd.backoffLevel]);
    }
    expect(seen).toEqual([
      [6_000, 2],
      [12_000, 3],
    ]);
  });

  it('the base cooldown and the number of backoff steps are editable through PATCH /api/resilience', async () => {
    const r = await start();
    const a = await r.add('Key A', KA);
    await r.t.api.patchResilience({ patch: { connectionCooldown: { apikeyBaseMs: 10_000, maxBackoffSteps: 1 } } });
    fake.script({ key: KA }, [accountLimited()]);
    const ms: number[] = [];
    for (let i = 0; i < 3; i++) {
      await ask(r.client);
      const cd = await cooldownOf(r.t, a.id);
      ms.push(cd.remainingMs);
      r.clock.advance(cd.remainingMs);
    }
    expect(ms).toEqual([10_000, 20_000, 20_000]);
  });

  it.each([
    ['Retry-After', { 'retry-after': '7' }, '', 7_000],
    ['x-ratelimit-reset', { 'x-ratelimit-reset-requests': '12s', 'x-ratelimit-remaining-requests': '0' }, '', 12_000],
    ['parseable reset text', {}, 'Rate limit reached. Please try again in 20s.', 20_000],
  ])('an API-key 429 with a %s hint cools for exactly that long', async (_n, headers, message, expected) => {
    const r = await start();
    const a = await r.add('Key A', KA);
    fake.script({ key: KA }, [accountLimited(headers as Record<string, string>, message || undefined)]);
    const answer = await ask(r.client);
    expect(answer.status).toBe(429);
    expect(Number(answer.retryAfter)).toBe(expected / 1000);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ remainingMs: expected, backoffLevel: 1 });
  });

  it('upstream hints are honoured for OAuth connections too, and can be switched off', async () => {
    const r = await start();
    const o = await r.add('OAuth', KA, { authClass: 'oauth' });
    fake.script({ key: KA }, [accountLimited({ 'retry-after': '9' })]);
    await ask(r.client);
    expect((await cooldownOf(r.t, o.id)).remainingMs).toBe(9_000);
    r.clock.advance(9_000);
    await r.t.api.patchResilience({ patch: { connectionCooldown: { useUpstreamRetryHints: false } } });
    await ask(r.client);
    expect(await cooldownOf(r.t, o.id)).toMatchObject({ remainingMs: 10_000, backoffLevel: 2 });
  });

  it('retry-delay precedence: hint > per-connection > per-provider > env global > scaled backoff', async () => {
    const r = await start({ OMNIROUTE_ROTATION_RATE_LIMIT_RESET_SECONDS: '200' });
    const a = await r.add('Key A', KA, { providerSpecificData: { rotationOverrides: { rateLimitResetSeconds: 45 } } });
    await r.t.api.patchResilience({ patch: { providerQuotaOverrides: [{ provider: 'anthropic', rateLimitCooldownSeconds: 120 }] } });
    const step = async (headers: Record<string, string>) => {
      fake.reset();
      fake.script({ key: KA }, [accountLimited(headers)]);
      await ask(r.client);
      const cd = await cooldownOf(r.t, a.id);
      r.clock.advance(cd.remainingMs);
      return [cd.remainingMs, cd.backoffLevel];
    };
    expect(await step({ 'retry-after': '7' })).toEqual([7_000, 1]);
    expect(await step({})).toEqual([45_000, 0]);
    await r.t.api.updateConnection({ id: a.id, patch: { providerSpecificData: {} } });
    expect(await step({})).toEqual([120_000, 0]);
    // "Automatic" removes the provider's value.
    await r.t.api.patchResilience({ patch: { providerQuotaOverrides: [] } });
    expect(await step({})).toEqual([200_000, 0]);
    await r.t.api.patchResilience({ patch: { rotation: { rateLimitResetSeconds: null } } });
    const settings = await r.t.api.getResilience();
    expect(settings.settings.find((s) => s.key === 'rotation.rateLimitResetSeconds')).toMatchObject({ value: 200, source: 'env' });
  });

  it('a provider retry delay outside 1-21600 s is refused with the field named, and nothing is saved', async () => {
    const r = await start();
    for (const bad of [0, 21_601]) {
      const err = await r.t.api
        .patchResilience({ patch: { providerQuotaOverrides: [{ provider: 'glm', rateLimitCooldownSeconds: bad }] } })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'invalid_input', field: 'providerQuotaOverrides' });
    }
    const dup = await r.t.api
      .patchResilience({
        patch: {
          providerQuotaOverrides: [
            { provider: 'glm', rateLimitCooldownSeconds: 60 },
            { provider: 'glm', rateLimitCooldownSeconds: 90 },
          ],
        },
      })
      .catch((e: unknown) => e);
    expect(dup).toMatchObject({ code: 'invalid_input' });
    const ok = await r.t.api.patchResilience({ patch: { providerQuotaOverrides: [{ provider: 'glm', rateLimitCooldownSeconds: 21_600 }] } });
    expect(ok.settings.find((s) => s.key === 'providerQuotaOverrides')?.value).toEqual([{ provider: 'glm', rateLimitCooldownSeconds: 21_600 }]);
  });

  it('stampede protection: ten concurrent 429s on one key bump the backoff once', async () => {
    const r = await start({ RATE_LIMIT_AUTO_ENABLE: 'false' });
    const a = await r.add('Key A', KA);
    // Every answer's body is held back until all ten requests are in flight.
    let release!: () => void;
    const allIn = new Promise<void>((res) => (release = res));
    const body = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    fake.script({ key: KA }, [{ status: 429, headers: { 'content-type': 'application/json', ...ACCOUNT_WIDE }, chunks: [{ data: body, gate: allIn }] }]);
    const pending = Array.from({ length: 10 }, () => ask(r.client));
    await fake.waitFor(() => fake.requestsFor({ key: KA }).length === 10, 10_000);
    release();
    const answers = await Promise.all(pending);
    expect(answers.map((x) => x.status)).toEqual(Array(10).fill(429));
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ backoffLevel: 1, remainingMs: 3_000 });
  });

  it('concurrency-limit 429s (incl. 并发数过高) switch to the next key at once, rest the key 1 s, keep the backoff level and spare the breaker', async () => {
    const r = await start();
    const a = await r.add('Key A', KA, { priority: 1 });
    const b = await r.add('Key B', KB, { priority: 2 });
    for (const message of ['too many concurrent requests', 'concurrency limit exceeded', 'parallel request limit', '并发数过高，请稍后再试']) {
      fake.reset();
      fake.script({ key: KA }, [anthropicError(429, 'rate_limit_error', message)]);
      const answer = await ask(r.client);
      expect(answer).toMatchObject({ status: 200, selected: b.id });
      expect(keysSeen(fake)).toEqual([KA, KB]);
      expect(await cooldownOf(r.t, a.id)).toMatchObject({ remainingMs: 1_000, backoffLevel: 0, lastErrorType: 'concurrency_limited' });
      r.clock.advance(1_000);
    }
    for (let i = 0; i < 20; i++) {
      fake.script({ key: KA }, [anthropicError(429, 'rate_limit_error', 'too many concurrent requests')]);
      await ask(r.client);
      r.clock.advance(1_000);
    }
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'CLOSED', failures: 0 });
    fake.script({ key: KA }, [anthropicError(429, 'rate_limit_error', 'too many concurrent requests', { 'retry-after': '5' })]);
    await ask(r.client);
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(5_000);
  });

  it('a quota body wins over a concurrency phrase and gets the quota cooldown', async () => {
    const r = await start();
    const a = await r.add('Key A', KA);
    fake.script({ key: KA }, [anthropicError(429, 'rate_limit_error', 'concurrency limit: you exceeded your current quota')]);
    await ask(r.client);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ lastErrorType: 'quota_exhausted', remainingMs: 3_000, backoffLevel: 1 });
  });

  it('a success clears every error field (clearAccountError)', async () => {
    const r = await start();
    const a = await r.add('Key A', KA);
    fake.script({ key: KA }, [accountLimited(), accountLimited()]);
    await ask(r.client);
    r.clock.advance(3_000);
    await ask(r.client);
    r.clock.advance(6_000);
    expect((await cooldownOf(r.t, a.id)).backoffLevel).toBe(2);
    fake.reset();
    expect((await ask(r.client)).status).toBe(200);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({
      status: 'active',
      remainingMs: 0,
      backoffLevel: 0,
      lastError: null,
      lastErrorType: null,
      errorCode: null,
    });
    const conn = await r.t.api.getConnection({ id: a.id });
    expect(conn.health).toMatchObject({ testStatus: 'active', rateLimitedUntil: null, backoffLevel: 0 });
  });

  it('a stream stall records the error on the key but sets no cooldown; with streamStallCooldown on it cools', async () => {
    const r = await start();
    const a = await r.add('Key A', KA, { priority: 1, timeouts: { idleMs: 1_000 } });
    const b = await r.add('Key B', KB, { priority: 2 });
    fake.script({ key: KA }, [{ stallAfterHeaders: true }]);
    const stream = r.client.messages.stream({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    await stream.finalMessage();
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'active', remainingMs: 0, lastErrorType: 'stream_stall', backoffLevel: 0 });
    fake.reset();
    expect((await ask(r.client)).selected).toBe(a.id);

    await r.t.api.patchResilience({ patch: { streamStallCooldown: { enabled: true } } });
    fake.script({ key: KA }, [{ stallAfterHeaders: true }]);
    await r.client.messages.stream({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'cooling', remainingMs: 3_000 });
    expect((await ask(r.client)).selected).toBe(b.id);
  });

  it('a connection with disableCooling keeps serving: its model is locked instead', async () => {
    const r = await start();
    const a = await r.add('Key A', KA, { priority: 1, disableCooling: true });
    await r.add('Key B', KB, { priority: 2 });
    fake.script({ key: KA, model: 'claude-x' }, [accountLimited()]);
    await ask(r.client, 'claude-x');
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'active', lastErrorType: 'rate_limit_exceeded' });
    const mc = await r.t.api.listModelCooldowns();
    expect(mc.lockouts).toEqual([expect.objectContaining({ connectionId: a.id, model: 'claude-x', reason: 'rate_limit_exceeded' })]);
    expect((await ask(r.client, 'claude-y')).selected).toBe(a.id);
  });
});

describe('terminal states', () => {
  const { fake, startRig } = rigPerTest();

  it('credits_exhausted is never overwritten by a later cooldown and the key stays unused', async () => {
    const rig = await startRig();
    const a = await rig.add('Key A', KA, { priority: 1 });
    await rig.add('Key B', KB, { priority: 2 });
    await rig.t.api.patchResilience({ patch: { providerQuotaOverrides: [{ provider: 'anthropic', rateLimitCooldownSeconds: 120 }] } });
    fake.script({ key: KA }, [anthropicError(400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API.')]);
    expect((await ask(rig.client)).status).toBe(200);
    expect(await cooldownOf(rig.t, a.id)).toMatchObject({ status: 'credits_exhausted', terminal: true, remainingMs: 0 });
    fake.script({ key: KA }, [rateLimited({ 'retry-after': '1' })]);
    rig.clock.advance(2_000);
    for (let i = 0; i < 5; i++) await ask(rig.client);
    expect(fake.requestsFor({ key: KA })).toHaveLength(1);
    expect(await cooldownOf(rig.t, a.id)).toMatchObject({ status: 'credits_exhausted', terminal: true });
  });

  it('a ban body makes the key banned; an Anthropic 403 "Request not allowed" never does', async () => {
    const rig = await startRig();
    const a = await rig.add('Key A', KA, { priority: 1 });
    const b = await rig.add('Key B', KB, { priority: 2 });
    fake.script({ key: KB }, [anthropicError(403, 'permission_error', 'Request not allowed')]);
    fake.script({ key: KA }, [anthropicError(403, 'permission_error', 'Your account has been suspended.')]);
    await ask(rig.client);
    expect(await cooldownOf(rig.t, a.id)).toMatchObject({ status: 'banned', terminal: true });
    const bEntry = await cooldownOf(rig.t, b.id);
    expect(bEntry.status).not.toBe('banned');
    expect(bEntry.lockouts).toEqual([expect.objectContaining({ model: 'claude-x', reason: 'request_rejected' })]);
    expect(bEntry.lockouts[0]!.expiresAt - rig.clock.now()).toBe(60_000);
  });

  it('credentials rejected three times in a row make the key expired; the first two only cool it', async () => {
    const rig = await startRig();
    const a = await rig.add('Key A', KA);
    fake.script({ key: KA }, [anthropicError(401, 'authentication_error', 'invalid x-api-key')]);
    const statuses: string[] = [];
    for (let i = 0; i < 3; i++) {
      await ask(rig.client);
      const cd = await cooldownOf(rig.t, a.id);
      statuses.push(cd.status);
      rig.clock.advance(cd.remainingMs);
    }
    expect(statuses).toEqual(['cooling', 'cooling', 'expired']);
    rig.clock.advance(3_600_000);
    const answer = await ask(rig.client);
    expect(answer).toMatchObject({ status: 404, code: 'no_executable_targets' });
    expect(fake.requestsFor({ key: KA })).toHaveLength(3);
  });

  it('a generic API-key 403 cools the key (not terminal) and never moves the breaker', async () => {
    const rig = await startRig();
    const a = await rig.add('Key A', KA);
    fake.script({ key: KA }, [anthropicError(403, 'permission_error', 'forbidden')]);
    await ask(rig.client);
    expect(await cooldownOf(rig.t, a.id)).toMatchObject({ status: 'cooling', terminal: false, lastErrorType: 'forbidden' });
    expect((await breakerOf(rig.t, 'anthropic')).state).toBe('CLOSED');
  });

  it('a passing connection test is the operator reset that lifts a terminal state', async () => {
    const rig = await startRig();
    const a = await rig.add('Key A', KA);
    fake.script({ key: KA, path: '/v1/messages' }, [anthropicError(402, 'billing_error', 'Payment required')]);
    await ask(rig.client);
    expect((await cooldownOf(rig.t, a.id)).status).toBe('credits_exhausted');
    expect((await rig.t.api.testConnection({ id: a.id })).ok).toBe(true);
    expect(await cooldownOf(rig.t, a.id)).toMatchObject({ status: 'active', terminal: false, lastErrorType: null });
  });
});
