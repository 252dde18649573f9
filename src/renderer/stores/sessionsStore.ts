// Session pins and exclusive leases for the Sessions and Leases pages. Both are pushed by the
// engine when they change (a pin created, moved or ended; a lease acquired, renewed, moved or
// ended; a pin's sliding expiry at a slower pace), read once on start and after the live link
// comes back, and read again after a forget or a release.
import { createStore } from 'zustand/vanilla';
import type { LeasesView, SessionsView } from '../../shared/model';
import { pendingActions, reportLoadError, Revision, type StoreContext } from './context';

export interface SessionsState {
  sessions: SessionsView | null;
  leases: LeasesView | null;
  pending: Record<string, boolean>;
  applySessions(v: SessionsView): void;
  applyLeases(v: LeasesView): void;
  loadSessions(): Promise<void>;
  loadLeases(): Promise<void>;
  forget(id: string): Promise<boolean>;
  release(id: string): Promise<boolean>;
}

export function createSessionsStore(ctx: StoreContext) {
  const sessionsRev = new Revision();
  const leasesRev = new Revision();
  return createStore<SessionsState>()((set, get) => {
    const { run } = pendingActions(ctx, set);
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
      pending: {},
      applySessions(sessions) {
        sessionsRev.bump();
        set({ sessions });
      },
      applyLeases(leases) {
        leasesRev.bump();
        set({ leases });
      },
      async loadSessions() {
        try {
          await sessionsRev.guard(
            () => ctx.bridge.listSessions(),
            (sessions) => set({ sessions }),
          );
        } catch (err) {
          reportLoadError(ctx, 'sessions', err, 'Could not load sessions');
        }
      },
      async loadLeases() {
        try {
          await leasesRev.guard(
            () => ctx.bridge.listLeases(),
            (leases) => set({ leases }),
          );
        } catch (err) {
          reportLoadError(ctx, 'leases', err, 'Could not load leases');
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
