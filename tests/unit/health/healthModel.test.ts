// The one health model (issue 22): every layer that holds a connection or one of its models turns
// into a state, a plain reason and the time it lifts; counts come from the same states; a hold past
// its end is gone without a new push. Pure over the layer views, with the fake clock's time.
import { describe, expect, it } from 'vitest';
import { buildHealth, type HealthConnection, type HealthLayers } from '../../../src/main/engine/health/healthModel';
import { healthAt, remainingHolds } from '../../../src/shared/health';
import type { AdmissionView, BreakerView, ConnectionHealth, ModelLockoutView } from '../../../src/shared/model';
import { FakeClock } from '../../support/fakeClock';

const healthy: ConnectionHealth = {
  testStatus: 'active',
  rateLimitedUntil: null,
  backoffLevel: 0,
  lastError: null,
  lastErrorType: null,
  errorCode: null,
  lastErrorAt: null,
  lastUsedAt: null,
};

const conn = (id: string, over: Partial<HealthConnection> = {}, health: Partial<ConnectionHealth> = {}): HealthConnection => ({
  id,
  name: id.toUpperCase(),
  provider: 'openai',
  enabled: true,
  health: { ...healthy, ...health },
  ...over,
});

const breaker = (over: Partial<BreakerView>): BreakerView =>
  ({
    provider: 'openai',
    profile: 'apikey',
    state: 'CLOSED',
    failures: 0,
    degradationThreshold: 3,
    failureThreshold: 5,
    failureRatePercent: 50,
    windowOutcomes: 0,
    resetTimeoutMs: 30_000,
    openedAt: null,
    halfOpenAt: null,
    ...over,
  }) as BreakerView;

const lockout = (connectionId: string, model: string, expiresAt: number): ModelLockoutView => ({
  provider: 'openai',
  connectionId,
  connectionName: connectionId.toUpperCase(),
  model,
  scope: 'exact',
  reason: 'rate_limit_exceeded',
  status: 429,
  origin: 'rate_limit',
  failureCount: 1,
  lockedAt: 0,
  expiresAt,
});

const admission = (connectionId: string, over: Partial<AdmissionView> = {}): AdmissionView => ({
  connectionId,
  protected: true,
  protectionSource: 'auto',
  protectionMode: 'auto',
  queued: 0,
  inFlight: 0,
  pausedUntil: null,
  maxConcurrent: null,
  models: [],
  ...over,
});

const layers = (over: Partial<HealthLayers>): HealthLayers => ({
  connections: [],
  breakers: [],
  breakerHolds: [],
  failureStreaks: {},
  lockouts: [],
  admission: [],
  ...over,
});

const item = (h: ReturnType<typeof buildHealth>, id: string) => h.connections.find((c) => c.connectionId === id)!;

