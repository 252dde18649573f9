// The low-priority lane as a pure machine (R-CLA-05..15), and its wait arithmetic (R-CLA-09..11).
import { describe, expect, it } from 'vitest';
import { LaneController } from '../../../src/main/engine/claude/laneController';
import {
  BUDGET_MEMORY_MAX_MS,
  IDLE,
  laneAt,
  nextLane,
  REACCEPT_BLOCK_MS,
  type LaneState,
} from '../../../src/main/engine/claude/lowPriorityLane';
import { slowMaxWaitMs, slowRetryDelayMs, waitBudgetMs } from '../../../src/main/engine/claude/slowWait';
import { parseUnifiedHeaders } from '../../../src/main/engine/claude/unifiedHeaders';
import { seededRandom } from '../../../src/main/engine/random';

const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);
const HOUR = 3_600_000;
const P = 'anthropic-ratelimit-unified-';
const S = (ms: number) => String(Math.floor(ms / 1000));
const H = (h: Record<string, string>) => parseUnifiedHeaders(Object.fromEntries(Object.entries(h).map(([k, v]) => [`${P}${k}`, v])));

const RESET = NOW + 2 * HOUR;
const limit = (extra: Record<string, string> = {}) =>
  H({ status: 'rejected', reset: S(RESET), '5h-reset': S(RESET), 'slow-offer': 'treatment', ...extra });
const slow = (status: string, extra: Record<string, string> = {}) => H({ 'slow-status': status, '5h-reset': S(RESET), ...extra });

function entered(): LaneState {
  const r = nextLane(IDLE, { type: 'limit', unified: limit() }, NOW);
  expect(r.state.kind).toBe('active');
  return r.state;
}

describe('entering the lane', () => {
  it('R-CLA-02/05: a limit 429 with the offer is accepted: retry now, slow, same account', () => {
    const r = nextLane(IDLE, { type: 'limit', unified: limit() }, NOW);
    expect(r.decision).toEqual({ kind: 'retry_slow' });
    expect(r.state).toMatchObject({ kind: 'active', enteredAt: NOW, windowResetAt: RESET });
  });

  it('R-CLA-06: the lane lasts until the announced reset + 60 s, then reads idle', () => {
    const s = entered();
    expect(s.kind === 'active' && s.until).toBe(RESET + 60_000);
    expect(laneAt(s, RESET + 59_999).kind).toBe('active');
    expect(laneAt(s, RESET + 60_000).kind).toBe('idle');
  });

  it('R-CLA-02: without the offer (account not eligible) the limit 429 is declined', () => {
    const r = nextLane(IDLE, { type: 'limit', unified: H({ status: 'rejected', reset: S(RESET) }) }, NOW);
    expect(r.decision).toEqual({ kind: 'declined', reason: 'no_offer' });
    expect(r.state).toBe(IDLE);
  });

  it('a limit 429 that announces no reset gets one 5-hour window; one in the past gets the margin only', () => {
    const none = nextLane(IDLE, { type: 'limit', unified: H({ status: 'rejected', 'slow-offer': 'treatment' }) }, NOW).state;
    expect(none.kind === 'active' && none.until).toBe(NOW + 5 * HOUR + 60_000);
    const past = nextLane(IDLE, { type: 'limit', unified: limit({ reset: S(NOW - HOUR), '5h-reset': S(NOW - HOUR) }) }, NOW).state;
    expect(past.kind === 'active' && past.until).toBe(NOW + 60_000);
  });

  it('another limit 429 while the lane is on just joins it', () => {
    const s = entered();
    const r = nextLane(s, { type: 'limit', unified: limit() }, NOW + 1000);
    expect(r.decision).toEqual({ kind: 'retry_slow' });
    expect(r.state).toBe(s);
  });
});

