// The optional provider cooldown window gate through HTTP (§1a, R-GEN-01..03).
import { describe, expect, it } from 'vitest';
import { ask, breakerOf, unavailable, rigPerTest } from './support';

const KP = 'sk-glm-pppppppppppppppp';
const KQ = 'sk-kimi-qqqqqqqqqqqqqqq';

/** The breaker is raised out of the way so only the gate could skip P. */
const RAISED_BREAKER = {
  SWITCHYARD_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD: '1000',
  SWITCHYARD_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD: '1000',
};
const GATE_3_IN_WINDOW_2S = {
  PROVIDER_COOLDOWN_ENABLED: 'true',
  OMNIROUTE_PROVIDER_BREAKER_API_KEY_FAILURE_THRESHOLD: '3',
  OMNIROUTE_PROVIDER_BREAKER_API_KEY_COOLDOWN_MS: '2000',
};

describe('provider cooldown window gate', () => {
  const { fake, startRig } = rigPerTest();

  /** Provider P (glm, tried first) and provider Q (kimi), both serving any model. */
  const start = async (env: Record<string, string>) => {
    const r = await startRig({ env });
    await r.add('P', KP, { kind: 'anthropic-compatible', provider: 'glm', priority: 1 });
    await r.add('Q', KQ, { kind: 'anthropic-compatible', provider: 'kimi', priority: 2 });
    fake.script({ key: KP }, [unavailable()]);
    return r;
  };
  const pTried = () => fake.requests.at(-1)?.key === KQ && fake.requests.at(-2)?.key === KP;

  it('is off by default: a failing provider keeps being tried first', async () => {
    const r = await start(RAISED_BREAKER);
    for (let i = 0; i < 20; i++) {
      expect((await ask(r.client)).status).toBe(200);
      expect(pTried()).toBe(true);
    }
    expect((await breakerOf(r.t, 'glm')).providerCooldownUntil).toBeNull();
  });

  it('when on, skips the provider only once the threshold is reached within the window, for the cooldown', async () => {
    const r = await start({ ...RAISED_BREAKER, ...GATE_3_IN_WINDOW_2S });
    await ask(r.client);
    await ask(r.client);
    expect(fake.requestsFor({ key: KP })).toHaveLength(2);
    await ask(r.client);
    expect(fake.requestsFor({ key: KP })).toHaveLength(3);
    expect((await breakerOf(r.t, 'glm')).providerCooldownUntil).toBe(r.clock.now() + 2_000);
    for (let i = 0; i < 5; i++) expect((await ask(r.client)).status).toBe(200);
    expect(fake.requestsFor({ key: KP })).toHaveLength(3);
    const log = (await r.t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(log.skipped).toEqual([expect.objectContaining({ connectionName: 'P', reason: 'provider_cooldown' })]);
    r.clock.advance(2_000);
    await ask(r.client);
    expect(fake.requestsFor({ key: KP })).toHaveLength(4);
  });

  it('below the threshold nothing is skipped, and a success clears the window', async () => {
    const r = await start({ ...RAISED_BREAKER, ...GATE_3_IN_WINDOW_2S });
    await ask(r.client);
    await ask(r.client);
    fake.reset();
    await ask(r.client); // P succeeds
    fake.script({ key: KP }, [unavailable()]);
    await ask(r.client);
    await ask(r.client);
    await ask(r.client);
    expect(fake.requestsFor({ key: KP })).toHaveLength(4);
  });

  it('when every target is cooling the answer is 503 all_targets_cooling_down naming provider_cooldown', async () => {
    const r = await start({ ...RAISED_BREAKER, ...GATE_3_IN_WINDOW_2S });
    for (let i = 0; i < 3; i++) await ask(r.client, 'glm/glm-4.6');
    const answer = await ask(r.client, 'glm/glm-4.6');
    expect(answer).toMatchObject({ status: 503, code: 'all_targets_cooling_down', retryAfter: '2' });
    expect(answer.diagnostics!.excluded).toEqual([expect.objectContaining({ reason: 'provider_cooldown' })]);
  });

  it('a saved false beats PROVIDER_COOLDOWN_ENABLED=true, and removing it brings the env default back', async () => {
    const r = await start({ ...RAISED_BREAKER, ...GATE_3_IN_WINDOW_2S });
    await r.t.api.patchResilience({ patch: { providerCooldown: { enabled: false } } });
    for (let i = 0; i < 5; i++) await ask(r.client);
    expect(fake.requestsFor({ key: KP })).toHaveLength(5);
    await r.t.api.patchResilience({ patch: { providerCooldown: { enabled: null } } });
    for (let i = 0; i < 5; i++) await ask(r.client);
    expect(fake.requestsFor({ key: KP })).toHaveLength(8);
  });

  it('switching it off forgets the failures it counted', async () => {
    const r = await start({ ...RAISED_BREAKER, ...GATE_3_IN_WINDOW_2S });
    for (let i = 0; i < 3; i++) await ask(r.client);
    expect((await breakerOf(r.t, 'glm')).providerCooldownUntil).not.toBeNull();
    await r.t.api.patchResilience({ patch: { providerCooldown: { enabled: false } } });
    await r.t.api.patchResilience({ patch: { providerCooldown: { enabled: true } } });
    expect((await breakerOf(r.t, 'glm')).providerCooldownUntil).toBeNull();
    await ask(r.client);
    expect(fake.requestsFor({ key: KP })).toHaveLength(4);
  });

  it('its thresholds are not the breaker’s: with the gate at 2, the breaker still opens at 12', async () => {
    const r = await start({
      PROVIDER_COOLDOWN_ENABLED: 'true',
      OMNIROUTE_PROVIDER_BREAKER_API_KEY_FAILURE_THRESHOLD: '2',
      OMNIROUTE_PROVIDER_BREAKER_API_KEY_COOLDOWN_MS: '1000',
    });
    for (let i = 0; i < 11; i++) {
      await ask(r.client, 'glm/glm-4.6');
      if (i % 2 === 1) r.clock.advance(1_000);
    }
    expect(await breakerOf(r.t, 'glm')).toMatchObject({ state: 'DEGRADED', failures: 11, failureThreshold: 12 });
    r.clock.advance(1_000);
    await ask(r.client, 'glm/glm-4.6');
    expect((await breakerOf(r.t, 'glm')).state).toBe('OPEN');
  });
});
