// The optional provider cooldown window gate (§1a).
import { describe, expect, it } from 'vitest';
import { ProviderCooldownGate, type WindowGateProfile } from '../../../src/main/engine/resilience/providerCooldownGate';
import { FakeClock } from '../../support/fakeClock';

const profile: WindowGateProfile = { failureThreshold: 3, failureWindowMs: 60_000, cooldownMs: 2_000 };

describe('provider cooldown window gate', () => {
  const gate = () => new ProviderCooldownGate(() => profile, () => {});

  it('is not cooling below the threshold; at the threshold it cools for cooldownMs, then lets the provider back', () => {
    const clock = new FakeClock();
    const g = gate();
    g.recordFailure('glm', clock.now());
    g.recordFailure('glm', clock.now());
    expect(g.exclusion('glm', clock.now())).toBeNull();
    g.recordFailure('glm', clock.now());
    expect(g.exclusion('glm', clock.now())).toMatchObject({ reason: 'provider_cooldown', until: clock.now() + 2_000 });
    clock.advance(1_999);
    expect(g.exclusion('glm', clock.now())).not.toBeNull();
    clock.advance(1);
    expect(g.exclusion('glm', clock.now())).toBeNull();
  });

  it('counts only failures inside the window', () => {
    const clock = new FakeClock();
    const g = gate();
    g.recordFailure('glm', clock.now());
    g.recordFailure('glm', clock.now());
    clock.advance(60_000);
    g.recordFailure('glm', clock.now());
    expect(g.exclusion('glm', clock.now())).toBeNull();
  });

  it('a success clears the window', () => {
    const g = gate();
    g.recordFailure('glm', 0);
    g.recordFailure('glm', 0);
    g.recordSuccess('glm');
    g.recordFailure('glm', 1);
    g.recordFailure('glm', 1);
    expect(g.exclusion('glm', 1)).toBeNull();
  });

  it('keeps providers apart, and reset forgets them', () => {
    const g = gate();
    for (let i = 0; i < 3; i++) g.recordFailure('glm', 0);
    expect(g.exclusion('kimi', 0)).toBeNull();
    expect(g.coolingUntil('glm', 0)).toBe(2_000);
    g.reset('glm');
    expect(g.exclusion('glm', 0)).toBeNull();
  });
});
