// Team mode for the resilience layers (issue 26), on an in-memory team and a fake clock: what one
// instance learns about a key reaches the others with the semantics of one process (the stampede
// rule included), claims are made once across the team, operator actions travel like any change,
// a healthy key costs the team nothing, and an egress lockout is bound to its IP.
import { beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../support/fakeClock';
import { FakeTeamHub } from './teamFake';
import { failure, keyLimit, modelLimit, startInstance, type Instance } from './teamInstances';

const K1 = 'sk-unit-key-one-111111';
const K2 = 'sk-unit-key-two-222222';
const BREAKER_ENV = { SWITCHYARD_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD: '1', SWITCHYARD_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD: '2' };

let clock: FakeClock;
let hub: FakeTeamHub;

beforeEach(() => {
  clock = new FakeClock();
  hub = new FakeTeamHub(clock);
});

const health = (i: Instance, id: string) => i.registry.get(id)!.health;

/** One attempt on `conn` that fails (dispatched and answered now). */
async function fail(i: Instance, conn: Parameters<Instance['target']>[0], f = keyLimit(), model = 'm1') {
  const t = i.target(conn, model);
  expect(await i.resilience.beginAttempt(t, clock.now())).toBeNull();
  return i.resilience.onFailure(t, f, clock.now());
}

async function succeed(i: Instance, conn: Parameters<Instance['target']>[0], model = 'm1') {
  const t = i.target(conn, model);
  expect(await i.resilience.beginAttempt(t, clock.now())).toBeNull();
  i.resilience.onSuccess(t, clock.now(), { ttfbMs: 10 });
}

describe('connection health across the team', () => {
  it('an attempt already in flight on B when A’s cooldown reaches it adds no backoff step (R-CC-14 across instances)', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    const kb = b.add('my name for it', K1);
    const inFlight = b.target(kb);
    expect(b.resilience.beginAttempt(inFlight, clock.now())).toBeNull();
    await fail(a, ka);
    expect(health(a, ka.id)).toMatchObject({ backoffLevel: 1, rateLimitedUntil: clock.now() + 3_000 });
    hub.flush();
    expect(health(b, kb.id)).toMatchObject({ testStatus: 'unavailable', backoffLevel: 1, rateLimitedUntil: clock.now() + 3_000 });
    expect(b.resilience.exclusion(b.target(kb), clock.now())).toMatchObject({ reason: 'cooling_down' });
    clock.advance(100);
    b.resilience.onFailure(inFlight, keyLimit(), clock.now());
    hub.flush();
    for (const [i, id] of [[a, ka.id], [b, kb.id]] as const) expect(health(i, id)).toMatchObject({ backoffLevel: 1, rateLimitedUntil: clock.now() - 100 + 3_000 });
    // An attempt dispatched after the cooldown ended is a new failure: one more step, everywhere.
    clock.advance(3_000);
    await fail(b, kb);
    hub.flush();
    for (const [i, id] of [[a, ka.id], [b, kb.id]] as const) expect(health(i, id)).toMatchObject({ backoffLevel: 2, rateLimitedUntil: clock.now() + 6_000 });
  });

  it('two instances failing at the same moment end with the longer cooldown and one backoff step', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    const kb = b.add('key', K1);
    const t0 = clock.now();
    await fail(a, ka, keyLimit(60));
    // (A millisecond apart: records of one millisecond from two instances carry the same version.)
    clock.advance(1);
    await fail(b, kb, keyLimit());
    hub.flush();
    for (const [i, id] of [[a, ka.id], [b, kb.id]] as const) {
      expect(health(i, id)).toMatchObject({ testStatus: 'unavailable', backoffLevel: 1, rateLimitedUntil: t0 + 60_000 });
    }
  });

  it('a terminal state learnt from an upstream answer takes the key out everywhere; a passing test on another brings it back', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    const kb = b.add('key', K1);
    await fail(a, ka, failure(401, {}, '{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}'));
    hub.flush();
    // A rejected credential counts towards 'expired' on every instance (one count, not one per instance).
    expect(health(b, kb.id)).toMatchObject({ testStatus: 'unavailable', expiredRetries: 1 });
    clock.advance(60_000);
    await fail(a, ka, failure(402, {}, '{"error":{"message":"Insufficient credits on this account"}}'));
    hub.flush();
    expect(health(b, kb.id).testStatus).toBe('credits_exhausted');
    expect(b.resilience.exclusion(b.target(kb), clock.now())).toMatchObject({ reason: 'terminal' });
    b.resilience.onConnectionTestOk(kb.id, clock.now());
    hub.flush();
    expect(health(a, ka.id)).toMatchObject({ testStatus: 'active', rateLimitedUntil: null, expiredRetries: 0 });
  });

  it('a mark about this instance’s own sign-in stays here, and no record from the team lifts it', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    const kb = b.add('key', K1);
    a.resilience.markConnection(ka.id, { kind: 'terminal', status: 'expired', reason: 'auth_expired', message: 'sign in again' }, clock.now());
    a.resilience.markConnection(ka.id, { kind: 'cooling', until: clock.now() + 60_000, reason: 'refresh_failed', message: 'x' }, clock.now());
    hub.flush();
    expect(health(b, kb.id).testStatus).toBe('untested');
    // B's news about the account (a success clears, a cooldown) leave A's dead sign-in as it is.
    await succeed(b, kb);
    hub.flush();
    expect(health(a, ka.id).testStatus).toBe('expired');
    await fail(b, kb, keyLimit(30));
    hub.flush();
    expect(health(a, ka.id).testStatus).toBe('expired');
    expect(health(b, kb.id)).toMatchObject({ testStatus: 'unavailable', rateLimitedUntil: clock.now() + 30_000 });
  });

  it('an operator’s clear on one instance lifts the cooldown and the model lockouts on the others', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    const kb = b.add('key', K1);
    await fail(a, ka, keyLimit(60));
    await fail(a, ka, modelLimit(60), 'm2');
    hub.flush();
    expect(b.resilience.cooldowns(clock.now()).connections[0]).toMatchObject({ status: 'cooling' });
    const res = b.resilience.clearCooldowns({ connectionIds: [kb.id] }, clock.now());
    expect(res.cleared).toEqual([kb.id]);
    hub.flush();
    expect(a.resilience.cooldowns(clock.now()).connections[0]).toMatchObject({ status: 'active', lockouts: [] });
    expect(a.resilience.exclusion(a.target(ka, 'm2'), clock.now())).toBeNull();
  });

  it('a healthy key costs the team nothing: no record published, no claim asked, per request', async () => {
    const a = startInstance(hub, clock, 'A');
    startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    await succeed(a, ka); // untested -> active: published once
    const published = hub.published.length;
    for (let n = 0; n < 50; n++) {
      const t = a.target(ka);
      const claimed = a.resilience.beginAttempt(t, clock.now());
      expect(claimed).toBeNull(); // answered at once, not a promise
      a.resilience.onSuccess(t, clock.now(), { ttfbMs: 5 });
      clock.advance(5_000);
    }
    expect(hub.published.length).toBe(published);
  });

  it('while the team is unreachable an instance keeps its own state; the others get it when the team is back', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    const kb = b.add('key', K1);
    hub.down = true;
    await fail(a, ka, keyLimit(120));
    hub.flush();
    expect(health(b, kb.id).rateLimitedUntil).toBeNull();
    expect(a.team.pending).toBeGreaterThan(0);
    hub.up();
    expect(health(b, kb.id).rateLimitedUntil).toBe(clock.now() + 120_000);
    expect(a.team.pending).toBe(0);
  });
});

