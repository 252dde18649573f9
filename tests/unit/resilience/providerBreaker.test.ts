// The provider breaker's state machine (sliding window, failure rate, breadth of evidence) and the
// per-provider book (probe claim, early probe by a connection that did not fail, persistence).
import { describe, expect, it } from 'vitest';
import type { AuthClass } from '../../../src/shared/model';
import {
  CLOSED_RECORD,
  DEGRADED_RECOVERY_SUCCESSES,
  KEY_LEVEL_BASE_HOLD_MS,
  onConnectionTestOk,
  onProviderFailure as failure,
  implicatedConnections,
  onProviderSuccess as success,
  parseBreakerRecord,
  stateAt,
  windowSize,
  type BreakerProfile,
  type BreakerRecord,
  type FailureEvent,
} from '../../../src/main/engine/resilience/providerBreaker';
import { PROBE_CLAIM_TTL_MS, ProviderBreakers } from '../../../src/main/engine/resilience/providerBreakers';
import type { Target } from '../../../src/main/engine/routing/target';
import { FakeClock } from '../../support/fakeClock';

const PROFILES: Record<AuthClass, BreakerProfile> = {
  oauth: { degradationThreshold: 5, failureThreshold: 8, resetTimeoutMs: 60_000, failureRatePercent: 50 },
  apikey: { degradationThreshold: 7, failureThreshold: 12, resetTimeoutMs: 30_000, failureRatePercent: 50 },
  local: { degradationThreshold: 1, failureThreshold: 2, resetTimeoutMs: 15_000, failureRatePercent: 50 },
};

/** By default a failure on the provider's only connection (always provider-wide). */
const onProviderFailure = (r: BreakerRecord, now: number, status: number | null, p: BreakerProfile, o: Partial<FailureEvent> = {}) =>
  failure(r, now, { status, conn: 'c1', probe: false, connections: 1, ...o }, p);
const onProviderSuccess = (r: BreakerRecord, now: number, p: BreakerProfile, conn = 'c1') => success(r, now, conn, p);

function fail(r: BreakerRecord, n: number, now: number, p: BreakerProfile, status = 503): BreakerRecord {
  for (let i = 0; i < n; i++) r = onProviderFailure(r, now, status, p);
  return r;
}

