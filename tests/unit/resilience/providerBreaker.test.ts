// The provider breaker's state machine and the per-provider book (probe claim, persistence).
import { describe, expect, it } from 'vitest';
import type { AuthClass } from '../../../src/shared/model';
import {
  CLOSED_RECORD,
  DEGRADED_RECOVERY_SUCCESSES,
  onConnectionTestOk,
  onProviderFailure,
  onProviderSuccess,
  parseBreakerRecord,
  stateAt,
  type BreakerProfile,
  type BreakerRecord,
} from '../../../src/main/engine/resilience/providerBreaker';
import { PROBE_CLAIM_TTL_MS, ProviderBreakers } from '../../../src/main/engine/resilience/providerBreakers';
import type { Target } from '../../../src/main/engine/routing/target';
import { FakeClock } from '../../support/fakeClock';

const PROFILES: Record<AuthClass, BreakerProfile> = {
  oauth: { degradationThreshold: 5, failureThreshold: 8, resetTimeoutMs: 60_000 },
  apikey: { degradationThreshold: 7, failureThreshold: 12, resetTimeoutMs: 30_000 },
  local: { degradationThreshold: 1, failureThreshold: 2, resetTimeoutMs: 15_000 },
};

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

  it('OPEN before its time ignores late failures and successes of attempts already in flight', () => {
    const p = PROFILES.apikey;
    const r = fail(CLOSED_RECORD, 12, 0, p);
    expect(onProviderFailure(r, 1000, 503, p)).toBe(r);
    expect(onProviderSuccess(r, 1000, p)).toBe(r);
  });

  it('CLOSED: one success forgets failures below the degrade threshold', () => {
    const p = PROFILES.apikey;
    const r = onProviderSuccess(fail(CLOSED_RECORD, 6, 0, p), 1, p);
    expect(r.failures).toBe(0);
    expect(stateAt(fail(r, 6, 2, p), 2, p)).toBe('CLOSED');
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
    const p = { degradationThreshold: 5, failureThreshold: 3, resetTimeoutMs: 1000 };
    expect(stateAt(fail(CLOSED_RECORD, 2, 0, p), 0, p)).toBe('CLOSED');
    expect(stateAt(fail(CLOSED_RECORD, 3, 0, p), 0, p)).toBe('OPEN');
  });

  it('reads back what it persisted and rejects anything else', () => {
    const r = fail(CLOSED_RECORD, 12, 5, PROFILES.apikey);
    expect(parseBreakerRecord(JSON.parse(JSON.stringify(r)))).toEqual(r);
    expect(parseBreakerRecord({ state: 'HALF_OPEN', failures: 1, lastFailureAt: null, lastFailureStatus: null })).toBeNull();
    expect(parseBreakerRecord({ state: 'OPEN', failures: 1 })).toBeNull();
    expect(parseBreakerRecord('junk')).toBeNull();
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

const target = (provider: string) => ({ conn: { provider, id: 'c' }, model: 'm', requestedModel: 'm' }) as unknown as Target;

describe('provider breakers (book)', () => {
  const book = (repo = new MemoryRepo()) => new ProviderBreakers(repo, { classOf: () => 'apikey', profile: (c) => PROFILES[c] }, () => {});

  it('excludes an OPEN provider until its half-open time, then lets exactly one probe through', () => {
    const clock = new FakeClock();
    const b = book();
    for (let i = 0; i < 12; i++) b.recordFailure('glm', 503, clock.now());
    expect(b.exclusion('glm', clock.now())).toMatchObject({ reason: 'circuit_open', until: clock.now() + 30_000 });
    expect(b.exclusion('openai', clock.now())).toBeNull();
    clock.advance(30_000);
    expect(b.exclusion('glm', clock.now())).toBeNull();
    const probe = target('glm');
    expect(b.beginAttempt(probe, clock.now())).toBeNull();
    expect(b.beginAttempt(target('glm'), clock.now())).toMatchObject({ reason: 'circuit_open' });
    expect(b.exclusion('glm', clock.now())).toMatchObject({ reason: 'circuit_open' });
  });

  it('an abandoned probe is released so the next request can probe', () => {
    const b = book();
    for (let i = 0; i < 12; i++) b.recordFailure('glm', 503, 0);
    const probe = target('glm');
    expect(b.beginAttempt(probe, 30_000)).toBeNull();
    b.release(target('glm')); // not the holder: nothing happens
    expect(b.exclusion('glm', 30_000)).not.toBeNull();
    b.release(probe);
    expect(b.beginAttempt(target('glm'), 30_000)).toBeNull();
  });

  it('a probe claim that never reports back expires', () => {
    const b = book();
    for (let i = 0; i < 12; i++) b.recordFailure('glm', 503, 0);
    b.beginAttempt(target('glm'), 30_000);
    expect(b.exclusion('glm', 30_000 + PROBE_CLAIM_TTL_MS - 1)).not.toBeNull();
    expect(b.exclusion('glm', 30_000 + PROBE_CLAIM_TTL_MS)).toBeNull();
  });

  it('the probe’s success closes the breaker; its failure reopens it', () => {
    const b = book();
    for (let i = 0; i < 12; i++) b.recordFailure('glm', 503, 0);
    b.beginAttempt(target('glm'), 30_000);
    b.recordFailure('glm', 503, 30_000);
    expect(b.view('glm', 30_000, null)).toMatchObject({ state: 'OPEN', halfOpenAt: 60_000 });
    b.beginAttempt(target('glm'), 60_000);
    b.recordSuccess('glm', 60_000);
    expect(b.view('glm', 60_000, null)).toMatchObject({ state: 'CLOSED', failures: 0 });
  });

  it('survives a restart: an OPEN breaker is read back OPEN from the store', () => {
    const repo = new MemoryRepo();
    const b = book(repo);
    for (let i = 0; i < 12; i++) b.recordFailure('glm', 503, 0);
    const again = book(repo);
    expect(again.view('glm', 10_000, null).state).toBe('OPEN');
    expect(again.view('glm', 30_000, null).state).toBe('HALF_OPEN');
  });

  it('writes only when the record changes; reads and healthy successes never write', () => {
    const repo = new MemoryRepo();
    const b = book(repo);
    for (let i = 0; i < 100; i++) b.recordSuccess('glm', i);
    b.exclusion('glm', 0);
    b.view('glm', 0, null);
    expect(repo.writes).toBe(0);
    for (let i = 0; i < 12; i++) b.recordFailure('glm', 503, 0);
    const after = repo.writes;
    b.recordFailure('glm', 503, 1); // OPEN: ignored
    b.exclusion('glm', 40_000); // lazy HALF_OPEN read
    expect(repo.writes).toBe(after);
  });

  it('reset clears one provider or all', () => {
    const repo = new MemoryRepo();
    const b = book(repo);
    for (let i = 0; i < 12; i++) {
      b.recordFailure('glm', 503, 0);
      b.recordFailure('kimi', 503, 0);
    }
    expect(b.reset('glm', [])).toEqual(['glm']);
    expect(b.view('glm', 0, null).state).toBe('CLOSED');
    expect(b.view('kimi', 0, null).state).toBe('OPEN');
    expect(b.reset(undefined, ['openai'])).toEqual(['kimi', 'openai']);
    expect(repo.rows.size).toBe(0);
  });
});