describe('model lockouts across the team', () => {
  it('a model rate limit learnt on A keeps that model (only) off that key on B; B’s attempt in flight adds no step', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1, { models: ['m1', 'm2'] });
    const kb = b.add('key', K1, { models: ['m1', 'm2'] });
    const inFlight = b.target(kb);
    expect(b.resilience.beginAttempt(inFlight, clock.now())).toBeNull();
    expect(await fail(a, ka, modelLimit())).toMatchObject({ scope: 'model' });
    hub.flush();
    expect(b.resilience.exclusion(b.target(kb, 'm1'), clock.now())).toMatchObject({ reason: 'model_lockout' });
    expect(b.resilience.exclusion(b.target(kb, 'm2'), clock.now())).toBeNull();
    b.resilience.onFailure(inFlight, modelLimit(), clock.now());
    hub.flush();
    for (const i of [a, b]) expect(i.resilience.lockouts(clock.now())).toEqual([expect.objectContaining({ model: 'm1', origin: 'rate_limit', failureCount: 1 })]);
    // A success on B clears it for the team (R-CC-40).
    clock.advance(60_000);
    await succeed(b, kb);
    hub.flush();
    expect(a.resilience.lockouts(clock.now())).toEqual([]);
  });

  it('re-enabling a model on one instance re-enables it on the others', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    const kb = b.add('key', K1);
    await fail(a, ka, modelLimit(600));
    hub.flush();
    expect(b.resilience.lockouts(clock.now())).toHaveLength(1);
    expect(b.resilience.clearLockout({ provider: 'openai', connection: kb.id, model: 'm1' }, clock.now())).toBe(1);
    hub.flush();
    expect(a.resilience.lockouts(clock.now())).toEqual([]);
  });
});

