// Model lockout (§3): scope, escalation, cap, decay on success, manual clear.
import { describe, expect, it } from 'vitest';
import { lockoutScopeForStatus } from '../../../src/main/engine/resilience/classifyFailure';
import {
  lockoutDurationMs,
  ModelLockouts,
  type LockoutSettings,
  type LockRequest,
} from '../../../src/main/engine/resilience/modelLockout';
import { quotaFamilyOf } from '../../../src/main/engine/resilience/quotaFamily';
import { FakeClock } from '../../support/fakeClock';

const DEFAULTS: LockoutSettings = { baseCooldownMs: 120_000, maxCooldownMs: 1_800_000, maxBackoffSteps: 10, useExponentialBackoff: true };

const req = (status: number, s = DEFAULTS): LockRequest => ({
  scope: lockoutScopeForStatus(status),
  reason: status === 429 ? 'rate_limit_exceeded' : 'server_error',
  status,
  origin: 'status',
  durationFor: (n) => lockoutDurationMs(n, s),
  escalationWindowMs: s.maxCooldownMs,
});

const A = { provider: 'glm', connectionId: 'A', model: 'glm-4.6' };

describe('lockout scope by status', () => {
  it('429/403/402 lock the quota family; 404 and every other status the exact model', () => {
    expect([429, 403, 402].map(lockoutScopeForStatus)).toEqual(['family', 'family', 'family']);
    expect([404, 500, 502, 503, 504].map(lockoutScopeForStatus)).toEqual(['exact', 'exact', 'exact', 'exact', 'exact']);
  });

  it('codex shares one quota across every gpt-5* model; other providers have one model per family', () => {
    expect(quotaFamilyOf('codex', 'gpt-5.1-codex')).toBe(quotaFamilyOf('codex', 'gpt-5.3-codex-spark'));
    expect(quotaFamilyOf('codex', 'o3')).toBe('o3');
    expect(quotaFamilyOf('glm', 'gpt-5')).toBe('gpt-5');
  });

  it('a codex family lock takes every gpt-5* model of that connection out; an exact 502 lock only one', () => {
    const l = new ModelLockouts(() => {});
    l.recordFailure({ provider: 'codex', connectionId: 'A', model: 'gpt-5.1' }, req(429), 0);
    expect(l.exclusion('codex', 'A', 'gpt-5.2', 1)).toMatchObject({ reason: 'model_lockout' });
    expect(l.exclusion('codex', 'A', 'o3', 1)).toBeNull();
    expect(l.exclusion('codex', 'B', 'gpt-5.2', 1)).toBeNull();

    const m = new ModelLockouts(() => {});
    m.recordFailure({ provider: 'codex', connectionId: 'A', model: 'gpt-5.6-luna' }, req(502), 0);
    expect(m.exclusion('codex', 'A', 'gpt-5.6-luna', 1)).not.toBeNull();
    expect(m.exclusion('codex', 'A', 'gpt-5.2', 1)).toBeNull();
  });
});

describe('lockout escalation', () => {
  it('first lock is 120 s; failures within the window double it; the cap is 30 min', () => {
    const clock = new FakeClock(0);
    const l = new ModelLockouts(() => {});
    const durations: number[] = [];
    for (let i = 0; i < 6; i++) {
      const e = l.recordFailure(A, req(429), clock.now());
      durations.push(e.expiresAt - clock.now());
      clock.advance(e.expiresAt - clock.now());
    }
    expect(durations).toEqual([120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000]);
  });

  it('stops escalating after maxBackoffSteps; without exponential backoff every lock is the base', () => {
    expect([1, 2, 3, 4].map((n) => lockoutDurationMs(n, { ...DEFAULTS, maxBackoffSteps: 1, maxCooldownMs: 10_000_000 }))).toEqual([
      120_000, 240_000, 240_000, 240_000,
    ]);
    expect([1, 2, 3].map((n) => lockoutDurationMs(n, { ...DEFAULTS, useExponentialBackoff: false }))).toEqual([120_000, 120_000, 120_000]);
  });

  it('a failure while the lock runs (an attempt already in flight) does not escalate', () => {
    const l = new ModelLockouts(() => {});
    const first = l.recordFailure(A, req(429), 0);
    expect(l.recordFailure(A, req(429), 1_000)).toBe(first);
  });

  it('a failure after the escalation window starts again at the base', () => {
    const l = new ModelLockouts(() => {});
    const e = l.recordFailure(A, req(429), 0);
    expect(l.recordFailure(A, req(429), e.forgetAt).failureCount).toBe(1);
  });
});

