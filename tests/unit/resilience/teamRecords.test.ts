// The merge rules of team mode's resilience records (issue 26, resilience/shared/records.ts): a
// `set` record replaces, a `join` record combines with the state held as one process would have
// combined both failures, so instances that learn failures at the same moment agree afterwards.
import { describe, expect, it } from 'vitest';
import { joinBreaker, joinGate, joinHealth, joinLock, unionWindow, type SharedHealth, type SharedLock } from '../../../src/main/engine/resilience/shared/records';
import { CLOSED_RECORD, type BreakerRecord } from '../../../src/main/engine/resilience/providerBreaker';

const NOW = 1_000_000;
const clean: SharedHealth = {
  testStatus: 'active',
  rateLimitedUntil: null,
  backoffLevel: 0,
  lastError: null,
  lastErrorType: null,
  errorCode: null,
  lastErrorAt: null,
  expiredRetries: 0,
};
const cooling = (until: number, level: number, at = NOW): SharedHealth => ({
  ...clean,
  testStatus: 'unavailable',
  rateLimitedUntil: until,
  backoffLevel: level,
  lastError: `cooled at ${at}`,
  lastErrorType: 'rate_limit_exceeded',
  errorCode: '429',
  lastErrorAt: at,
});

describe('connection health', () => {
  it('join: the later deadline, the higher backoff level, the later failure’s error', () => {
    const local = cooling(NOW + 60_000, 1, NOW - 5);
    expect(joinHealth(local, { op: 'join', h: cooling(NOW + 3_000, 1, NOW) }, NOW)).toEqual({ ...cooling(NOW + 3_000, 1, NOW), rateLimitedUntil: NOW + 60_000 });
    expect(joinHealth(cooling(NOW + 3_000, 0), { op: 'join', h: cooling(NOW + 6_000, 2) }, NOW)).toMatchObject({ rateLimitedUntil: NOW + 6_000, backoffLevel: 2 });
  });

  it('join: an ended cooldown counts for nothing; a terminal state here stays; a terminal record wins', () => {
    expect(joinHealth(cooling(NOW - 1, 1), { op: 'join', h: { ...clean, lastErrorAt: NOW, lastError: 'x' } }, NOW)).toMatchObject({ rateLimitedUntil: null, testStatus: 'active', backoffLevel: 1 });
    const banned: SharedHealth = { ...clean, testStatus: 'banned', lastError: 'banned' };
    expect(joinHealth(banned, { op: 'join', h: cooling(NOW + 3_000, 1) }, NOW)).toEqual(banned);
    expect(joinHealth(cooling(NOW + 3_000, 1), { op: 'join', h: banned }, NOW)).toEqual(banned);
  });

  it('set: replaces (a success, an operator clear), even a longer cooldown', () => {
    expect(joinHealth(cooling(NOW + 60_000, 3), { op: 'set', h: clean }, NOW)).toEqual(clean);
  });
});

describe('model lockouts', () => {
  const lock = (expiresAt: number, count: number, level: number, guessed = false): SharedLock => ({
    provider: 'openai',
    model: 'm1',
    family: 'm1',
    scope: 'exact',
    reason: 'rate_limit_exceeded',
    status: 429,
    origin: 'rate_limit',
    failureCount: count,
    backoffLevel: level,
    lockedAt: NOW,
    expiresAt,
    forgetAt: expiresAt + 1_000,
    guessed,
  });

  it('join keeps the later expiry (with whether it was a guess) and the higher counts; set replaces', () => {
    const local = lock(NOW + 60_000, 1, 1, false);
    expect(joinLock(local, { op: 'join', e: lock(NOW + 3_000, 2, 2, true) })).toMatchObject({ expiresAt: NOW + 60_000, failureCount: 2, backoffLevel: 2, guessed: false });
    expect(joinLock(undefined, { op: 'join', e: local })).toEqual(local);
    expect(joinLock(local, { op: 'set', e: lock(NOW, 0, 0) })).toEqual(lock(NOW, 0, 0));
  });
});

describe('breakers', () => {
  const closed = (window: BreakerRecord['window']): BreakerRecord => ({ ...CLOSED_RECORD, state: 'CLOSED', window, failures: window.filter((o) => !o.ok).length, lastFailureAt: window.at(-1)?.at ?? null, lastFailureStatus: 503 });
  const open = (openedAt: number): BreakerRecord => ({ ...closed([]), state: 'OPEN', openedAt, halfOpenAt: openedAt + 30_000, wide: true, holdMs: 30_000, opens: 1 });

  it('join counts the failures of both windows once each', () => {
    const a = closed([{ at: 1, ok: false, conn: 'c_a' }]);
    const b = closed([{ at: 1, ok: false, conn: 'c_a' }, { at: 2, ok: false, conn: 'c_b' }]);
    expect(joinBreaker(a, { op: 'join', r: b }, 20)).toMatchObject({ state: 'CLOSED', failures: 2, lastFailureAt: 2 });
    expect(unionWindow(a.window, b.window, 1)).toEqual([{ at: 2, ok: false, conn: 'c_b' }]);
  });

  it('join never closes an opening, and of two openings keeps the later; set replaces', () => {
    expect(joinBreaker(open(5), { op: 'join', r: closed([{ at: 6, ok: false, conn: 'c_a' }]) }, 20)).toEqual(open(5));
    expect(joinBreaker(open(5), { op: 'join', r: open(9) }, 20)).toEqual(open(9));
    expect(joinBreaker(open(9), { op: 'join', r: open(5) }, 20)).toEqual(open(9));
    expect(joinBreaker(open(9), { op: 'set', r: closed([]) }, 20)).toEqual(closed([]));
  });
});

describe('the window gate', () => {
  it('join keeps the failures of both and the later cooling end', () => {
    expect(joinGate({ failures: [1, 3], coolingUntil: null }, { op: 'join', e: { failures: [2, 3], coolingUntil: 50 } }, 5)).toEqual({ failures: [1, 2, 3], coolingUntil: 50 });
    expect(joinGate({ failures: [1, 3], coolingUntil: 90 }, { op: 'join', e: { failures: [4], coolingUntil: 50 } }, 2)).toEqual({ failures: [3, 4], coolingUntil: 90 });
  });
});