describe('provider breakers across the team', () => {
  async function openBreaker(a: Instance, conns: Parameters<Instance['target']>[0][]) {
    for (const c of conns) await fail(a, c, failure(503));
    hub.flush();
  }

  it('an opening on one instance holds on the others; the half-open probe is claimed once; its outcome frees the claim', async () => {
    const a = startInstance(hub, clock, 'A', BREAKER_ENV);
    const b = startInstance(hub, clock, 'B', BREAKER_ENV);
    const [a1, a2] = [a.add('one', K1), a.add('two', K2)];
    const [b1, b2] = [b.add('one', K1), b.add('two', K2)];
    await openBreaker(a, [a1, a2]);
    expect(b.resilience.breakers(clock.now()).find((x) => x.provider === 'openai')).toMatchObject({ state: 'OPEN', failures: 2 });
    // The keys that failed on A are held on B (the window names them by their team ids).
    expect(b.resilience.exclusion(b.target(b1), clock.now())).toMatchObject({ reason: 'circuit_open' });
    clock.advance(30_000);
    expect(b.resilience.breakers(clock.now())[0]).toMatchObject({ state: 'HALF_OPEN' });
    const probe = a.target(a1);
    const [ra, rb] = [a.resilience.beginAttempt(probe, clock.now()), b.resilience.beginAttempt(b.target(b1), clock.now())];
    expect(ra).toBeInstanceOf(Promise);
    expect(await ra).toBeNull();
    expect(await rb).toMatchObject({ reason: 'circuit_open', detail: expect.stringContaining('another instance') });
    // B answers like a busy probe for every key of the provider, without asking the team again.
    expect(b.resilience.exclusion(b.target(b2), clock.now())).toMatchObject({ reason: 'circuit_open' });
    expect(hub.claims.has('probe:openai')).toBe(true);
    a.resilience.onSuccess(probe, clock.now(), { ttfbMs: 1 });
    expect(hub.claims.size).toBe(0);
    hub.flush();
    expect(a.resilience.breakers(clock.now())[0]).toMatchObject({ state: 'CLOSED' });
    expect(b.resilience.breakers(clock.now())[0]).toMatchObject({ state: 'CLOSED' });
    expect(b.resilience.exclusion(b.target(b2), clock.now())).toBeNull();
  });

  it('the probe’s claim goes back with its outcome, and a failed probe reopens the breaker everywhere', async () => {
    const a = startInstance(hub, clock, 'A', BREAKER_ENV);
    const b = startInstance(hub, clock, 'B', BREAKER_ENV);
    const [a1, a2] = [a.add('one', K1), a.add('two', K2)];
    const b1 = b.add('one', K1);
    b.add('two', K2);
    await openBreaker(a, [a1, a2]);
    clock.advance(30_000);
    const probe = a.target(a1);
    expect(await a.resilience.beginAttempt(probe, clock.now())).toBeNull();
    a.resilience.onFailure(probe, failure(503), clock.now());
    expect(hub.claims.size).toBe(0);
    hub.flush();
    const view = b.resilience.breakers(clock.now())[0]!;
    expect(view).toMatchObject({ state: 'OPEN', halfOpenAt: clock.now() + 30_000 });
    expect(b.resilience.exclusion(b.target(b1), clock.now())).toMatchObject({ reason: 'circuit_open' });
    // An abandoned probe gives its claim back too.
    clock.advance(30_000);
    const again = a.target(a2);
    expect(await a.resilience.beginAttempt(again, clock.now())).toBeNull();
    expect(hub.claims.size).toBe(1);
    a.resilience.onAbandon(again, clock.now());
    expect(hub.claims.size).toBe(0);
  });

  it('a breaker reset on one instance resets it on the others', async () => {
    const a = startInstance(hub, clock, 'A', BREAKER_ENV);
    const b = startInstance(hub, clock, 'B', BREAKER_ENV);
    const [a1, a2] = [a.add('one', K1), a.add('two', K2)];
    b.add('one', K1);
    b.add('two', K2);
    await openBreaker(a, [a1, a2]);
    expect(a.resilience.breakers(clock.now())[0]!.state).toBe('OPEN');
    b.resilience.resetBreakers('openai', clock.now());
    hub.flush();
    expect(a.resilience.breakers(clock.now())[0]).toMatchObject({ state: 'CLOSED', failures: 0 });
  });

  it('while the team is unreachable the probe is decided by the single-process rule', async () => {
    const a = startInstance(hub, clock, 'A', BREAKER_ENV);
    const [a1, a2] = [a.add('one', K1), a.add('two', K2)];
    await openBreaker(a, [a1, a2]);
    clock.advance(30_000);
    hub.down = true;
    expect(await a.resilience.beginAttempt(a.target(a1), clock.now())).toBeNull();
    // The second concurrent attempt meets the local claim.
    expect(await a.resilience.beginAttempt(a.target(a2), clock.now())).toMatchObject({ reason: 'circuit_open' });
  });
});