describe('lockout decay and state', () => {
  it('a success halves the count: count 1 is removed at once, even before its timer', () => {
    const l = new ModelLockouts(() => {});
    l.recordFailure(A, req(429), 0);
    l.onSuccess('glm', 'A', 'glm-4.6', 10);
    expect(l.exclusion('glm', 'A', 'glm-4.6', 10)).toBeNull();
    expect(l.recordFailure(A, req(429), 20).failureCount).toBe(1);
  });

  it('count 3, a success, then a failure gives the count-2 lock, not the count-4 one', () => {
    const clock = new FakeClock(0);
    const l = new ModelLockouts(() => {});
    for (let i = 0; i < 3; i++) {
      const e = l.recordFailure(A, req(429), clock.now());
      clock.advance(e.expiresAt - clock.now());
    }
    l.onSuccess('glm', 'A', 'glm-4.6', clock.now());
    const e = l.recordFailure(A, req(429), clock.now());
    expect(e.failureCount).toBe(2);
    expect(e.expiresAt - clock.now()).toBe(240_000);
  });

  it('a success unlocks a model whose count stays above zero', () => {
    const l = new ModelLockouts(() => {});
    l.lock(A, 60_000, 'long wait', 'queue', 0);
    l.recordFailure({ ...A, model: 'x' }, req(503), 0);
    l.onSuccess('glm', 'A', 'x', 1);
    expect(l.exclusion('glm', 'A', 'x', 1)).toBeNull();
    expect(l.exclusion('glm', 'A', 'glm-4.6', 1)).toMatchObject({ until: 60_000 });
  });

  it('lists active locks only, clears one model or a whole connection', () => {
    const l = new ModelLockouts(() => {});
    l.recordFailure(A, req(429), 0);
    l.recordFailure({ ...A, model: 'glm-4.5' }, req(404), 0);
    l.recordFailure({ ...A, connectionId: 'B' }, req(429), 0);
    expect(l.list(1).map((e) => `${e.connectionId}/${e.model}`).sort()).toEqual(['A/glm-4.5', 'A/glm-4.6', 'B/glm-4.6']);
    expect(l.clear('glm', 'A', 'glm-4.6', 1)).toBe(1);
    expect(l.clearConnection('B', 1)).toBe(1);
    expect(l.list(1).map((e) => e.model)).toEqual(['glm-4.5']);
    expect(l.list(200_000)).toEqual([]);
  });

  it('dropOrigin removes the status-rule locks and keeps the others', () => {
    const l = new ModelLockouts(() => {});
    l.recordFailure(A, req(429), 0);
    l.lock({ ...A, model: 'q' }, 60_000, 'long wait', 'queue', 0);
    l.dropOrigin('status');
    expect(l.list(1).map((e) => e.model)).toEqual(['q']);
  });
});

describe('model-scoped rate-limit cooldowns (origin rate_limit)', () => {
  const cool = (l: ModelLockouts, until: number, backoffLevel: number, now: number) =>
    l.setCooldown(A, { scope: 'family', reason: 'rate_limit_exceeded', status: 429, until, backoffLevel, failureCount: 1, seq: 0 }, now);

  it('locks only that model on that connection and says so', () => {
    const l = new ModelLockouts(() => {});
    cool(l, 3_000, 1, 0);
    expect(l.exclusion('glm', 'A', 'glm-4.6', 1_000)).toMatchObject({ reason: 'model_lockout', until: 3_000 });
    expect(l.exclusion('glm', 'A', 'glm-4.6', 1_000)!.detail).toMatch(/rate-limited on this connection/);
    expect(l.exclusion('glm', 'A', 'glm-5', 1_000)).toBeNull();
    expect(l.exclusion('glm', 'B', 'glm-4.6', 1_000)).toBeNull();
    expect(l.toView(l.list(1_000)[0]!, 'Key A')).toMatchObject({ origin: 'rate_limit', reason: 'rate_limit_exceeded', status: 429 });
  });

  it('never shortens a running cooldown, and keeps its level for the next one until a success clears it', () => {
    const l = new ModelLockouts(() => {});
    cool(l, 60_000, 1, 0);
    cool(l, 3_000, 2, 1_000);
    expect(l.entry('A', 'family', 'glm-4.6')).toMatchObject({ expiresAt: 60_000, backoffLevel: 2 });
    l.onSuccess('glm', 'A', 'glm-4.6', 70_000);
    expect(l.entry('A', 'family', 'glm-4.6')).toBeUndefined();
  });

  it('is not one of the status rule’s locks: switching the lockout off keeps it; the manager’s clear lifts it', () => {
    const l = new ModelLockouts(() => {});
    cool(l, 3_000, 1, 0);
    l.dropOrigin('status');
    expect(l.list(0)).toHaveLength(1);
    expect(l.clearConnection('A', 0)).toBe(1);
    expect(l.list(0)).toEqual([]);
  });
});

describe('a status lock honours the upstream hint', () => {
  it('an in-flight failure whose hint asks for longer extends the running lock without escalating', () => {
    const l = new ModelLockouts(() => {});
    l.recordFailure(A, req(429), 0);
    const extended = l.recordFailure(A, { ...req(429), hintUntil: 3_600_000 }, 1_000);
    expect(extended).toMatchObject({ expiresAt: 3_600_000, failureCount: 1 });
    expect(l.recordFailure(A, { ...req(429), hintUntil: 5_000 }, 2_000).expiresAt).toBe(3_600_000);
  });
});