describe('provider breaker transitions', () => {
  it.each([
    ['oauth', 5, 8, 60_000],
    ['apikey', 7, 12, 30_000],
    ['local', 1, 2, 15_000],
  ] as const)('%s: DEGRADED at %i failures, OPEN at %i, HALF_OPEN after %i ms', (cls, degradeAt, openAt, resetMs) => {
    const clock = new FakeClock();
    const p = PROFILES[cls];
    let r: BreakerRecord = CLOSED_RECORD;
    for (let i = 1; i <= openAt; i++) {
      r = onProviderFailure(r, clock.now(), 503, p);
      const expected = i >= openAt ? 'OPEN' : i >= degradeAt ? 'DEGRADED' : 'CLOSED';
      expect(stateAt(r, clock.now(), p)).toBe(expected);
    }
    clock.advance(resetMs - 1);
    expect(stateAt(r, clock.now(), p)).toBe('OPEN');
    clock.advance(1);
    expect(stateAt(r, clock.now(), p)).toBe('HALF_OPEN');
    // The lazy read did not change what is stored.
    expect(r.state).toBe('OPEN');
  });

  it('HALF_OPEN: a success closes the breaker', () => {
    const p = PROFILES.apikey;
    const r = fail(CLOSED_RECORD, 12, 0, p);
    const closed = onProviderSuccess(r, 30_000, p);
    expect(stateAt(closed, 30_000, p)).toBe('CLOSED');
    expect(closed.failures).toBe(0);
  });

  it('HALF_OPEN: a failure opens it again for a full reset timeout', () => {
    const p = PROFILES.apikey;
    const r = onProviderFailure(fail(CLOSED_RECORD, 12, 0, p), 31_000, 502, p);
    expect(r).toMatchObject({ state: 'OPEN', openedAt: 31_000, halfOpenAt: 61_000, lastFailureStatus: 502 });
    expect(stateAt(r, 60_999, p)).toBe('OPEN');
  });

  it('OPEN before its time ignores late failures of attempts already in flight, but a success closes it (the provider answers)', () => {
    const p = PROFILES.apikey;
    const r = fail(CLOSED_RECORD, 12, 0, p);
    expect(onProviderFailure(r, 1000, 503, p)).toBe(r);
    expect(stateAt(onProviderSuccess(r, 1000, p), 1000, p)).toBe('CLOSED');
  });

  it('a failed early probe (by a connection that had not failed) reopens the breaker for a full reset timeout', () => {
    const p = PROFILES.apikey;
    const r = onProviderFailure(fail(CLOSED_RECORD, 12, 0, p), 5_000, 503, p, { conn: 'c3', probe: true });
    expect(r).toMatchObject({ state: 'OPEN', openedAt: 5_000, halfOpenAt: 35_000, failures: 13 });
  });

  it('CLOSED: a success no longer forgets the count; a provider failing every other call trips at the failure rate', () => {
    const p = PROFILES.apikey;
    let r: BreakerRecord = CLOSED_RECORD;
    const states: string[] = [];
    for (let i = 0; i < 23; i++) {
      r = i % 2 === 0 ? onProviderFailure(r, i, 503, p) : onProviderSuccess(r, i, p);
      states.push(stateAt(r, i, p));
    }
    expect(states.indexOf('DEGRADED')).toBe(12); // 7 failures among 13 outcomes
    expect(states.indexOf('OPEN')).toBe(22); // 12 failures among 23 outcomes (52 %)
    expect(r.failures).toBe(12);
  });

  it('below the failure rate the counts are not enough: one failure in five stays CLOSED forever', () => {
    const p = PROFILES.apikey;
    expect(windowSize(p)).toBe(24);
    let r: BreakerRecord = CLOSED_RECORD;
    for (let i = 0; i < 200; i++) {
      r = i % 5 === 0 ? onProviderFailure(r, i, 503, p) : onProviderSuccess(r, i, p);
      expect(stateAt(r, i, p)).toBe('CLOSED');
    }
    expect(r.window.length).toBe(24);
  });

  it('the failure-rate setting shapes the window: at 100 % it is a streak of the last 12 outcomes', () => {
    const p = { ...PROFILES.apikey, failureRatePercent: 100 };
    expect(windowSize(p)).toBe(12);
    let r = fail(CLOSED_RECORD, 11, 0, p);
    r = onProviderSuccess(r, 1, p);
    // 11 failures and a success: 12 failures in a row are needed again.
    expect(stateAt(fail(r, 11, 2, p), 2, p)).toBe('DEGRADED');
    expect(stateAt(fail(r, 12, 2, p), 2, p)).toBe('OPEN');
  });

  it('failures on one connection of several are not provider-wide; one more failing connection makes them so', () => {
    const p = PROFILES.apikey;
    let r: BreakerRecord = CLOSED_RECORD;
    for (let i = 0; i < 20; i++) r = onProviderFailure(r, i, 503, p, { conn: 'k2', connections: 3 });
    expect(stateAt(r, 20, p)).toBe('CLOSED');
    expect(r.failures).toBe(20);
    r = onProviderFailure(r, 21, 503, p, { conn: 'k1', connections: 3 });
    expect(stateAt(r, 21, p)).toBe('OPEN');
  });

  it(`DEGRADED needs ${DEGRADED_RECOVERY_SUCCESSES} successes in a row to close; a failure in between keeps counting`, () => {
    const p = PROFILES.apikey;
    let r = fail(CLOSED_RECORD, 7, 0, p);
    r = onProviderSuccess(onProviderSuccess(r, 1, p), 2, p);
    expect(stateAt(r, 2, p)).toBe('DEGRADED');
    r = onProviderFailure(r, 3, 503, p);
    expect(r).toMatchObject({ state: 'DEGRADED', failures: 8, successes: 0 });
    for (let i = 0; i < DEGRADED_RECOVERY_SUCCESSES; i++) r = onProviderSuccess(r, 4 + i, p);
    expect(stateAt(r, 10, p)).toBe('CLOSED');
  });

  it('a stale DEGRADED reads as CLOSED after the quiet window, and the next failure starts from 1', () => {
    const p = PROFILES.apikey;
    const r = fail(CLOSED_RECORD, 7, 0, p);
    expect(stateAt(r, 29_999, p)).toBe('DEGRADED');
    expect(stateAt(r, 30_000, p)).toBe('CLOSED');
    expect(onProviderFailure(r, 30_000, 503, p)).toMatchObject({ state: 'CLOSED', failures: 1 });
  });

  it('a good connection test closes DEGRADED but not OPEN', () => {
    const p = PROFILES.oauth;
    expect(stateAt(onConnectionTestOk(fail(CLOSED_RECORD, 5, 0, p), 1, p), 1, p)).toBe('CLOSED');
    const open = fail(CLOSED_RECORD, 8, 0, p);
    expect(onConnectionTestOk(open, 1, p)).toBe(open);
  });

  it('a degrade threshold at or above the open threshold goes straight to OPEN', () => {
    const p = { degradationThreshold: 5, failureThreshold: 3, resetTimeoutMs: 1000, failureRatePercent: 50 };
    expect(stateAt(fail(CLOSED_RECORD, 2, 0, p), 0, p)).toBe('CLOSED');
    expect(stateAt(fail(CLOSED_RECORD, 3, 0, p), 0, p)).toBe('OPEN');
  });

  it('reads back what it persisted and rejects anything else', () => {
    const r = fail(CLOSED_RECORD, 12, 5, PROFILES.apikey);
    expect(parseBreakerRecord(JSON.parse(JSON.stringify(r)))).toEqual(r);
    expect(parseBreakerRecord({ state: 'HALF_OPEN', failures: 1, lastFailureAt: null, lastFailureStatus: null })).toBeNull();
    expect(parseBreakerRecord({ state: 'OPEN', failures: 1 })).toBeNull();
    expect(parseBreakerRecord({ ...r, window: [{ at: 'x' }] })).toBeNull();
    expect(parseBreakerRecord('junk')).toBeNull();
  });

  it('reads a record saved before the sliding window: its failures count, for every connection', () => {
    const r = parseBreakerRecord({ state: 'OPEN', failures: 12, lastFailureAt: 5, lastFailureStatus: 503, openedAt: 5, halfOpenAt: 30_005 })!;
    expect(r).toMatchObject({ state: 'OPEN', failures: 12 });
    expect(r.window.every((o) => o.conn === '*' && !o.ok)).toBe(true);
  });
});