describe('outlier ejection across the team', () => {
  it('an ejection reaches the others, and the test call after it is made once across the team', async () => {
    const env = { ...BREAKER_ENV, SWITCHYARD_CIRCUIT_BREAKER_API_KEY_FAILURE_THRESHOLD: '50', SWITCHYARD_CIRCUIT_BREAKER_API_KEY_DEGRADATION_THRESHOLD: '40' };
    const a = startInstance(hub, clock, 'A', env);
    const b = startInstance(hub, clock, 'B', env);
    const [a1, a2] = [a.add('one', K1), a.add('two', K2)];
    const b1 = b.add('one', K1);
    b.add('two', K2);
    // Key two succeeds steadily while key one fails twice in a row: key one is ejected.
    await succeed(a, a2);
    await succeed(a, a2);
    await fail(a, a1, failure(503));
    await fail(a, a1, failure(503));
    expect(health(a, a1.id)).toMatchObject({ lastErrorType: 'outlier_ejected' });
    hub.flush();
    expect(health(b, b1.id)).toMatchObject({ lastErrorType: 'outlier_ejected', rateLimitedUntil: clock.now() + 10_000 });
    clock.advance(10_000);
    const test = a.target(a1);
    const [ra, rb] = [a.resilience.beginAttempt(test, clock.now()), b.resilience.beginAttempt(b.target(b1), clock.now())];
    expect(await ra).toBeNull();
    expect(await rb).toMatchObject({ reason: 'cooling_down', cause: 'outlier_probation' });
    expect(b.resilience.exclusion(b.target(b1), clock.now())).toMatchObject({ cause: 'outlier_probation' });
    expect([...hub.claims.keys()].filter((k) => k.startsWith('probation:'))).toHaveLength(1);
    // Its outcome gives the claim back (and, a success, ends the probation everywhere).
    a.resilience.onSuccess(test, clock.now(), { ttfbMs: 1 });
    expect([...hub.claims.keys()].filter((k) => k.startsWith('probation:'))).toHaveLength(0);
    hub.flush();
    expect(await b.resilience.beginAttempt(b.target(b1), clock.now())).toBeNull();
  });
});

