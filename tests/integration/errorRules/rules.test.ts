// Operator error rules and per-provider defaults through the proxy (SPEC §7b, R-PER-01..19,
// R-CM-05/06): written with PATCH /api/settings, observed in the cooldown manager.
import { describe, expect, it } from 'vitest';
import { ErrorRuleRegistry } from '../../../src/main/engine/resilience/errorRuleRegistry';
import { BridgeError } from '../../../src/shared/bridge';
import { ask, cooldownOf, gatewayError, rawAsk, rulesRigPerTest } from './support';

const KA = 'sk-provider-aaaaaaaaaaaa';
const KB = 'sk-provider-bbbbbbbbbbbb';
const MIN = 60_000;

async function refused(p: Promise<unknown>): Promise<{ status: number; field?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof BridgeError) return { status: e.status ?? 0, field: e.field, message: e.message };
    throw e;
  }
  throw new Error('expected the patch to be refused');
}

describe('operator rules (providerErrorRules)', () => {
  const { fake, start } = rulesRigPerTest();

  it('R-CM-05/R-PER-05: a body-text rule for a provider on no allowlist fires, and its scope cools the whole connection', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorRules: [{ provider: 'acme', match: 'Key_Exhausted_For_Today', scope: 'connection', cooldownMs: 10 * MIN }] });
    fake.script({ key: KA }, [gatewayError(429, 'key_exhausted_for_today: come back tomorrow')]);
    expect((await ask(r.client, 'm')).status).toBe(429);
    const cd = await cooldownOf(r.t, a.id);
    expect(cd).toMatchObject({ status: 'cooling', remainingMs: 10 * MIN, lockouts: [] });
    expect(cd.lastError).toContain('[rule operator[0]]');
    // Without the rule the same plain 429 would only rest the model.
    await r.set({ providerErrorRules: null });
    r.clock.advance(10 * MIN);
    await ask(r.client, 'm');
    const after = await cooldownOf(r.t, a.id);
    expect(after).toMatchObject({ status: 'active', remainingMs: 0 });
    expect(after.lockouts.map((l) => l.origin)).toEqual(['rate_limit']);
  });

  it('R-PER-06: match is a literal, case-insensitive substring; a rule with neither status nor match is refused and nothing is saved', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorRules: [{ provider: 'acme', match: 'a.*b', cooldownMs: 10 * MIN }] });
    fake.script({ key: KA }, [gatewayError(503, 'a then b')]);
    await ask(r.client, 'm');
    expect((await cooldownOf(r.t, a.id)).remainingMs).not.toBe(10 * MIN);
    const bad = await refused(r.set({ providerErrorRules: [{ provider: 'acme', cooldownMs: MIN }] }));
    expect(bad).toMatchObject({ status: 400, field: 'providerErrorRules' });
    expect(bad.message).toContain('providerErrorRules[0].match');
    const saved = (await r.t.api.getSettings()).settings.find((s) => s.key === 'providerErrorRules')!;
    expect(saved.value).toEqual([{ provider: 'acme', match: 'a.*b', cooldownMs: 10 * MIN }]);
  });

  it('R-PER-07: status AND match: {status: 429, match: "x"} does not fire on a 503 whose body contains x; {match} alone fires on 429 and 403', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorRules: [{ provider: 'acme', status: 429, match: 'x', cooldownMs: 10 * MIN }] });
    fake.script({ key: KA }, [gatewayError(503, 'x marks the spot')]);
    await ask(r.client, 'm');
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'active', lastErrorType: 'server_error' });

    await r.set({ providerErrorRules: [{ provider: 'acme', match: 'insufficient_quota', cooldownMs: 10 * MIN }] });
    for (const status of [429, 403]) {
      fake.reset();
      fake.script({ key: KA }, [gatewayError(status, 'insufficient_quota')]);
      await ask(r.client, 'm');
      expect((await cooldownOf(r.t, a.id)).remainingMs, String(status)).toBe(10 * MIN);
      await r.t.api.clearCooldowns({ connectionIds: [a.id] });
    }
  });

  it('R-PER-08: the first matching rule wins (10 min before 20 min)', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({
      providerErrorRules: [
        { provider: 'acme', match: 'quota', cooldownMs: 10 * MIN },
        { provider: 'acme', status: 429, cooldownMs: 20 * MIN },
      ],
    });
    fake.script({ key: KA }, [gatewayError(429, 'quota')]);
    await ask(r.client, 'm');
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(10 * MIN);
  });

  it('R-PER-09/R-CM-06: at most 50 rules; cooldownMs up to 30 days (43,200 min) is accepted, one more minute is refused naming the rule and field', async () => {
    const r = await start();
    const rules = (n: number) => Array.from({ length: n }, (_, i) => ({ provider: 'acme', status: 429, match: `m${i}` }));
    await r.set({ providerErrorRules: rules(50) });
    const tooMany = await refused(r.set({ providerErrorRules: rules(51) }));
    expect(tooMany.message).toContain('more than 50 rules');
    await r.set({ providerErrorRules: [{ provider: 'acme', status: 429, cooldownMs: 43_200 * MIN }] });
    const tooLong = await refused(
      r.set({ providerErrorRules: [{ provider: 'acme', status: 429 }, { provider: 'acme', status: 503, cooldownMs: 43_201 * MIN }] }),
    );
    expect(tooLong).toMatchObject({ status: 400, field: 'providerErrorRules' });
    expect(tooLong.message).toBe('providerErrorRules[1].cooldownMs must be at most 30 days (2592000000 ms)');
    const saved = (await r.t.api.getSettings()).settings.find((s) => s.key === 'providerErrorRules')!;
    expect(saved.value).toEqual([{ provider: 'acme', status: 429, cooldownMs: 43_200 * MIN }]);
  });

  it('R-PER-10: a rule keeps its exact cooldown: 10 min even with Retry-After: 3600', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorRules: [{ provider: 'acme', status: 429, cooldownMs: 10 * MIN }] });
    fake.script({ key: KA }, [gatewayError(429, 'slow down', { 'retry-after': '3600' })]);
    await ask(r.client, 'm');
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(10 * MIN);
  });

  it('R-PER-17: a rule that fires while a longer cooldown runs leaves it as it is; a banned connection stays banned', async () => {
    // Two requests in flight on A: the first answer cools it for an hour, the later one matches the 10-minute rule.
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorRules: [{ provider: 'acme', match: 'brief pause', cooldownMs: 10 * MIN }] });
    fake.script({ key: KA }, [gatewayError(429, 'daily usage limit reached', { 'retry-after': '3600' }), { ...gatewayError(429, 'brief pause'), delayMs: 150 }]);
    await Promise.all([rawAsk(r.t, 'm'), rawAsk(r.t, 'm')]);
    expect(fake.requestsFor({ key: KA })).toHaveLength(2);
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(60 * MIN);

    const r2 = await start();
    const b = await r2.add('P B', 'acme', KB);
    await r2.set({ providerErrorRules: [{ provider: 'acme', match: 'brief pause', cooldownMs: 10 * MIN }] });
    fake.script({ key: KB }, [gatewayError(403, 'This account has been suspended'), { ...gatewayError(429, 'brief pause'), delayMs: 150 }]);
    await Promise.all([rawAsk(r2.t, 'm'), rawAsk(r2.t, 'm')]);
    expect(fake.requestsFor({ key: KB })).toHaveLength(2);
    expect(await cooldownOf(r2.t, b.id)).toMatchObject({ status: 'banned', terminal: true });
  });

  it('R-PER-18: the built-in credits detector wins over an operator rule that matches the same body', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorRules: [{ provider: 'acme', match: 'credit balance', cooldownMs: 10 * MIN }] });
    fake.script({ key: KA }, [gatewayError(400, 'Your credit balance is too low to access the API')]);
    await ask(r.client, 'm');
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'credits_exhausted', terminal: true });
  });

  it('R-PER-19: a rule with status 400 is valid but never fires', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorRules: [{ provider: 'acme', status: 400, cooldownMs: 10 * MIN }] });
    fake.script({ key: KA }, [gatewayError(400, 'invalid request')]);
    expect((await ask(r.client, 'm')).status).toBe(400);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'active', remainingMs: 0 });
  });

  it('rule scope "model" locks only that model, for exactly the rule\'s time; scope "provider" holds every connection of the provider', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    const b = await r.add('P B', 'acme', KB);
    await r.set({ providerErrorRules: [{ provider: 'acme', match: 'model busy', scope: 'model', cooldownMs: 5 * MIN }] });
    fake.script({ key: KA, model: 'x' }, [gatewayError(429, 'model busy')]).script({ key: KB, model: 'x' }, [gatewayError(429, 'model busy')]);
    expect((await ask(r.client, 'x')).status).toBe(429);
    const locks = await r.lockouts();
    expect(locks.map((l) => [l.connectionId, l.model, l.origin, l.expiresAt - r.clock.now()])).toEqual(
      expect.arrayContaining([
        [a.id, 'x', 'rule', 5 * MIN],
        [b.id, 'x', 'rule', 5 * MIN],
      ]),
    );
    expect((await ask(r.client, 'y')).status).toBe(200);

    await r.set({ providerErrorRules: [{ provider: 'acme', status: 503, scope: 'provider', cooldownMs: 15 * MIN }] });
    fake.reset();
    fake.script({ key: KA }, [gatewayError(503, 'maintenance')]);
    await ask(r.client, 'z');
    for (const c of [a, b]) expect((await cooldownOf(r.t, c.id)).remainingMs).toBe(15 * MIN);
  });
});

