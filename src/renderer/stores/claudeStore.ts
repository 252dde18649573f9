// Claude subscription accounts: the pushed account views (sign-in, usage windows, lane, reset) by
// connection, the sign-ins this dashboard started (their outcome arrives as a `claudeLogin` push),
// and the actions of the three ways in. Usage is refreshed only when the user asks.
import { createStore } from 'zustand/vanilla';
import type { ClaudeAccountsView, ClaudeAccountView, ClaudeLoginStart, ClaudeLoginView, ConnectionView } from '../../shared/model';
import { reportError, reportLoadError, rethrow, Revision, type StoreContext, withPending } from './context';

export interface ClaudeTargetInput {
  connectionId?: string;
  name?: string;
  provider?: string;
  baseUrl?: string;
  priority?: number;
}

export interface ClaudeState {
  byConnection: Record<string, ClaudeAccountView>;
  /** Server time of the last snapshot. */
  now: number;
  loaded: boolean;
  /** Sign-ins started here, by login id (their last known state). */
  logins: Record<string, ClaudeLoginView>;
  /** Connections whose usage refresh is running. */
  refreshing: Record<string, boolean>;
  apply(v: ClaudeAccountsView): void;
  applyLogin(v: ClaudeLoginView): void;
  load(): Promise<void>;
  /**
   * Starts "Sign in with Claude" and opens the sign-in page: the engine opened the system browser
   * (desktop) or `open` does it here (a browser tab). Throws the engine's error for the form.
   */
  startLogin(input: ClaudeTargetInput & { mode?: 'loopback' | 'paste' }, open?: (url: string) => void): Promise<ClaudeLoginStart>;
  /** Finishes a sign-in with the pasted code; throws the engine's error for the form. */
  completeLogin(loginId: string, code: string): Promise<ConnectionView>;
  cancelLogin(loginId: string): Promise<void>;
  /** Re-reads a sign-in's state (after the live link dropped, a push may be lost). */
  checkLogin(loginId: string): Promise<ClaudeLoginView | null>;
  importCredentials(input: ClaudeTargetInput): Promise<ConnectionView>;
  refreshUsage(connectionId: string): Promise<void>;
}

const index = (v: ClaudeAccountsView) => Object.fromEntries(v.accounts.map((a) => [a.connectionId, a]));

export function createClaudeStore(ctx: StoreContext) {
  const rev = new Revision();
  return createStore<ClaudeState>()((set, get) => ({
    byConnection: {},
    now: 0,
    loaded: false,
    logins: {},
    refreshing: {},
    apply(v) {
      rev.bump();
      set({ byConnection: index(v), now: v.now, loaded: true });
    },
    applyLogin(v) {
      if (!get().logins[v.loginId]) return; // someone else's sign-in
      set((s) => ({ logins: { ...s.logins, [v.loginId]: v } }));
    },
    async load() {
      try {
        await rev.guard(
          () => ctx.bridge.listClaudeAccounts(),
          (v) => set({ byConnection: index(v), now: v.now, loaded: true }),
        );
      } catch (err) {
        reportLoadError(ctx, 'claude', err, 'Could not load the Claude accounts');
      }
    },
    async startLogin(input, open) {
      const s = await rethrow(ctx, () => ctx.bridge.startClaudeLogin(input));
      set((st) => ({ logins: { ...st.logins, [s.loginId]: { loginId: s.loginId, status: 'pending', connectionId: null, error: null } } }));
      if (!s.opened) open?.(s.authorizeUrl);
      return s;
    },
    async completeLogin(loginId, code) {
      const c = await rethrow(ctx, () => ctx.bridge.completeClaudeLogin({ loginId, code }));
      set((s) => ({ logins: { ...s.logins, [loginId]: { loginId, status: 'done', connectionId: c.id, error: null } } }));
      return c;
    },
    async cancelLogin(loginId) {
      set((s) => {
        const logins = { ...s.logins };
        delete logins[loginId];
        return { logins };
      });
      try {
        await ctx.bridge.cancelClaudeLogin({ loginId });
      } catch {
        // already over: nothing to cancel
      }
    },
    async checkLogin(loginId) {
      try {
        const v = await ctx.bridge.getClaudeLogin({ loginId });
        get().applyLogin(v);
        return v;
      } catch {
        return null;
      }
    },
    async importCredentials(input) {
      const c = await rethrow(ctx, () => ctx.bridge.importClaudeCredentials(input));
      ctx.toasts.getState().push('success', `Imported ${c.name} from Claude Code`);
      return c;
    },
    async refreshUsage(connectionId) {
      set((s) => withRefreshing(s.refreshing, connectionId, true));
      try {
        const v = await ctx.bridge.refreshClaudeUsage({ connectionId });
        get().apply(v);
      } catch (err) {
        reportError(ctx, err, 'Could not read the usage');
      } finally {
        set((s) => withRefreshing(s.refreshing, connectionId, false));
      }
    },
  }));
}

const withRefreshing = (m: Record<string, boolean>, id: string, on: boolean) => ({ refreshing: withPending(m, id, on).pending });

export type ClaudeStore = ReturnType<typeof createClaudeStore>;
