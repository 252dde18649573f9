// The Overview's usage: the report for the chosen range (requests, cost, latency, breakdowns, time
// series) and the state timeline over the same period, both read from the engine. Nothing is
// pushed for usage: the store reads again when the range changes and when the `logs` push says
// requests finished, at most once per THROTTLE_MS (a busy proxy pushes many batches a second),
// and only while the Overview is open; pushes that arrive while it is closed make the next
// opening read once.
import { createStore } from 'zustand/vanilla';
import type { StateTimelineView, UsageRange, UsageReport } from '../../shared/usage';
import { describeError } from '../lib/errors';
import { reportLoadError, type StoreContext } from './context';

/** The shortest gap between two re-reads caused by `logs` pushes. */
export const THROTTLE_MS = 2_000;

/** Runs `fn` after `ms`; returns a cancel. Injected so tests drive time by hand. */
export type Schedule = (fn: () => void, ms: number) => () => void;

export const realSchedule: Schedule = (fn, ms) => {
  const t = setTimeout(fn, ms);
  return () => clearTimeout(t);
};

export interface UsageState {
  range: UsageRange;
  /** The last report read for `range` (null until one arrived, or after the range changed). */
  report: UsageReport | null;
  timeline: StateTimelineView | null;
  /** Why the state timeline could not be read (the rest of the page still shows). */
  timelineError: string | null;
  /** A re-read after the first failed: the last report stays on screen with this note. */
  refreshError: string | null;
  loading: boolean;
  setRange(range: UsageRange): Promise<void>;
  /** Reads the report (and then the timeline over its period). */
  load(): Promise<void>;
  /** A `logs` push: requests finished, so the figures moved. */
  noteRequests(): void;
  /** The Overview is open (returns the close). */
  watch(): () => void;
}

export function createUsageStore(ctx: StoreContext, schedule: Schedule = realSchedule) {
  let seq = 0;
  let watchers = 0;
  /** Requests finished while nobody watched. */
  let stale = false;
  /** The throttle window: set while a re-read from a push ran less than THROTTLE_MS ago. */
  let windowOpen: (() => void) | null = null;
  /** A push came in during the window: read once more when it closes. */
  let pending = false;

  const store = createStore<UsageState>()((set, get) => ({
    range: 'day',
    report: null,
    timeline: null,
    timelineError: null,
    refreshError: null,
    loading: false,
    async setRange(range) {
      if (range === get().range) return;
      set({ range, report: null, timeline: null, timelineError: null, refreshError: null });
      await get().load();
    },
    async load() {
      const my = ++seq;
      const range = get().range;
      const background = get().report !== null;
      stale = false;
      set({ loading: true });
      try {
        const report = await ctx.bridge.getUsage({ range });
        if (my !== seq) return;
        set({ report, refreshError: null });
        try {
          const timeline = await ctx.bridge.getStateTimeline({ from: report.from, to: report.to });
          if (my === seq) set({ timeline, timelineError: null });
        } catch (err) {
          if (my === seq) set({ timelineError: describeError(err).message });
        }
      } catch (err) {
        if (my !== seq) return;
        if (background) {
          const e = describeError(err);
          if (e.unauthorized) ctx.onUnauthorized();
          set({ refreshError: e.message });
        } else reportLoadError(ctx, 'usage', err, 'Could not load usage');
      } finally {
        if (my === seq) set({ loading: false });
      }
    },
    noteRequests() {
      if (watchers === 0) {
        stale = true;
        return;
      }
      if (windowOpen) {
        pending = true;
        return;
      }
      void get().load();
      openWindow();
    },
    watch() {
      watchers++;
      if (stale) void get().load();
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        watchers--;
      };
    },
  }));

  function openWindow(): void {
    windowOpen = schedule(() => {
      windowOpen = null;
      if (!pending) return;
      pending = false;
      if (watchers === 0) {
        stale = true;
        return;
      }
      void store.getState().load();
      openWindow();
    }, THROTTLE_MS);
  }

  return store;
}

export type UsageStore = ReturnType<typeof createUsageStore>;
