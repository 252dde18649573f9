// The low-priority lane of one Claude subscription connection (SPEC R-CLA-05..15) as a pure state
// machine: `nextLane(state, event, now)` returns the new state and what the request should do.
// States: idle; active until the announced reset + 60 s (every request carries
// `anthropic-usage-limit: slow`); blocked (re-acceptance refused for 10 min after a max-wait finish,
// or until the lane budget's reset after `budget_exhausted`). Expiry is lazy (`laneAt`).
import type { SlowStatus, UnifiedHeaders } from './unifiedHeaders';

const SEC = 1_000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** R-CLA-06: the lane lasts until the announced reset plus this. */
export const LANE_RESET_MARGIN_MS = 60 * SEC;
/** R-CLA-10: after a max-wait finish the offer is not accepted again for this long. */
export const REACCEPT_BLOCK_MS = 10 * MIN;
/** R-CLA-13: a `budget_exhausted` is remembered at most this long. */
export const BUDGET_MEMORY_MAX_MS = 8 * DAY;
/** When the limit 429 announces no reset at all, the lane lasts one 5-hour window. */
export const DEFAULT_WINDOW_MS = 5 * HOUR;
/** Two 5-hour reset times closer than this are the same window (rounding, clock skew). */
export const WINDOW_TOLERANCE_MS = 60 * SEC;

export const LANE_HEADER = 'anthropic-usage-limit';
export const LANE_HEADER_VALUE = 'slow';

export type LaneEndReason =
  | 'window_over'
  | 'max_wait'
  | 'weekly_limit'
  | 'budget_exhausted'
  | 'off'
  | 'ineligible'
  | 'window_changed'
  | 'extra_usage';

export type LaneState =
  | { kind: 'idle' }
  | {
      kind: 'active';
      enteredAt: number;
      /** Announced reset + 60 s (epoch ms). */
      until: number;
      /** The 5-hour window's reset when the lane was entered; a different one ends the lane. */
      windowResetAt: number | null;
      slowStatus: SlowStatus | null;
    }
  | { kind: 'blocked'; until: number; reason: 'max_wait' | 'budget_exhausted' };

export type LaneEvent =
  /** A limit 429 (R-CLA-02) on a request sent without the slow header. */
  | { type: 'limit'; unified: UnifiedHeaders }
  /** Any answer to a request that carried the slow header (status null: no answer). */
  | { type: 'slow_response'; status: number | null; unified: UnifiedHeaders }
  /** A request's waits reached the max-wait (or its deadline): the controlled `max_wait` finish. */
  | { type: 'max_wait' };

export type LaneDecision =
  /** Not the lane's business: the answer takes the normal path. */
  | { kind: 'pass' }
  /** Lane entered or already on: retry at once on the same account with the slow header (R-CLA-05). */
  | { kind: 'retry_slow' }
  /** The limit 429 is not accepted: normal cooldown path. */
  | { kind: 'declined'; reason: 'no_offer' | 'max_wait_block' | 'budget_exhausted' }
  /** Lane holds; the answer is returned as it is (a success, or an error unrelated to the limit). */
  | { kind: 'keep' }
  /** slot_busy / 529: wait the (clamped, jittered) retry-after and retry, within the max-wait. */
  | { kind: 'wait'; retryAfterSec: number | null; maxWaitSec: number | null }
  /** The lane ended with this answer; it continues down the normal cooldown path (R-CLA-12). */
  | { kind: 'ended'; reason: LaneEndReason };

export interface LaneStep {
  state: LaneState;
  decision: LaneDecision;
  /** Set when this step ended an active lane. */
  ended: LaneEndReason | null;
}

export const IDLE: LaneState = { kind: 'idle' };

/** The state as of `now`: an active lane past its end and a block past its end read as idle. */
export function laneAt(s: LaneState, now: number): LaneState {
  if (s.kind !== 'idle' && now >= s.until) return IDLE;
  return s;
}

const step = (state: LaneState, decision: LaneDecision, ended: LaneEndReason | null = null): LaneStep => ({ state, decision, ended });

