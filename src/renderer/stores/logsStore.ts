// The request log: the newest page, older pages on demand, and new entries as the engine pushes
// them (filtered the same way the engine filters a page). Each entry carries its attempts and the
// connections that were skipped, with why.
import { createStore } from 'zustand/vanilla';
import { matchesLogQuery, type LogQuery, type LogStatusClass } from '../../shared/logQuery';
import type { RequestLogEntry } from '../../shared/model';
import { reportError, reportLoadError, type StoreContext } from './context';

/** The time ranges the page offers; `custom` uses `from`/`to` as given. */
export type LogRange = 'all' | '15m' | '1h' | '24h' | 'custom';

export interface LogFilter {
  errorsOnly: boolean;
  connectionId: string | null;
  /** Status class (null: every status). */
  status: LogStatusClass | null;
  /** Text searched in the id, models, connections, client key name and error (trimmed; empty: none). */
  search: string;
  /** Exact request id (the x-switchyard-request-id an agent received); null: none. */
  requestId: string | null;
  range: LogRange;
  /** Started at or after / at or before (epoch ms, engine time); null: open. */
  from: number | null;
  to: number | null;
}

export const NO_FILTER: LogFilter = { errorsOnly: false, connectionId: null, status: null, search: '', requestId: null, range: 'all', from: null, to: null };

/** A request id as the proxy makes them (server.ts): searched exactly rather than as text. */
export const REQUEST_ID_RE = /^req_[0-9a-f]{12}[0-9a-z]{6,}$/;

/** The filter as the engine's query (only the fields in use). */
export function filterQuery(f: LogFilter): LogQuery {
  const q: LogQuery = {};
  if (f.errorsOnly) q.errorsOnly = true;
  if (f.connectionId) q.connectionId = f.connectionId;
  if (f.status) q.status = f.status;
  if (f.requestId) q.requestId = f.requestId;
  if (f.search.trim()) q.search = f.search.trim();
  if (f.from !== null) q.from = f.from;
  if (f.to !== null) q.to = f.to;
  return q;
}

/** Whether any filter narrows the log (for the empty state's words). */
export function isFiltered(f: LogFilter): boolean {
  return Object.keys(filterQuery(f)).length > 0;
}

const sameFilter = (a: LogFilter, b: LogFilter): boolean =>
  (Object.keys(a) as (keyof LogFilter)[]).every((k) => a[k] === b[k]);

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

/** Whether a pushed entry belongs to the filtered page (the same test the engine's SQL makes). */
export function matchesFilter(e: RequestLogEntry, f: Partial<LogFilter>): boolean {
  return matchesLogQuery(e, filterQuery({ ...NO_FILTER, ...f }));
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
    filter: NO_FILTER,
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
        const page = await ctx.bridge.listLogs({ limit: PAGE_SIZE, ...filterQuery(f) });
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
          ...filterQuery(f),
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
      if (sameFilter(next, cur)) return;
      set({ filter: next, entries: get().entries.filter((e) => matchesFilter(e, next)), nextBefore: null });
      await get().load();
    },
    toggleExpanded(id) {
      set((s) => ({ expanded: s.expanded === id ? null : id }));
    },
  }));
}

export type LogsStore = ReturnType<typeof createLogsStore>;
