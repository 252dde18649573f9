// Session pins and exclusive leases for the Sessions and Leases pages. Pins slide with every
// request, so they are not pushed: each page reads its list when it opens, on Refresh, and again
// after a forget or a release.
import { createStore } from 'zustand/vanilla';
import type { LeasesView, SessionsView } from '../../shared/model';
import { reportError, type StoreContext, withPending } from './context';

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
    const setPending = (id: string, on: boolean) => set((s) => withPending(s.pending, id, on));
    const act = async (id: string, doing: string, call: () => Promise<unknown>, done: string, reload: () => Promise<void>): Promise<boolean> => {
      setPending(id, true);
      try {
        await call();
        ctx.toasts.getState().push('success', done);
        return true;
      } catch (err) {
        reportError(ctx, err, doing);
        return false;
      } finally {
        setPending(id, false);
        await reload();
      }
    };
    return {
      sessions: null,
      leases: null,
      loading: false,
      pending: {},
      async loadSessions() {
        set({ loading: true });
        try {
          set({ sessions: await ctx.bridge.listSessions() });
        } catch (err) {
          reportError(ctx, err, 'Could not load sessions');
        } finally {
          set({ loading: false });
        }
      },
      async loadLeases() {
        set({ loading: true });
        try {
          set({ leases: await ctx.bridge.listLeases() });
        } catch (err) {
          reportError(ctx, err, 'Could not load leases');
        } finally {
          set({ loading: false });
        }
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
