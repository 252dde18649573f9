// The request log: the newest page, older pages on demand, and new entries as the engine pushes
// them (filtered the same way the engine filters a page). Each entry carries its attempts and the
// connections that were skipped, with why.
import { createStore } from 'zustand/vanilla';
import type { RequestLogEntry } from '../../shared/model';
import { reportError, reportLoadError, type StoreContext } from './context';

export interface LogFilter {
  errorsOnly: boolean;
  connectionId: string | null;
}

export interface LogsState {
  entries: RequestLogEntry[];
  nextBefore: number | null;
  loaded: boolean;
  loading: boolean;
  loadingMore: boolean;
  filter: LogFilter;
  expanded: string | null;
  applyPush(batch: RequestLogEntry[]): void;
  load(): Promise<void>;
  loadMore(): Promise<void>;
  setFilter(f: Partial<LogFilter>): Promise<void>;
  toggleExpanded(id: string): void;
}

export const PAGE_SIZE = 100;
/** Entries kept in memory; older ones can be paged in again. */
export const MAX_ENTRIES = 2_000;

export function matchesFilter(e: RequestLogEntry, f: LogFilter): boolean {
  if (f.errorsOnly && e.status < 400) return false;
  if (f.connectionId && e.connectionId !== f.connectionId && !e.attempts.some((a) => a.connectionId === f.connectionId)) {
    return false;
  }
  return true;
}

/** Newest first, one row per id (a later copy of an entry replaces the earlier one). */
export function mergeEntries(a: RequestLogEntry[], b: RequestLogEntry[]): RequestLogEntry[] {
  const byId = new Map<string, RequestLogEntry>();
  for (const e of a) byId.set(e.id, e);
  for (const e of b) byId.set(e.id, e);
  return [...byId.values()].sort((x, y) => y.startedAt - x.startedAt).slice(0, MAX_ENTRIES);
}

export function createLogsStore(ctx: StoreContext) {
  let loadSeq = 0;
  /** Pushed while a load was in flight: merged into its result instead of being lost. */
  let pushedDuringLoad: RequestLogEntry[] | null = null;

  return createStore<LogsState>()((set, get) => ({
    entries: [],
    nextBefore: null,
    loaded: false,
    loading: false,
    loadingMore: false,
    filter: { errorsOnly: false, connectionId: null },
    expanded: null,
    applyPush(batch) {
      const fresh = batch.filter((e) => matchesFilter(e, get().filter));
      if (!fresh.length) return;
      if (pushedDuringLoad) pushedDuringLoad.push(...fresh);
      set((s) => ({ entries: mergeEntries(s.entries, fresh) }));
    },
    async load() {
      const seq = ++loadSeq;
      pushedDuringLoad = [];
      set({ loading: true });
      const f = get().filter;
      try {
        const page = await ctx.bridge.listLogs({
          limit: PAGE_SIZE,
          ...(f.errorsOnly ? { errorsOnly: true } : {}),
          ...(f.connectionId ? { connectionId: f.connectionId } : {}),
        });
        if (seq !== loadSeq) return;
        set({ entries: mergeEntries(page.entries, pushedDuringLoad ?? []), nextBefore: page.nextBefore, loaded: true });
      } catch (err) {
        if (seq === loadSeq) reportLoadError(ctx, 'logs', err, 'Could not load the request log');
      } finally {
        if (seq === loadSeq) {
          pushedDuringLoad = null;
          set({ loading: false });
        }
      }
    },
    async loadMore() {
      const { nextBefore, filter: f, loadingMore } = get();
      if (nextBefore === null || loadingMore) return;
      const seq = loadSeq;
      set({ loadingMore: true });
      try {
        const page = await ctx.bridge.listLogs({
          limit: PAGE_SIZE,
          before: nextBefore,
          ...(f.errorsOnly ? { errorsOnly: true } : {}),
          ...(f.connectionId ? { connectionId: f.connectionId } : {}),
        });
        if (seq !== loadSeq) return;
        set((s) => ({ entries: mergeEntries(s.entries, page.entries), nextBefore: page.nextBefore }));
      } catch (err) {
        reportError(ctx, err, 'Could not load older requests');
      } finally {
        set({ loadingMore: false });
      }
    },
    async setFilter(f) {
      const next = { ...get().filter, ...f };
      const cur = get().filter;
      if (next.errorsOnly === cur.errorsOnly && next.connectionId === cur.connectionId) return;
      set({ filter: next, entries: get().entries.filter((e) => matchesFilter(e, next)), nextBefore: null });
      await get().load();
    },
    toggleExpanded(id) {
      set((s) => ({ expanded: s.expanded === id ? null : id }));
    },
  }));
}

export type LogsStore = ReturnType<typeof createLogsStore>;