describe('inside the lane', () => {
  it('R-CLA-08: active and not_needed keep it; a success is returned as is', () => {
    let s = entered();
    for (const st of ['active', 'not_needed']) {
      const r = nextLane(s, { type: 'slow_response', status: 200, unified: slow(st) }, NOW + 1000);
      expect(r.decision).toEqual({ kind: 'keep' });
      expect(r.state).toMatchObject({ kind: 'active', slowStatus: st });
      s = r.state;
    }
  });

  it('R-CLA-09: slot_busy (429) and 529 wait with the announced retry-after and max-wait', () => {
    const s = entered();
    expect(nextLane(s, { type: 'slow_response', status: 429, unified: slow('slot_busy', { 'slow-retry-after': '5', 'slow-max-wait': '60' }) }, NOW).decision).toEqual({
      kind: 'wait',
      retryAfterSec: 5,
      maxWaitSec: 60,
    });
    expect(nextLane(s, { type: 'slow_response', status: 529, unified: parseUnifiedHeaders({}) }, NOW).decision).toEqual({
      kind: 'wait',
      retryAfterSec: null,
      maxWaitSec: null,
    });
  });

  it('R-CLA-07: a unified-limit 429 inside the lane is never passed on to the cooldown path; a bare burst 429 is', () => {
    const s = entered();
    expect(nextLane(s, { type: 'slow_response', status: 429, unified: limit() }, NOW).decision.kind).toBe('wait');
    expect(nextLane(s, { type: 'slow_response', status: 429, unified: parseUnifiedHeaders({}) }, NOW).decision).toEqual({ kind: 'pass' });
  });

  it('R-CLA-12: weekly_limit, off, ineligible end the lane; the answer continues down the normal path', () => {
    for (const st of ['weekly_limit', 'off', 'ineligible']) {
      const r = nextLane(entered(), { type: 'slow_response', status: 429, unified: slow(st) }, NOW);
      expect(r.decision).toEqual({ kind: 'ended', reason: st });
      expect(r.ended).toBe(st);
      expect(r.state).toBe(IDLE);
    }
  });

  it('R-CLA-12: ineligible + overage in use ends it as extra_usage; overage alone does not', () => {
    const r = nextLane(entered(), { type: 'slow_response', status: 200, unified: slow('ineligible', { 'overage-in-use': 'true' }) }, NOW);
    expect(r.decision).toEqual({ kind: 'ended', reason: 'extra_usage' });
    const alone = nextLane(entered(), { type: 'slow_response', status: 200, unified: slow('active', { 'overage-in-use': 'true' }) }, NOW);
    expect(alone.decision).toEqual({ kind: 'keep' });
  });

  it('R-CLA-12: a change of the 5-hour window ends the lane (a minute of rounding is the same window)', () => {
    const same = nextLane(entered(), { type: 'slow_response', status: 200, unified: slow('active', { '5h-reset': S(RESET + 30_000) }) }, NOW);
    expect(same.decision).toEqual({ kind: 'keep' });
    const moved = nextLane(entered(), { type: 'slow_response', status: 200, unified: slow('active', { '5h-reset': S(RESET + HOUR) }) }, NOW);
    expect(moved.decision).toEqual({ kind: 'ended', reason: 'window_changed' });
  });

  it('R-CLA-13: budget_exhausted blocks re-entry until the budget reset, at most 8 days', () => {
    const budgetReset = NOW + 3 * 24 * HOUR;
    const r = nextLane(entered(), { type: 'slow_response', status: 429, unified: slow('budget_exhausted', { 'slow-budget-reset': S(budgetReset) }) }, NOW);
    expect(r.decision).toEqual({ kind: 'ended', reason: 'budget_exhausted' });
    expect(r.state).toEqual({ kind: 'blocked', until: budgetReset, reason: 'budget_exhausted' });
    expect(nextLane(r.state, { type: 'limit', unified: limit() }, budgetReset - 1).decision).toEqual({ kind: 'declined', reason: 'budget_exhausted' });
    expect(nextLane(r.state, { type: 'limit', unified: limit() }, budgetReset).decision).toEqual({ kind: 'retry_slow' });
    const far = nextLane(entered(), { type: 'slow_response', status: 429, unified: slow('budget_exhausted', { 'slow-budget-reset': S(NOW + 30 * 24 * HOUR) }) }, NOW);
    expect(far.state).toMatchObject({ until: NOW + BUDGET_MEMORY_MAX_MS });
    const weekly = nextLane(entered(), { type: 'slow_response', status: 429, unified: slow('budget_exhausted', { '7d-reset': S(NOW + 2 * 24 * HOUR) }) }, NOW);
    expect(weekly.state).toMatchObject({ until: NOW + 2 * 24 * HOUR });
  });

  it('R-CLA-10: a max-wait finish ends the lane and refuses the offer for 10 minutes', () => {
    const r = nextLane(entered(), { type: 'max_wait' }, NOW);
    expect(r.ended).toBe('max_wait');
    expect(r.state).toEqual({ kind: 'blocked', until: NOW + REACCEPT_BLOCK_MS, reason: 'max_wait' });
    expect(nextLane(r.state, { type: 'limit', unified: limit() }, NOW + REACCEPT_BLOCK_MS - 1).decision).toEqual({ kind: 'declined', reason: 'max_wait_block' });
    expect(nextLane(r.state, { type: 'limit', unified: limit() }, NOW + REACCEPT_BLOCK_MS).decision).toEqual({ kind: 'retry_slow' });
  });

  it('an answer to a slow request after the lane is over takes the normal path', () => {
    const s = entered();
    expect(nextLane(s, { type: 'slow_response', status: 429, unified: limit() }, RESET + 60_000).decision).toEqual({ kind: 'pass' });
  });
});

