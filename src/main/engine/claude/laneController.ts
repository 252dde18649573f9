// Holds the low-priority lane state of every Claude connection, in memory only (R-CLA-15: after a
// restart another limit 429 is needed), applies events through the pure machine, and answers the
// dashboard's view. Idle lanes are not stored, so the map holds only lanes that are on or blocked.
import { IDLE, laneAt, nextLane, type LaneDecision, type LaneEndReason, type LaneEvent, type LaneState } from './lowPriorityLane';
import type { SlowStatus } from './unifiedHeaders';

export interface LaneView {
  state: 'idle' | 'active' | 'blocked';
  /** Active: when the lane ends; blocked: when the offer may be accepted again. */
  until: number | null;
  slowStatus: SlowStatus | null;
  blockedBy: 'max_wait' | 'budget_exhausted' | null;
  lastEnd: { reason: LaneEndReason; at: number } | null;
}

export type LaneEnd = { reason: LaneEndReason; at: number };

/**
 * Team mode (issue 26): told of each lane change an event made here (not of lanes applied from the
 * team, nor of a lane forgotten because of this instance's configuration).
 */
export type LaneObserver = (connectionId: string, state: LaneState, lastEnd: LaneEnd | null) => void;

export class LaneController {
  private readonly lanes = new Map<string, LaneState>();
  private readonly lastEnds = new Map<string, LaneEnd>();
  private readonly listeners = new Set<(connectionId: string) => void>();
  /** Team mode: publishes local changes (null: alone). */
  observer: LaneObserver | null = null;

  /** R-CLA-06: true while requests on this connection carry `anthropic-usage-limit: slow`. */
  isActive(connectionId: string, now: number): boolean {
    return this.state(connectionId, now).kind === 'active';
  }

  state(connectionId: string, now: number): LaneState {
    const s = this.lanes.get(connectionId);
    if (!s) return IDLE;
    const cur = laneAt(s, now);
    if (cur.kind === 'idle') {
      this.lanes.delete(connectionId);
      if (s.kind === 'active') this.lastEnds.set(connectionId, { reason: 'window_over', at: s.until });
    }
    return cur;
  }

  apply(connectionId: string, event: LaneEvent, now: number): LaneDecision {
    const before = this.state(connectionId, now);
    const r = nextLane(before, event, now);
    if (r.state.kind === 'idle') this.lanes.delete(connectionId);
    else this.lanes.set(connectionId, r.state);
    if (r.ended) this.lastEnds.set(connectionId, { reason: r.ended, at: now });
    if (r.state !== before) {
      for (const fn of this.listeners) fn(connectionId);
      this.observer?.(connectionId, r.state, this.lastEnds.get(connectionId) ?? null);
    }
    return r.decision;
  }

  /**
   * Team mode: the lane another instance holds for this account (every instance then sends the
   * slow header, and none cools the account on the limit 429 the lane answers). Not published again.
   */
  applyRemote(connectionId: string, state: LaneState, lastEnd: LaneEnd | null): void {
    if (state.kind === 'idle') this.lanes.delete(connectionId);
    else this.lanes.set(connectionId, state);
    if (lastEnd) this.lastEnds.set(connectionId, lastEnd);
    for (const fn of this.listeners) fn(connectionId);
  }

  view(connectionId: string, now: number): LaneView {
    const s = this.state(connectionId, now);
    return {
      state: s.kind,
      until: s.kind === 'idle' ? null : s.until,
      slowStatus: s.kind === 'active' ? s.slowStatus : null,
      blockedBy: s.kind === 'blocked' ? s.reason : null,
      lastEnd: this.lastEnds.get(connectionId) ?? null,
    };
  }

  /** Feature switched off, connection removed or re-credentialed. */
  forget(connectionId: string): void {
    const had = this.lanes.delete(connectionId);
    this.lastEnds.delete(connectionId);
    if (had) for (const fn of this.listeners) fn(connectionId);
  }

  onChange(fn: (connectionId: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}
