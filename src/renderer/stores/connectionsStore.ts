// Provider connections: the pushed list, and every change a user makes to it (add, edit, test,
// enable/disable, toggles, delete). Quick toggles apply at once and roll back if the engine says no;
// form saves throw, so the form can put the engine's error next to the field it names.
import { createStore } from 'zustand/vanilla';
import type { ConnectionCreateInput, ConnectionUpdateInput } from '../../shared/contract';
import type { ConnectionTestResult, ConnectionView, RateLimitProtectionMode } from '../../shared/model';
import { describeError } from '../lib/errors';
import { pendingActions, reportLoadError, rethrow, Revision, type StoreContext } from './context';

export interface TestState {
  running: boolean;
  result: ConnectionTestResult | null;
  at: number | null;
}

export interface ConnectionsState {
  list: ConnectionView[];
  loaded: boolean;
  tests: Record<string, TestState>;
  /** Ids with a change in flight (their controls wait). */
  pending: Record<string, boolean>;
  apply(list: ConnectionView[]): void;
  load(): Promise<void>;
  create(input: ConnectionCreateInput): Promise<ConnectionView>;
  /**
   * Saves the edit form: the connection fields, then rate-limit protection through its own write
   * path (R-RQ-28) when it changed.
   */
  save(id: string, patch: ConnectionUpdateInput, protectionMode?: RateLimitProtectionMode): Promise<ConnectionView>;
  remove(id: string): Promise<boolean>;
  test(id: string): Promise<ConnectionTestResult | null>;
  /** Quick toggles (enabled, disableCooling, Claude options, limits): optimistic, rolled back on error. */
  patch(id: string, patch: ConnectionUpdateInput, what: string): Promise<boolean>;
  /** Rate-limit protection: automatic, on or off (its own write path, R-RQ-28). */
  setRateLimitProtection(id: string, mode: RateLimitProtectionMode): Promise<boolean>;
}

const byOrder = (a: ConnectionView, b: ConnectionView) => a.priority - b.priority || a.createdAt - b.createdAt;

function upsert(list: ConnectionView[], c: ConnectionView): ConnectionView[] {
  const i = list.findIndex((x) => x.id === c.id);
  const next = i === -1 ? [...list, c] : list.map((x) => (x.id === c.id ? c : x));
  return next.sort(byOrder);
}

/** What a patch does to the view, for the optimistic update. */
function applyPatch(c: ConnectionView, p: ConnectionUpdateInput): ConnectionView {
  const next = { ...c } as ConnectionView & Record<string, unknown>;
  for (const [k, v] of Object.entries(p)) {
    if (v === undefined || k === 'secret' || k === 'rateLimitProtection' || k === 'rateLimitProtectionMode') continue;
    next[k] = v;
  }
  return next;
}

export function createConnectionsStore(ctx: StoreContext) {
  const rev = new Revision();
  return createStore<ConnectionsState>()((set, get) => {
    const { run } = pendingActions(ctx, set);

    return {
      list: [],
      loaded: false,
      tests: {},
      pending: {},
      apply(list) {
        rev.bump();
        set({ list: [...list].sort(byOrder), loaded: true });
      },
      async load() {
        try {
          await rev.guard(
            () => ctx.bridge.listConnections(),
            (list) => set({ list: [...list].sort(byOrder), loaded: true }),
          );
        } catch (err) {
          reportLoadError(ctx, 'connections', err, 'Could not load connections');
        }
      },
      async create(input) {
        const c = await rethrow(ctx, () => ctx.bridge.createConnection(input));
        set((s) => ({ list: upsert(s.list, c) }));
        ctx.toasts.getState().push('success', `Added ${c.name}`);
        return c;
      },
      async save(id, patch, protectionMode) {
        let c = await rethrow(ctx, () => ctx.bridge.updateConnection({ id, patch }));
        if (protectionMode !== undefined && protectionMode !== c.rateLimitProtectionMode) {
          const r = await rethrow(ctx, () => ctx.bridge.setRateLimitProtection({ connectionId: id, mode: protectionMode }));
          c = { ...c, rateLimitProtection: r.rateLimitProtection, rateLimitProtectionMode: r.mode };
        }
        set((s) => ({ list: upsert(s.list, c) }));
        ctx.toasts.getState().push('success', `Saved ${c.name}`);
        return c;
      },
      remove(id) {
        const name = get().list.find((c) => c.id === id)?.name ?? 'connection';
        return run(id, `Could not delete ${name}`, async () => {
          await ctx.bridge.deleteConnection({ id });
          set((s) => {
            const tests = { ...s.tests };
            delete tests[id];
            return { list: s.list.filter((c) => c.id !== id), tests };
          });
          ctx.toasts.getState().push('success', `Deleted ${name}`);
        });
      },
      async test(id) {
        set((s) => ({ tests: { ...s.tests, [id]: { running: true, result: s.tests[id]?.result ?? null, at: s.tests[id]?.at ?? null } } }));
        try {
          const result = await ctx.bridge.testConnection({ id });
          set((s) => ({ tests: { ...s.tests, [id]: { running: false, result, at: ctx.now() } } }));
          return result;
        } catch (err) {
          const e = describeError(err);
          if (e.unauthorized) ctx.onUnauthorized();
          const result: ConnectionTestResult = { ok: false, status: null, latencyMs: null, models: [], message: e.message };
          set((s) => ({ tests: { ...s.tests, [id]: { running: false, result, at: ctx.now() } } }));
          return result;
        }
      },
      async patch(id, patch, what) {
        const before = get().list.find((c) => c.id === id);
        if (!before) return false;
        return run(
          id,
          `Could not change ${what} of ${before.name}`,
          async () => {
            set((s) => ({ list: s.list.map((c) => (c.id === id ? applyPatch(c, patch) : c)) }));
            const c = await ctx.bridge.updateConnection({ id, patch });
            set((s) => ({ list: upsert(s.list, c) }));
          },
          { undo: () => set((s) => ({ list: s.list.map((c) => (c.id === id ? before : c)) })) },
        );
      },
      async setRateLimitProtection(id, mode) {
        const before = get().list.find((c) => c.id === id);
        if (!before) return false;
        return run(
          id,
          `Could not change rate-limit protection of ${before.name}`,
          async () => {
            const optimistic = { rateLimitProtection: mode === 'on', rateLimitProtectionMode: mode };
            set((s) => ({ list: s.list.map((c) => (c.id === id ? { ...c, ...optimistic } : c)) }));
            const r = await ctx.bridge.setRateLimitProtection({ connectionId: id, mode });
            const saved = { rateLimitProtection: r.rateLimitProtection, rateLimitProtectionMode: r.mode };
            set((s) => ({ list: s.list.map((c) => (c.id === id ? { ...c, ...saved } : c)) }));
          },
          { undo: () => set((s) => ({ list: s.list.map((c) => (c.id === id ? before : c)) })) },
        );
      },
    };
  });
}

export type ConnectionsStore = ReturnType<typeof createConnectionsStore>;