describe('last-resort probes across the team', () => {
  it('a key out only on our guess is probed by one instance of the team per second', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const ka = a.add('key', K1);
    const kb = b.add('key', K1);
    // A model rate limit without any hint: its length is our own backoff, a guess.
    await fail(a, ka, modelLimit());
    hub.flush();
    expect(b.resilience.exclusion(b.target(kb), clock.now())).toMatchObject({ reason: 'model_lockout' });
    clock.advance(300);
    const [ta, tb] = [a.target(ka), b.target(kb)];
    expect(a.resilience.lastResort([ta], clock.now())).toBe(ta);
    expect(b.resilience.lastResort([tb], clock.now())).toBe(tb);
    expect(await a.resilience.beginAttempt(ta, clock.now())).toBeNull();
    expect(await b.resilience.beginAttempt(tb, clock.now())).toMatchObject({ reason: 'cooling_down', detail: expect.stringContaining('another instance') });
    // The ration lapses by itself: a second later another instance may probe.
    a.resilience.onFailure(ta, modelLimit(), clock.now());
    hub.flush();
    clock.advance(1_000);
    const again = b.target(kb);
    expect(b.resilience.lastResort([again], clock.now())).toBe(again);
    expect(await b.resilience.beginAttempt(again, clock.now())).toBeNull();
  });
});

describe('egress lockouts across the team (SPEC §7c)', () => {
  const OPENCODE = { provider: 'opencode', baseUrl: 'https://opencode.example.test/v1' } as const;

  it('hold the family connections that leave through the same IP on each instance, and only those', async () => {
    const a = startInstance(hub, clock, 'A');
    const b = startInstance(hub, clock, 'B');
    const c = startInstance(hub, clock, 'C');
    const [a1, a2] = [a.add('one', K1, OPENCODE), a.add('two', K2, OPENCODE)];
    const [b1, b2] = [b.add('one', K1, OPENCODE), b.add('two', K2, OPENCODE)];
    const [c1, c2] = [c.add('one', K1, OPENCODE), c.add('two', K2, OPENCODE)];
    a.egress.ips.set(a1.id, '203.0.113.7').set(a2.id, '203.0.113.7');
    b.egress.ips.set(b2.id, '203.0.113.7'); // B leaves through the same office IP
    c.egress.ips.set(c2.id, '198.51.100.9'); // C through another
    await fail(a, a1, failure(429, { 'retry-after': '600' }, '{"error":{"message":"Rate limit exceeded"}}'));
    const until = clock.now() + 600_000;
    expect(health(a, a2.id).rateLimitedUntil).toBe(until);
    hub.flush();
    // The rate-limited key itself cools on every instance (its own cooldown is the team's).
    for (const [i, id] of [[b, b1.id], [c, c1.id]] as const) expect(health(i, id).rateLimitedUntil).toBe(until);
    expect(health(b, b2.id).rateLimitedUntil).toBe(until);
    expect(health(c, c2.id).rateLimitedUntil).toBeNull();
    // C's key two turns out to leave through that IP after all: held once its IP is known.
    c.egress.learn(c2.id, '203.0.113.7');
    expect(health(c, c2.id).rateLimitedUntil).toBe(until);
  });
});