describe('the health model', () => {
  it('nothing holding: every connection is healthy, and the counts say so', () => {
    const clock = new FakeClock();
    const h = buildHealth(layers({ connections: [conn('a'), conn('b')] }), clock.now());
    expect(h.connections.map((c) => [c.state, c.label, c.reason])).toEqual([
      ['healthy', 'Healthy', null],
      ['healthy', 'Healthy', null],
    ]);
    expect(h.counts).toMatchObject({ healthy: 2, limited: 0, out: 0, needsAttention: 0, total: 2 });
  });

  it('an open breaker: the key whose failures opened it is out until the half-open time, its sibling is not "Healthy"', () => {
    const clock = new FakeClock();
    const now = clock.now();
    const h = buildHealth(
      layers({
        connections: [conn('a'), conn('b')],
        breakers: [breaker({ state: 'OPEN', failures: 8, openedAt: now, halfOpenAt: now + 30_000 })],
        breakerHolds: [{ provider: 'openai', connectionId: 'a', until: now + 30_000, wide: true }],
      }),
      now,
    );
    const a = item(h, 'a');
    expect(a).toMatchObject({ state: 'breaker_open', label: 'Breaker open', liftsAt: now + 30_000, needsPerson: false });
    expect(a.reason).toContain('8 recent provider failures');
    expect(item(h, 'b').state).toBe('probing');
    expect(h.counts).toMatchObject({ healthy: 0, limited: 1, out: 1 });

    // Past the half-open time the first key is probing, without a new push.
    clock.advance(30_000);
    const later = healthAt(h, clock.now());
    expect(item(later, 'a').state).toBe('probing');
    expect(later.counts).toMatchObject({ healthy: 0, out: 0, limited: 2 });
  });

  it('a degraded breaker, or failures in a row, still serve but never read "Healthy"', () => {
    const clock = new FakeClock();
    const h = buildHealth(
      layers({
        connections: [conn('a'), conn('b', { provider: 'glm' }, { lastErrorType: 'server_error' })],
        breakers: [breaker({ state: 'DEGRADED', failures: 3 })],
        failureStreaks: { b: 3 },
      }),
      clock.now(),
    );
    expect(item(h, 'a')).toMatchObject({ state: 'degraded', label: 'Degraded' });
    expect(item(h, 'b')).toMatchObject({ state: 'degraded', reason: '3 failures in a row (last: upstream server error); a success clears this.' });
    expect(h.counts).toMatchObject({ healthy: 0, limited: 2 });
  });

  it('a locked model: the connection is partly available, with the model and when it comes back', () => {
    const clock = new FakeClock();
    const now = clock.now();
    const h = buildHealth(layers({ connections: [conn('a')], lockouts: [lockout('a', 'gpt-5', now + 60_000)] }), now);
    const a = item(h, 'a');
    expect(a).toMatchObject({ state: 'limited', label: 'Partly available · 1 model locked', liftsAt: now + 60_000 });
    expect(a.models).toEqual([expect.objectContaining({ model: 'gpt-5', state: 'locked', liftsAt: now + 60_000 })]);
    expect(a.reason).toContain('rate limited, HTTP 429');
    expect(h.counts).toMatchObject({ healthy: 0, limited: 1 });
    clock.advance(60_000);
    expect(item(healthAt(h, clock.now()), 'a')).toMatchObject({ state: 'healthy', label: 'Healthy', models: [] });
  });

  it('queue pauses: a connection-wide pause takes it out; a model-scoped one holds that model only', () => {
    const clock = new FakeClock();
    const now = clock.now();
    const h = buildHealth(
      layers({
        connections: [conn('a'), conn('b')],
        admission: [
          admission('a', { pausedUntil: now + 12_000 }),
          admission('b', { models: [{ model: 'gpt-5', inFlight: 0, queued: 0, cap: null, pausedUntil: now + 38_000 }] }),
        ],
      }),
      now,
    );
    expect(item(h, 'a')).toMatchObject({ state: 'paused', label: 'Queue paused', liftsAt: now + 12_000 });
    expect(item(h, 'b')).toMatchObject({ state: 'limited', label: 'Partly available · 1 model paused', liftsAt: now + 38_000 });
    expect(h.counts).toMatchObject({ out: 1, limited: 1, healthy: 0 });
  });

  it('a model both locked and paused lifts when the later of the two ends; a clear that left the pause reports it', () => {
    const clock = new FakeClock();
    const now = clock.now();
    const h = buildHealth(
      layers({
        connections: [conn('a')],
        lockouts: [lockout('a', 'gpt-5', now + 10_000)],
        admission: [admission('a', { models: [{ model: 'gpt-5', inFlight: 0, queued: 0, cap: null, pausedUntil: now + 40_000 }] })],
      }),
      now,
    );
    const a = item(h, 'a');
    expect(a.models).toEqual([expect.objectContaining({ model: 'gpt-5', state: 'locked', liftsAt: now + 40_000 })]);
    expect(remainingHolds(a, now, 'gpt-5').map((c) => [c.kind, c.until]).sort()).toEqual([
      ['locked', now + 10_000],
      ['model_paused', now + 40_000],
    ]);
    expect(remainingHolds(a, now, 'other-model')).toEqual([]);
  });

  it('cooldown, ejection and terminal states: out for a while, or needing a person', () => {
    const clock = new FakeClock();
    const now = clock.now();
    const h = buildHealth(
      layers({
        connections: [
          conn('a', {}, { rateLimitedUntil: now + 5_000, lastErrorType: 'rate_limit_exceeded', backoffLevel: 1 }),
          conn('b', {}, { rateLimitedUntil: now + 5_000, lastErrorType: 'outlier_ejected' }),
          conn('c', {}, { testStatus: 'credits_exhausted' }),
          conn('d', { enabled: false }),
        ],
      }),
      now,
    );
    expect(item(h, 'a')).toMatchObject({ state: 'cooling', reason: 'Cooling down: rate limited, backoff step 1.', liftsAt: now + 5_000 });
    expect(item(h, 'b')).toMatchObject({ state: 'ejected', liftsAt: now + 5_000 });
    expect(item(h, 'c')).toMatchObject({ state: 'terminal', needsPerson: true, liftsAt: null });
    expect(item(h, 'd')).toMatchObject({ state: 'disabled', needsPerson: true });
    expect(h.counts).toMatchObject({ out: 2, needsAttention: 1, disabled: 1, healthy: 0, total: 4 });
  });

  it('the most severe layer decides: a terminal state beats an open breaker and a lockout', () => {
    const clock = new FakeClock();
    const now = clock.now();
    const h = buildHealth(
      layers({
        connections: [conn('a', {}, { testStatus: 'banned' })],
        breakers: [breaker({ state: 'OPEN', failures: 5, halfOpenAt: now + 1_000 })],
        breakerHolds: [{ provider: 'openai', connectionId: 'a', until: now + 1_000, wide: true }],
        lockouts: [lockout('a', 'gpt-5', now + 60_000)],
      }),
      now,
    );
    expect(item(h, 'a')).toMatchObject({ state: 'terminal', label: 'Needs attention' });
  });

  it('healthAt returns the same snapshot while nothing changes', () => {
    const clock = new FakeClock();
    const now = clock.now();
    const h = buildHealth(layers({ connections: [conn('a')], lockouts: [lockout('a', 'm', now + 10_000)] }), now);
    clock.advance(9_999);
    expect(healthAt(h, clock.now())).toBe(h);
  });
});