describe('per-provider defaults (providerErrorDefaults)', () => {
  const { fake, start } = rulesRigPerTest();

  it('R-PER-11: {P: {cooldownMs: 120000}} is accepted; 30000 is refused naming the provider and field', async () => {
    const r = await start();
    await r.set({ providerErrorDefaults: { acme: { cooldownMs: 120_000 } } });
    const bad = await refused(r.set({ providerErrorDefaults: { acme: { cooldownMs: 30_000 } } }));
    expect(bad.message).toBe('providerErrorDefaults.acme.cooldownMs must be at least 1 minute (60000 ms)');
  });

  it('R-PER-12: a 503 on P cools the connection ~120 s; a matching operator rule gives its own value', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorDefaults: { acme: { cooldownMs: 120_000 } } });
    fake.script({ key: KA }, [gatewayError(503, 'down')]);
    await ask(r.client, 'm');
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(120_000);
    await r.t.api.clearCooldowns({ connectionIds: [a.id] });
    await r.set({ providerErrorRules: [{ provider: 'acme', status: 503, cooldownMs: 7 * MIN }] });
    await ask(r.client, 'm');
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(7 * MIN);
  });

  it('R-PER-13: 404, 422, 400, 409, 413 and a bare 401 get no 120 s cooldown', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorDefaults: { acme: { cooldownMs: 120_000 } } });
    for (const status of [404, 422, 400, 409, 413, 401]) {
      fake.reset();
      fake.script({ key: KA }, [gatewayError(status, 'no')]);
      await ask(r.client, 'm');
      expect((await cooldownOf(r.t, a.id)).remainingMs, String(status)).not.toBe(120_000);
      await r.t.api.clearCooldowns({ connectionIds: [a.id] });
    }
  });

  it('R-PER-14/15: a default-handled 429 has the status-derived reason and cools the whole connection (scope connection)', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorDefaults: { acme: { cooldownMs: 120_000 } } });
    fake.script({ key: KA }, [gatewayError(429, 'slow down')]);
    await ask(r.client, 'm');
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'cooling', lastErrorType: 'rate_limit_exceeded', remainingMs: 120_000, lockouts: [] });
  });

  it('R-PER-16: the longer of the default and the upstream hint: Retry-After 600 → 600 s; Retry-After 5 → 120 s', async () => {
    const r = await start();
    const a = await r.add('P A', 'acme', KA);
    await r.set({ providerErrorDefaults: { acme: { cooldownMs: 120_000 } } });
    fake.script({ key: KA }, [gatewayError(429, 'slow down', { 'retry-after': '600' })]);
    await ask(r.client, 'm');
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(600_000);
    await r.t.api.clearCooldowns({ connectionIds: [a.id] });
    fake.reset();
    fake.script({ key: KA }, [gatewayError(429, 'slow down', { 'retry-after': '5' })]);
    await ask(r.client, 'm');
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(120_000);
  });
});