describe('wait arithmetic (R-CLA-09, R-CLA-11)', () => {
  const fixed = (v: number) => ({ next: () => v });

  it('retry-after 5 s waits 3.5-6.5 s; 1 and 900 are clamped to 5 and 600; absent is 20 s', () => {
    expect(slowRetryDelayMs(5, fixed(0))).toBe(3_500);
    expect(slowRetryDelayMs(5, fixed(0.5))).toBe(5_000);
    expect(slowRetryDelayMs(5, fixed(0.999999))).toBeCloseTo(6_500, -1);
    expect(slowRetryDelayMs(1, fixed(0.5))).toBe(5_000);
    expect(slowRetryDelayMs(900, fixed(0.5))).toBe(600_000);
    expect(slowRetryDelayMs(null, fixed(0.5))).toBe(20_000);
    const r = seededRandom(7);
    for (let i = 0; i < 500; i++) {
      const d = slowRetryDelayMs(20, r);
      expect(d).toBeGreaterThanOrEqual(14_000);
      expect(d).toBeLessThanOrEqual(26_000);
    }
  });

  it('max-wait defaults to 20 min and is clamped to 1 min-6 h', () => {
    expect(slowMaxWaitMs(null)).toBe(20 * 60_000);
    expect(slowMaxWaitMs(60)).toBe(60_000);
    expect(slowMaxWaitMs(5)).toBe(60_000);
    expect(slowMaxWaitMs(100_000)).toBe(6 * HOUR);
  });

  it('the budget is the smaller of the max-wait left and the deadline minus 5 s', () => {
    expect(waitBudgetMs({ now: NOW + 10_000, firstBusyAt: NOW, maxWaitMs: 60_000, deadlineAt: null })).toBe(50_000);
    expect(waitBudgetMs({ now: NOW + 10_000, firstBusyAt: NOW, maxWaitMs: 20 * 60_000, deadlineAt: NOW + 30_000 })).toBe(15_000);
    expect(waitBudgetMs({ now: NOW + 26_000, firstBusyAt: NOW, maxWaitMs: 20 * 60_000, deadlineAt: NOW + 30_000 })).toBeLessThan(0);
  });
});

describe('lane controller (R-CLA-15: in memory)', () => {
  it('holds state per connection, forgets expired lanes lazily, and a new controller starts idle', () => {
    const c = new LaneController();
    const changes: string[] = [];
    c.onChange((id) => changes.push(id));
    expect(c.apply('a', { type: 'limit', unified: limit() }, NOW)).toEqual({ kind: 'retry_slow' });
    expect(c.isActive('a', NOW)).toBe(true);
    expect(c.isActive('b', NOW)).toBe(false);
    expect(c.view('a', NOW)).toMatchObject({ state: 'active', until: RESET + 60_000, lastEnd: null });
    expect(changes).toEqual(['a']);
    expect(c.isActive('a', RESET + 60_000)).toBe(false);
    expect(c.view('a', RESET + 60_000)).toMatchObject({ state: 'idle', lastEnd: { reason: 'window_over', at: RESET + 60_000 } });
    expect(new LaneController().isActive('a', NOW)).toBe(false);
  });

  it('reports a lane end and the block in its view', () => {
    const c = new LaneController();
    c.apply('a', { type: 'limit', unified: limit() }, NOW);
    c.apply('a', { type: 'max_wait' }, NOW + 1);
    expect(c.view('a', NOW + 1)).toEqual({
      state: 'blocked',
      until: NOW + 1 + REACCEPT_BLOCK_MS,
      slowStatus: null,
      blockedBy: 'max_wait',
      lastEnd: { reason: 'max_wait', at: NOW + 1 },
    });
  });
});
