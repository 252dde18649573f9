// The combo wait policy (R-SQ-16..25) and the answer when every target was excluded (R-DBG-01..03).
import { describe, expect, it } from 'vitest';
import type { Exclusion } from '../../../src/main/engine/resilience/port';
import { decideWait, excludedAnswer, type WaitInput } from '../../../src/main/engine/routing/combos/waitPolicy';

const NOW = 1_000_000;
const cooling = (ms: number, cause = 'rate_limit_exceeded'): Exclusion => ({ reason: 'cooling_down', until: NOW + ms, detail: null, cause });
const locked = (ms: number, cause: string): Exclusion => ({ reason: 'model_lockout', until: NOW + ms, detail: null, cause });
const open = (ms: number): Exclusion => ({ reason: 'circuit_open', until: NOW + ms, detail: null });
const terminal: Exclusion = { reason: 'terminal', until: null, detail: 'banned' };

const input = (over: Partial<WaitInput> = {}): WaitInput => ({
  settings: { enabled: true, maxWaitMs: 30_000, maxAttempts: 2, budgetMs: 60_000 },
  optedOut: false,
  waitsTaken: 0,
  elapsedMs: 0,
  now: NOW,
  retryable: true,
  targets: [
    { ex: cooling(2_000), spent: true },
    { ex: cooling(5_000), spent: true },
  ],
  ...over,
});

describe('decideWait', () => {
  it('waits for the earliest transient exclusion when no target can be tried now, and names that target', () => {
    expect(decideWait(input())).toEqual({ wait: true, ms: 2_000, until: NOW + 2_000, first: 0 });
    const later = input({ targets: [{ ex: cooling(5_000), spent: true }, { ex: cooling(2_000), spent: true }] });
    expect(decideWait(later)).toEqual({ wait: true, ms: 2_000, until: NOW + 2_000, first: 1 });
  });

  it('allows a wait exactly at maxWaitMs and within the budget (R-SQ-23: 0 < wait <= maxWaitMs, budget >= wait)', () => {
    expect(decideWait(input({ settings: { enabled: true, maxWaitMs: 2_000, maxAttempts: 1, budgetMs: 2_000 } })).wait).toBe(true);
  });

  it.each([
    ['longer than maxWaitMs', { settings: { enabled: true, maxWaitMs: 1_999, maxAttempts: 2, budgetMs: 60_000 } }, 'too_long'],
    ['after maxAttempts waits', { waitsTaken: 2 }, 'attempts'],
    ['past the budget', { elapsedMs: 58_001 }, 'budget'],
    ['when disabled globally', { settings: { enabled: false, maxWaitMs: 30_000, maxAttempts: 2, budgetMs: 60_000 } }, 'disabled'],
    ['when the combo opts out', { optedOut: true }, 'opted_out'],
    ['after a failure no wait fixes', { retryable: false }, 'not_retryable'],
  ])('refuses %s', (_what, over, why) => {
    const d = decideWait(input(over as Partial<WaitInput>));
    expect(d).toMatchObject({ wait: false, why });
  });

  it('does not wait while some target may be tried now and has not failed', () => {
    expect(decideWait(input({ targets: [{ ex: cooling(2_000), spent: true }, { ex: null, spent: false }] }))).toMatchObject({
      wait: false,
      why: 'target_available',
    });
  });

  it('a target that just failed (and is not excluded) cannot serve: wait for the one that asked to wait', () => {
    expect(decideWait(input({ targets: [{ ex: cooling(3_000), spent: true }, { ex: null, spent: true }] }))).toEqual({ wait: true, ms: 3_000, until: NOW + 3_000, first: 0 });
  });

  it.each(['quota_exhausted', 'auth_error', 'not_found', 'forbidden', 'credits_exhausted'])('never waits on %s (R-SQ-18)', (cause) => {
    const d = decideWait(input({ targets: [{ ex: locked(1_000, cause), spent: true }, { ex: cooling(1_000, cause), spent: true }] }));
    expect(d).toMatchObject({ wait: false, why: 'nothing_transient' });
  });

  it('waits on an open breaker and on a short model lockout (R-SQ-19: pre-dispatch waits)', () => {
    expect(decideWait(input({ targets: [{ ex: open(4_000), spent: false }, { ex: locked(1_500, 'rate_limit_exceeded'), spent: false }] }))).toMatchObject({
      wait: true,
      ms: 1_500,
    });
  });

  it('a mix of transient and non-transient exclusions waits for the transient one', () => {
    expect(decideWait(input({ targets: [{ ex: locked(500, 'quota_exhausted'), spent: false }, { ex: cooling(2_000), spent: false }] }))).toMatchObject({
      wait: true,
      ms: 2_000,
    });
  });
});

describe('excludedAnswer', () => {
  it('rate limits that lift by themselves answer 429 at the earliest expiry (R-SQ-24)', () => {
    expect(excludedAnswer([cooling(9_000), locked(4_000, 'rate_limit_exceeded')], NOW)).toEqual({ kind: 'rate_limited', until: NOW + 4_000 });
  });

  it('other self-lifting timers answer 503 cooling (R-DBG-01)', () => {
    expect(excludedAnswer([open(30_000), cooling(60_000)], NOW)).toEqual({ kind: 'cooling', until: NOW + 30_000 });
  });

  it('only quota / credential / not-found timers: ALL_TARGETS_SKIPPED (R-SQ-25)', () => {
    expect(excludedAnswer([locked(3_600_000, 'quota_exhausted'), cooling(10_000, 'auth_error')], NOW)).toEqual({ kind: 'skipped' });
  });

  it('no timer at all: no executable targets (R-DBG-03)', () => {
    expect(excludedAnswer([terminal], NOW)).toEqual({ kind: 'none' });
    expect(excludedAnswer([], NOW)).toEqual({ kind: 'none' });
  });
});
