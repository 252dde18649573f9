// Outlier ejection through the proxy (issue 9): a key that keeps failing with 5xx or at the
// transport while a sibling key of the same provider succeeds is taken out of routing with a
// growing ejection, so a bad key costs a couple of calls, not one in three forever.
import { describe, expect, it } from 'vitest';
import { ask, breakerOf, cooldownOf, keysSeen, rateLimited, rigPerTest, unavailable, type Rig } from './support';

const K1 = 'sk-ant-key-1111111111111';
const K2 = 'sk-ant-key-2222222222222';
const K3 = 'sk-ant-key-3333333333333';

describe('outlier ejection', () => {
  const { fake, startRig } = rigPerTest();

  /** k1 rate-limited for an hour, k3 healthy; k2 is whatever the test makes it. */
  const threeKeys = async (r: Rig, k2: Parameters<Rig['add']>[2] = {}) => {
    const c1 = await r.add('Key 1', K1);
    const c2 = await r.add('Key 2', K2, k2);
    const c3 = await r.add('Key 3', K3);
    fake.script({ key: K1 }, [rateLimited({ 'retry-after': '3600' })]);
    return { c1, c2, c3 };
  };

  it('k1 cooling, k2 answering 503, k3 healthy: k2 gets at most 2 of 20 requests and every request succeeds', async () => {
    const r = await startRig();
    const { c2, c3 } = await threeKeys(r);
    fake.script({ key: K2 }, [unavailable()]);
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await ask(r.client));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.every((a) => a.selected === c3.id)).toBe(true);
    expect(keysSeen(fake).filter((k) => k === K2).length).toBeLessThanOrEqual(2);
    expect(await cooldownOf(r.t, c2.id)).toMatchObject({ status: 'cooling', lastErrorType: 'outlier_ejected', errorCode: '503', remainingMs: 10_000 });
    // One bad key is that key's problem, not the provider's.
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
  });

  it('a key whose connection is refused is ejected the same way', async () => {
    const r = await startRig();
    const { c2 } = await threeKeys(r, { baseUrl: 'http://127.0.0.1:9' });
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await ask(r.client));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const log = await r.t.api.listLogs({ limit: 50 });
    const onK2 = log.entries.flatMap((e) => e.attempts).filter((a) => a.connectionId === c2.id);
    expect(onK2.length).toBeLessThanOrEqual(2);
    expect(await cooldownOf(r.t, c2.id)).toMatchObject({ status: 'cooling', lastErrorType: 'outlier_ejected' });
  });

  it('a key that never sends response headers (headers timeout) is ejected too', async () => {
    const r = await startRig();
    const { c2 } = await threeKeys(r, { timeouts: { headersMs: 1_000 } });
    fake.script({ key: K2 }, [{ hang: true }]);
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push(await ask(r.client));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(keysSeen(fake).filter((k) => k === K2).length).toBeLessThanOrEqual(2);
    expect((await cooldownOf(r.t, c2.id)).lastErrorType).toBe('outlier_ejected');
  });

  it('the ejection grows with each ejection (10 s, 20 s, 30 s) and costs one call per period once the key is known bad', async () => {
    const r = await startRig();
    const { c2 } = await threeKeys(r);
    fake.script({ key: K2 }, [unavailable()]);
    const calls = () => keysSeen(fake).filter((k) => k === K2).length;
    for (let i = 0; i < 6; i++) await ask(r.client);
    expect(calls()).toBe(2);
    const lengths = [(await cooldownOf(r.t, c2.id)).remainingMs];
    for (let n = 0; n < 2; n++) {
      r.clock.advance(lengths[lengths.length - 1]!);
      const before = calls();
      for (let i = 0; i < 6; i++) expect((await ask(r.client)).status).toBe(200);
      expect(calls()).toBe(before + 1);
      lengths.push((await cooldownOf(r.t, c2.id)).remainingMs);
    }
    expect(lengths).toEqual([10_000, 20_000, 30_000]);
  });

  it('a success on the key resets its failure count: one 503 between successes never ejects it', async () => {
    const r = await startRig();
    const { c2 } = await threeKeys(r);
    for (let i = 0; i < 8; i++) {
      fake.script({ key: K2 }, [unavailable()], { repeatLast: false });
      await ask(r.client);
      await ask(r.client);
      await ask(r.client);
    }
    expect(keysSeen(fake).filter((k) => k === K2).length).toBeGreaterThan(4);
    expect((await cooldownOf(r.t, c2.id)).status).toBe('active');
  });

  it('the only key of a provider is never ejected (the breaker owns a provider that is down)', async () => {
    const r = await startRig();
    const a = await r.add('Only', K1);
    fake.script({ key: K1 }, [unavailable()]);
    for (let i = 0; i < 5; i++) expect((await ask(r.client)).status).toBe(503);
    expect(keysSeen(fake)).toHaveLength(5);
    expect((await cooldownOf(r.t, a.id)).status).toBe('active');
  });

  it('shows in the cooldown manager as outlier_ejected and its Clear puts the key back at once', async () => {
    const r = await startRig();
    const { c2 } = await threeKeys(r);
    fake.script({ key: K2 }, [unavailable()]);
    for (let i = 0; i < 6; i++) await ask(r.client);
    const entry = await cooldownOf(r.t, c2.id);
    expect(entry).toMatchObject({ status: 'cooling', lastErrorType: 'outlier_ejected', terminal: false });
    expect(entry.lastError).toMatch(/503/);
    const result = await r.t.api.clearCooldowns({ connectionIds: [c2.id] });
    expect(result.cleared).toEqual([c2.id]);
    expect(await cooldownOf(r.t, c2.id)).toMatchObject({ status: 'active', lastErrorType: null });
    fake.reset();
    const seen = new Set<string | null>();
    for (let i = 0; i < 3; i++) seen.add((await ask(r.client)).selected);
    expect(seen.has(c2.id)).toBe(true);
  });

  it('can be switched off (outlierEjection.enabled)', async () => {
    const r = await startRig();
    const { c2 } = await threeKeys(r);
    await r.t.api.patchResilience({ patch: { outlierEjection: { enabled: false } } });
    fake.script({ key: K2 }, [unavailable()]);
    for (let i = 0; i < 10; i++) await ask(r.client);
    expect(keysSeen(fake).filter((k) => k === K2).length).toBeGreaterThan(2);
    expect((await cooldownOf(r.t, c2.id)).status).toBe('active');
  });
});