class MemoryRepo {
  rows = new Map<string, unknown>();
  writes = 0;
  all() {
    return new Map([...this.rows].map(([k, v]) => [k, JSON.parse(JSON.stringify(v))]));
  }
  save(p: string, s: unknown) {
    this.writes++;
    this.rows.set(p, JSON.parse(JSON.stringify(s)));
  }
  delete(p: string) {
    this.writes++;
    this.rows.delete(p);
  }
}

const target = (provider: string, id = 'c') => ({ conn: { provider, id }, model: 'm', requestedModel: 'm' }) as unknown as Target;
const ONLY = { connections: 1, evidence: true };

describe('provider breakers (book)', () => {
  const book = (repo = new MemoryRepo()) => new ProviderBreakers(repo, { classOf: () => 'apikey', profile: (c) => PROFILES[c] }, () => {});
  const open = (b: ProviderBreakers, provider: string, now = 0, ids = ['c']) => {
    for (let i = 0; i < 12; i++) b.recordFailure(target(provider, ids[i % ids.length]), 503, now, { connections: ids.length, evidence: true });
  };

  it('excludes an OPEN provider until its half-open time, then lets exactly one probe through', () => {
    const clock = new FakeClock();
    const b = book();
    open(b, 'glm', clock.now());
    expect(b.exclusion('glm', 'c', clock.now())).toMatchObject({ reason: 'circuit_open', until: clock.now() + 30_000 });
    expect(b.exclusion('openai', 'c', clock.now())).toBeNull();
    clock.advance(30_000);
    expect(b.exclusion('glm', 'c', clock.now())).toBeNull();
    const probe = target('glm');
    expect(b.beginAttempt(probe, clock.now())).toBeNull();
    expect(b.beginAttempt(target('glm'), clock.now())).toMatchObject({ reason: 'circuit_open' });
    expect(b.exclusion('glm', 'c', clock.now())).toMatchObject({ reason: 'circuit_open' });
  });

  it('OPEN keeps out only the connections that failed: another may probe at once, one at a time', () => {
    const b = book();
    open(b, 'glm', 0, ['k1', 'k2']);
    expect(b.exclusion('glm', 'k1', 1_000)).toMatchObject({ reason: 'circuit_open', until: 30_000 });
    expect(b.exclusion('glm', 'k3', 1_000)).toBeNull();
    const probe = target('glm', 'k3');
    expect(b.beginAttempt(probe, 1_000)).toBeNull();
    expect(b.exclusion('glm', 'k4', 1_000)).toMatchObject({ reason: 'circuit_open', until: 2_000 });
    b.recordSuccess(probe, 1_100);
    expect(b.view('glm', 1_100, null).state).toBe('CLOSED');
    expect(b.exclusion('glm', 'k1', 1_100)).toBeNull();
  });

  it('a failure without provider-wide evidence is ignored, unless it is the probe’s', () => {
    const b = book();
    for (let i = 0; i < 30; i++) b.recordFailure(target('glm', 'k1'), 503, 0, { connections: 1, evidence: false });
    expect(b.view('glm', 0, null)).toMatchObject({ state: 'CLOSED', failures: 0 });
    open(b, 'glm', 0, ['k1', 'k2']);
    const probe = target('glm', 'k3');
    b.beginAttempt(probe, 30_000);
    b.recordFailure(probe, 503, 30_000, { connections: 3, evidence: false });
    expect(b.view('glm', 30_000, null)).toMatchObject({ state: 'OPEN', halfOpenAt: 60_000 });
    expect(b.isImplicated('glm', 'k3')).toBe(true);
  });

  it('an abandoned probe is released so the next request can probe', () => {
    const b = book();
    open(b, 'glm');
    const probe = target('glm');
    expect(b.beginAttempt(probe, 30_000)).toBeNull();
    b.release(target('glm')); // not the holder: nothing happens
    expect(b.exclusion('glm', 'c', 30_000)).not.toBeNull();
    b.release(probe);
    expect(b.beginAttempt(target('glm'), 30_000)).toBeNull();
  });

  it('a probe claim that never reports back expires', () => {
    const b = book();
    open(b, 'glm');
    b.beginAttempt(target('glm'), 30_000);
    expect(b.exclusion('glm', 'c', 30_000 + PROBE_CLAIM_TTL_MS - 1)).not.toBeNull();
    expect(b.exclusion('glm', 'c', 30_000 + PROBE_CLAIM_TTL_MS)).toBeNull();
  });

  it('the probe’s success closes the breaker; its failure reopens it', () => {
    const b = book();
    open(b, 'glm');
    const first = target('glm');
    b.beginAttempt(first, 30_000);
    b.recordFailure(first, 503, 30_000, ONLY);
    expect(b.view('glm', 30_000, null)).toMatchObject({ state: 'OPEN', halfOpenAt: 60_000 });
    const second = target('glm');
    b.beginAttempt(second, 60_000);
    b.recordSuccess(second, 60_000);
    expect(b.view('glm', 60_000, null)).toMatchObject({ state: 'CLOSED', failures: 0 });
  });

  it('survives a restart: an OPEN breaker is read back OPEN from the store, with the connections it keeps out', () => {
    const repo = new MemoryRepo();
    const b = book(repo);
    open(b, 'glm', 0, ['k1', 'k2']);
    const again = book(repo);
    expect(again.view('glm', 10_000, null).state).toBe('OPEN');
    expect(again.exclusion('glm', 'k1', 10_000)).toMatchObject({ reason: 'circuit_open' });
    expect(again.exclusion('glm', 'k3', 10_000)).toBeNull();
    expect(again.view('glm', 30_000, null).state).toBe('HALF_OPEN');
  });

  it('writes only when a failure or a state change alters the record; reads and successes that only fill the window never write', () => {
    const repo = new MemoryRepo();
    const b = book(repo);
    for (let i = 0; i < 100; i++) b.recordSuccess(target('glm'), i);
    b.exclusion('glm', 'c', 0);
    b.view('glm', 0, null);
    expect(repo.writes).toBe(0);
    b.recordFailure(target('glm'), 503, 0, ONLY);
    const one = repo.writes;
    for (let i = 0; i < 5; i++) b.recordSuccess(target('glm'), 1 + i);
    expect(repo.writes).toBe(one);
    open(b, 'glm', 10);
    const after = repo.writes;
    b.recordFailure(target('glm'), 503, 11, ONLY); // OPEN: a late failure is ignored
    b.exclusion('glm', 'c', 40_000); // lazy HALF_OPEN read
    expect(repo.writes).toBe(after);
  });

  it('reset clears one provider or all', () => {
    const repo = new MemoryRepo();
    const b = book(repo);
    open(b, 'glm');
    open(b, 'kimi');
    expect(b.reset('glm', [])).toEqual(['glm']);
    expect(b.view('glm', 0, null).state).toBe('CLOSED');
    expect(b.view('kimi', 0, null).state).toBe('OPEN');
    expect(b.reset(undefined, ['openai'])).toEqual(['kimi', 'openai']);
    expect(repo.rows.size).toBe(0);
    expect(b.openCount).toBe(0);
  });
});

