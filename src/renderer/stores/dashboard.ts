// Composes the dashboard's stores around one Bridge. Every store is a zustand vanilla store, so
// the whole thing runs (and is unit-tested) under Node with a fake Bridge. Live state arrives as
// pushes; the first load and a reconnect read each topic once. Nothing here polls the engine.
import type { Bridge, EventName, EventPayload } from '../../shared/contract';
import type { BridgeStatus } from '../bridge';
import { createAdmissionStore } from './admissionStore';
import { createAppStore } from './appStore';
import { createCombosStore } from './combosStore';
import { createClaudeStore } from './claudeStore';
import { createConnectionsStore } from './connectionsStore';
import type { StoreContext } from './context';
import { createKeysStore } from './keysStore';
import { createLogsStore } from './logsStore';
import { createResilienceStore } from './resilienceStore';
import { createSessionsStore } from './sessionsStore';
import { createSettingsStore } from './settingsStore';
import { createToastStore } from './toastStore';

export interface DashboardOptions {
  /** Builds the Bridge, reporting the live link's status through the callback. */
  connect: (onStatus: (s: BridgeStatus) => void) => Bridge;
  /** Local clock (tests pass a fake). */
  now?: () => number;
  /** Called when the engine refuses the management token. */
  onUnauthorized?: () => void;
}

export function createDashboard(o: DashboardOptions) {
  let bridge: Bridge | null = null;
  let running = false;
  const offs: (() => void)[] = [];
  const toasts = createToastStore();
  const ctx: StoreContext = {
    get bridge(): Bridge {
      if (!bridge) throw new Error('the dashboard is not connected');
      return bridge;
    },
    toasts,
    now: o.now ?? (() => Date.now()),
    onUnauthorized: () => {
      app.getState().setLink('unauthorized');
      o.onUnauthorized?.();
    },
  };
  const app = createAppStore(ctx);
  const connections = createConnectionsStore(ctx);
  const resilience = createResilienceStore(ctx);
  const admission = createAdmissionStore(ctx);
  const settings = createSettingsStore(ctx);
  const logs = createLogsStore(ctx);
  const keys = createKeysStore(ctx);
  const combos = createCombosStore(ctx);
  const claude = createClaudeStore(ctx);
  // Read by the Sessions and Leases pages when they open (not part of the resync).
  const sessions = createSessionsStore(ctx);

  /** Reads every topic once (first load, and after the live link comes back). */
  const resync = async (): Promise<void> => {
    await Promise.all([
      app.getState().load(),
      connections.getState().load(),
      resilience.getState().load(),
      admission.getState().load(),
      settings.getState().load(),
      logs.getState().load(),
      keys.getState().load(),
      combos.getState().load(),
      claude.getState().load(),
    ]);
  };

  const onStatus = (s: BridgeStatus) => {
    if (!running) return;
    const before = app.getState().link;
    app.getState().setLink(s);
    if (s === 'unauthorized') o.onUnauthorized?.();
    // Back after a drop: pushes sent while away are gone, so read everything once.
    if (s === 'open' && before === 'closed' && running) void resync();
  };

  const handlers: { [E in EventName]: (p: EventPayload<E>) => void } = {
    connections: (p) => connections.getState().apply(p),
    resilience: (p) => {
      resilience.getState().applySnapshot(p);
      app.getState().noteServerTime(p.now);
    },
    admission: (p) => admission.getState().apply(p),
    logs: (p) => logs.getState().applyPush(p),
    settings: (p) => settings.getState().apply(p),
    health: (p) => app.getState().applyHealth(p),
    combos: (p) => combos.getState().apply(p),
    claude: (p) => claude.getState().apply(p),
    claudeLogin: (p) => claude.getState().applyLogin(p),
  };

  return {
    get bridge(): Bridge {
      return ctx.bridge;
    },
    toasts,
    app,
    connections,
    resilience,
    admission,
    settings,
    logs,
    keys,
    combos,
    claude,
    sessions,
    /**
     * Connects the Bridge, subscribes to every push, then reads each topic once. Can run again
     * after stop() (React's strict mode mounts twice): each run builds a fresh Bridge.
     */
    async start(): Promise<void> {
      if (running) return;
      running = true;
      bridge = o.connect(onStatus);
      for (const name of Object.keys(handlers) as EventName[]) {
        offs.push(ctx.bridge.on(name, handlers[name] as (p: unknown) => void));
      }
      await resync();
    },
    resync,
    /** Unsubscribes and closes the Bridge's live link. */
    stop(): void {
      running = false;
      offs.splice(0).forEach((off) => off());
      (bridge as Partial<{ close(): void }> | null)?.close?.();
      bridge = null;
    },
  };
}

export type Dashboard = ReturnType<typeof createDashboard>;