export function nextLane(prev: LaneState, e: LaneEvent, now: number): LaneStep {
  const s = laneAt(prev, now);
  switch (e.type) {
    case 'limit':
      return onLimit(s, e.unified, now);
    case 'slow_response':
      return onSlowResponse(s, e.status, e.unified, now);
    case 'max_wait': {
      const blockUntil = now + REACCEPT_BLOCK_MS;
      if (s.kind === 'blocked' && s.until >= blockUntil) return step(s, { kind: 'ended', reason: 'max_wait' });
      return step({ kind: 'blocked', until: blockUntil, reason: 'max_wait' }, { kind: 'ended', reason: 'max_wait' }, s.kind === 'active' ? 'max_wait' : null);
    }
  }
}

function onLimit(s: LaneState, u: UnifiedHeaders, now: number): LaneStep {
  if (s.kind === 'active') return step(s, { kind: 'retry_slow' });
  if (s.kind === 'blocked') {
    return step(s, { kind: 'declined', reason: s.reason === 'max_wait' ? 'max_wait_block' : 'budget_exhausted' });
  }
  if (u.slow.offer !== 'treatment') return step(s, { kind: 'declined', reason: 'no_offer' });
  const announced = u.reset ?? u.fiveHour?.resetsAt ?? now + DEFAULT_WINDOW_MS;
  const until = Math.min(Math.max(announced, now) + LANE_RESET_MARGIN_MS, now + BUDGET_MEMORY_MAX_MS);
  return step(
    { kind: 'active', enteredAt: now, until, windowResetAt: u.fiveHour?.resetsAt ?? u.reset, slowStatus: u.slow.status },
    { kind: 'retry_slow' },
  );
}

function onSlowResponse(s: LaneState, status: number | null, u: UnifiedHeaders, now: number): LaneStep {
  if (s.kind !== 'active') {
    // The lane ended (elsewhere, or its window passed) while this request was out.
    return step(s, { kind: 'pass' });
  }
  const slow = u.slow.status;
  const end = (reason: LaneEndReason, next: LaneState = IDLE) => step(next, { kind: 'ended', reason }, reason);
  // R-CLA-12: paid overage covers the limit now, whatever else the answer says.
  if (slow === 'ineligible' && u.overage?.inUse === true) return end('extra_usage');
  if (slow === 'weekly_limit' || slow === 'off' || slow === 'ineligible') return end(slow);
  if (slow === 'budget_exhausted') {
    // R-CLA-13: remembered until the lane budget's announced reset (else the weekly one), at most 8 days.
    const announced = u.slow.budgetResetAt ?? u.sevenDay?.resetsAt ?? now + BUDGET_MEMORY_MAX_MS;
    const until = Math.min(Math.max(announced, now + LANE_RESET_MARGIN_MS), now + BUDGET_MEMORY_MAX_MS);
    return end('budget_exhausted', { kind: 'blocked', until, reason: 'budget_exhausted' });
  }
  const newWindow = u.fiveHour?.resetsAt ?? null;
  if (newWindow !== null && s.windowResetAt !== null && Math.abs(newWindow - s.windowResetAt) > WINDOW_TOLERANCE_MS) {
    return end('window_changed');
  }
  const kept: LaneState = slow && slow !== s.slowStatus ? { ...s, slowStatus: slow } : s;
  // R-CLA-09: slot_busy (a 429) or a 529 waits. A 429 that speaks the unified headers without an
  // ending status is the lane's too (never cooled while the lane holds, R-CLA-07); a bare 429
  // without them is a burst limit and takes the normal path.
  if (status === 529 || (status === 429 && (slow === 'slot_busy' || u.present))) {
    return step(kept, { kind: 'wait', retryAfterSec: u.slow.retryAfterSec, maxWaitSec: u.slow.maxWaitSec });
  }
  if (status === 429) return step(kept, { kind: 'pass' });
  return step(kept, { kind: 'keep' });
}