describe('faults that move between keys: key-level openings (issue 19)', () => {
  const p = PROFILES.apikey;
  /** Twelve failures alternating over k1 and k2 at `now`, on a provider of three keys; `recentSuccess` as given. */
  const openOn = (recentSuccess: boolean, now = 0, r: BreakerRecord = CLOSED_RECORD) => {
    for (let i = 0; i < 12; i++) r = failure(r, now, { status: 503, conn: i % 2 ? 'k2' : 'k1', probe: false, connections: 3, recentSuccess }, p);
    return r;
  };

  it('an opening while a key succeeded within the quiet window is key-level: a 2 s hold, doubled by each failed probe, capped by the reset timeout', () => {
    const r = openOn(true);
    expect(r).toMatchObject({ state: 'OPEN', wide: false, holdMs: KEY_LEVEL_BASE_HOLD_MS, halfOpenAt: KEY_LEVEL_BASE_HOLD_MS });
    let now = KEY_LEVEL_BASE_HOLD_MS;
    let x = r;
    const holds: number[] = [];
    for (let i = 0; i < 6; i++) {
      x = failure(x, now, { status: 503, conn: 'k1', probe: true, connections: 3, recentSuccess: true }, p);
      holds.push(x.state === 'OPEN' ? x.holdMs : -1);
      now = x.state === 'OPEN' ? x.halfOpenAt : now;
    }
    expect(holds).toEqual([4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('with no success anywhere in the quiet window the opening is provider-wide (§1): the full reset timeout, and a failed probe once the provider stays down is too', () => {
    expect(openOn(false)).toMatchObject({ state: 'OPEN', wide: true, holdMs: 30_000, halfOpenAt: 30_000 });
    const reopened = failure(openOn(true), 2_000, { status: 503, conn: 'k1', probe: true, connections: 3, recentSuccess: false }, p);
    expect(reopened).toMatchObject({ state: 'OPEN', wide: true, halfOpenAt: 32_000 });
  });

  it('a key-level record takes a failing key’s new failure into its window (held again from now); a provider-wide one ignores a late failure', () => {
    const key = openOn(true);
    const after = failure(key, 1_500, { status: 503, conn: 'k3', probe: false, connections: 3, recentSuccess: true }, p);
    expect(after).toMatchObject({ state: 'OPEN', openedAt: 0, lastFailureAt: 1_500 });
    expect(implicatedConnections(after).get('k3')).toBe(1_500);
    const wide = openOn(false);
    expect(failure(wide, 1_500, { status: 503, conn: 'k3', probe: false, connections: 3 }, p)).toBe(wide);
  });

  it('a key whose latest outcome is a success is not implicated, whatever it failed before', () => {
    let r: BreakerRecord = failure(CLOSED_RECORD, 0, { status: 503, conn: 'k3', probe: false, connections: 3 }, p);
    r = success(r, 1, 'k3', p);
    r = openOn(true, 2, r);
    expect(r.state).toBe('OPEN');
    expect([...implicatedConnections(r).keys()].sort()).toEqual(['k1', 'k2']);
  });

  it('reads an OPEN record saved before key-level openings as provider-wide', () => {
    const r = parseBreakerRecord({ state: 'OPEN', failures: 12, lastFailureAt: 5, lastFailureStatus: 503, openedAt: 5, halfOpenAt: 30_005 })!;
    expect(r).toMatchObject({ wide: true, holdMs: 30_000, opens: 1 });
    const key = openOn(true, 7);
    expect(parseBreakerRecord(JSON.parse(JSON.stringify(key)))).toEqual(key);
  });
});

describe('provider breakers (book): key-level openings hold only the keys failing now', () => {
  const book = () => new ProviderBreakers(new MemoryRepo(), { classOf: () => 'apikey', profile: (c) => PROFILES[c] }, () => {});
  const fail = (b: ProviderBreakers, id: string, now: number) => b.recordFailure(target('glm', id), 503, now, { connections: 3, evidence: true });
  /** k3 succeeds at 0; then k1 and k2 fail six times each at `at` (k2's last one at `at + lastK2`). */
  const keyLevel = (at = 100, lastK2 = 0) => {
    const b = book();
    b.recordSuccess(target('glm', 'k3'), 0);
    for (let i = 0; i < 11; i++) fail(b, i % 2 ? 'k2' : 'k1', at);
    fail(b, 'k2', at + lastK2);
    return b;
  };

  it('a key that just succeeded is never held out, not even while a failing key probes', () => {
    const b = keyLevel();
    expect(b.view('glm', 100, null).state).toBe('OPEN');
    expect(b.isKeyLevel('glm')).toBe(true);
    expect(b.exclusion('glm', 'k3', 100)).toBeNull();
    expect(b.beginAttempt(target('glm', 'k3'), 100)).toBeNull();
    // k1's hold is over: its call is the probe; k3 still goes straight through.
    const probe = target('glm', 'k1');
    expect(b.beginAttempt(probe, 100 + KEY_LEVEL_BASE_HOLD_MS)).toBeNull();
    expect(b.exclusion('glm', 'k3', 100 + KEY_LEVEL_BASE_HOLD_MS)).toBeNull();
    expect(b.exclusion('glm', 'k2', 100 + KEY_LEVEL_BASE_HOLD_MS)).toMatchObject({ reason: 'circuit_open' });
  });

  it('each failing key is held from its own last failure: the one that failed first is free first', () => {
    const b = keyLevel(100, 1_500);
    const now = 100 + KEY_LEVEL_BASE_HOLD_MS;
    expect(b.exclusion('glm', 'k1', now)).toBeNull();
    expect(b.exclusion('glm', 'k2', now)).toMatchObject({ reason: 'circuit_open', until: 1_600 + KEY_LEVEL_BASE_HOLD_MS });
  });

  it('a key-level hold is a guess the last resort may go around; a provider-wide hold never is', () => {
    const b = keyLevel();
    expect(b.heldByGuess('glm', 'k1', 500)).toBe(true);
    expect(b.beginAttempt(target('glm', 'k1'), 500)).toMatchObject({ reason: 'circuit_open' });
    expect(b.beginAttempt(target('glm', 'k1'), 500, true)).toBeNull();
    const wide = book();
    for (let i = 0; i < 12; i++) fail(wide, i % 2 ? 'k2' : 'k1', 100);
    expect(wide.isKeyLevel('glm')).toBe(false);
    expect(wide.heldByGuess('glm', 'k1', 500)).toBe(false);
    expect(wide.beginAttempt(target('glm', 'k1'), 500, true)).toMatchObject({ reason: 'circuit_open', until: 30_100 });
  });

  it('the success of any key closes it', () => {
    const b = keyLevel();
    b.recordSuccess(target('glm', 'k3'), 200);
    expect(b.view('glm', 200, null).state).toBe('CLOSED');
    expect(b.exclusion('glm', 'k1', 200)).toBeNull();
  });
});