describe('built-in rules behind the allowlists (a registry with a test catalog)', () => {
  const { fake, start } = rulesRigPerTest();
  const registry = () =>
    new ErrorRuleRegistry({
      catalog: [
        { id: 'gw-spent', providers: ['gwtext', 'gwplain'], textMarkers: ['key spent'], reason: 'quota_exhausted', scope: 'connection', note: '' },
        { id: 'gw-429', providers: ['gwplain'], statuses: [429], reason: 'rate_limit_exceeded', scope: 'connection', note: '' },
      ],
      fullTextProviders: ['gwtext'],
      honorsScopeProviders: ['gwtext'],
    });

  it('R-PER-01/02/04: the text rule cools an allowlisted provider\'s connection; elsewhere neither the text rule nor a status rule\'s scope acts', async () => {
    const r = await start({ errorRules: registry() });
    const t = await r.add('Text', 'gwtext', KA);
    const p = await r.add('Plain', 'gwplain', KB);
    fake.script({ key: KA }, [gatewayError(429, 'key spent, try tomorrow')]).script({ key: KB }, [gatewayError(429, 'key spent, try tomorrow')]);
    await rawAsk(r.t, 'gwtext/m');
    await rawAsk(r.t, 'gwplain/m');
    expect(await cooldownOf(r.t, t.id)).toMatchObject({ status: 'cooling', lastErrorType: 'quota_exhausted' });
    expect((await cooldownOf(r.t, t.id)).lastError).toContain('[rule gw-spent]');
    // gwplain: the built-in gw-429 matches (informational), the plain 429 only rests the model.
    const plain = await cooldownOf(r.t, p.id);
    expect(plain).toMatchObject({ status: 'active', remainingMs: 0 });
    expect(plain.lockouts.map((l) => l.origin)).toEqual(['rate_limit']);
    const result = await r.t.api.testErrorRule({ provider: 'gwplain', status: 429, body: 'key spent' });
    expect(result.matched).toMatchObject({ source: 'builtin', id: 'gw-429', honored: false });
  });
});
