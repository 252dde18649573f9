// Session pins and exclusive leases for the Sessions and Leases pages. Pins slide with every
// request, so they are not pushed: each page reads its list when it opens, on Refresh, and again
// after a forget or a release.
import { createStore } from 'zustand/vanilla';
import type { LeasesView, SessionsView } from '../../shared/model';
import { pendingActions, reportError, type StoreContext } from './context';

export interface SessionsState {
  sessions: SessionsView | null;
  leases: LeasesView | null;
  loading: boolean;
  pending: Record<string, boolean>;
  loadSessions(): Promise<void>;
  loadLeases(): Promise<void>;
  forget(id: string): Promise<boolean>;
  release(id: string): Promise<boolean>;
}

export function createSessionsStore(ctx: StoreContext) {
  return createStore<SessionsState>()((set, get) => {
    const { run } = pendingActions(ctx, set);
    /** Reads one of the two lists, with `loading` on while it runs. */
    const load = async (read: () => Promise<void>, doing: string) => {
      set({ loading: true });
      try {
        await read();
      } catch (err) {
        reportError(ctx, err, doing);
      } finally {
        set({ loading: false });
      }
    };
    /** Forget or release: the list is read again afterwards, whatever the outcome. */
    const act = (id: string, doing: string, call: () => Promise<unknown>, done: string, reload: () => Promise<void>): Promise<boolean> =>
      run(
        id,
        doing,
        async () => {
          await call();
          ctx.toasts.getState().push('success', done);
        },
        { after: reload },
      );
    return {
      sessions: null,
      leases: null,
      loading: false,
      pending: {},
      loadSessions() {
        return load(async () => set({ sessions: await ctx.bridge.listSessions() }), 'Could not load sessions');
      },
      loadLeases() {
        return load(async () => set({ leases: await ctx.bridge.listLeases() }), 'Could not load leases');
      },
      forget(id) {
        const s = get().sessions?.sessions.find((x) => x.id === id);
        return act(id, 'Could not forget the session', () => ctx.bridge.forgetSession({ id }), `Forgot session ${s?.session ?? ''}; its next request is routed as new`.trim(), () => get().loadSessions());
      },
      release(id) {
        const l = get().leases?.leases.find((x) => x.id === id);
        const who = l ? `${l.clientKeyName ?? 'a key'}'s lease on ${l.connectionName ?? l.connectionId}` : 'the lease';
        return act(id, 'Could not release the lease', () => ctx.bridge.releaseLease({ id }), `Released ${who}`, () => get().loadLeases());
      },
    };
  });
}

export type SessionsStore = ReturnType<typeof createSessionsStore>;
