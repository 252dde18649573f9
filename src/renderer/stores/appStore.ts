// App-wide state: engine health and app info (pushed), the live link to the engine (event stream
// connected or reconnecting), the offset between the engine's clock and this one (so countdowns
// computed from engine timestamps are right), and the management token when the user reveals it.
import { createStore } from 'zustand/vanilla';
import type { AppInfo, HealthView } from '../../shared/model';
import type { BridgeStatus } from '../bridge';
import { reportError, reportLoadError, Revision, type StoreContext } from './context';

export interface AppState {
  info: AppInfo | null;
  health: HealthView | null;
  link: BridgeStatus;
  /** Set once the engine answered at least once (the first connect is not a "reconnect"). */
  everConnected: boolean;
  /** Engine time minus local time, from the last snapshot that carried the engine's "now". */
  clockOffsetMs: number;
  managementToken: string | null;
  setLink(s: BridgeStatus): void;
  applyHealth(h: HealthView): void;
  noteServerTime(serverNow: number): void;
  load(): Promise<void>;
  revealToken(): Promise<string | null>;
  hideToken(): void;
}

export function createAppStore(ctx: StoreContext) {
  const healthRev = new Revision();
  return createStore<AppState>()((set, get) => ({
    info: null,
    health: null,
    link: 'connecting',
    everConnected: false,
    clockOffsetMs: 0,
    managementToken: null,
    setLink(link) {
      set((s) => ({ link, everConnected: s.everConnected || link === 'open' }));
    },
    applyHealth(health) {
      healthRev.bump();
      set({ health, clockOffsetMs: health.now - ctx.now() });
    },
    noteServerTime(serverNow) {
      set({ clockOffsetMs: serverNow - ctx.now() });
    },
    async load() {
      try {
        const [info] = await Promise.all([
          ctx.bridge.getAppInfo(),
          healthRev.guard(
            () => ctx.bridge.getHealth(),
            (h) => set({ health: h, clockOffsetMs: h.now - ctx.now() }),
          ),
        ]);
        set({ info });
      } catch (err) {
        reportLoadError(ctx, 'app', err, 'Could not reach the engine');
      }
    },
    async revealToken() {
      try {
        const { token } = await ctx.bridge.getManagementToken();
        set({ managementToken: token });
        return token;
      } catch (err) {
        reportError(ctx, err, 'Could not read the management token');
        return null;
      }
    },
    hideToken() {
      if (get().managementToken !== null) set({ managementToken: null });
    },
  }));
}

export type AppStore = ReturnType<typeof createAppStore>;
