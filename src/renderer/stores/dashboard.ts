// Composes the dashboard's stores around one Bridge. Every store is a zustand vanilla store, so
// the whole thing runs (and is unit-tested) under Node with a fake Bridge. Live state arrives as
// pushes; the first load and a reconnect read each topic once. Nothing here polls the engine.
// The stores and pages hold a Bridge that exists before the live link does (connectedBridge.ts):
// what a page asks for before start() waits for the connection, so every page renders on a direct
// load. A topic whose read failed keeps its error (loadStatus.ts) for the page to show with a retry.
import type { Bridge, EventName, EventPayload } from '../../shared/contract';
import type { BridgeStatus } from '../bridge';
import { createAdmissionStore } from './admissionStore';
import { createAppStore } from './appStore';
import { createCombosStore } from './combosStore';
import { createClaudeStore } from './claudeStore';
import { createConnectionsStore } from './connectionsStore';
import { createConnectedBridge } from './connectedBridge';
import type { StoreContext } from './context';
import { createKeysStore } from './keysStore';
import { createLoadStatus, TOPICS, type Topic } from './loadStatus';
import { createLogsStore } from './logsStore';
import { createNotificationsStore } from './notificationsStore';
import { createResilienceStore } from './resilienceStore';
import { createSessionsStore } from './sessionsStore';
import { createPricesStore } from './pricesStore';
import { createSettingsStore } from './settingsStore';
import { createTeamStore } from './teamStore';
import { createToastStore } from './toastStore';
import { createUsageStore, type Schedule } from './usageStore';

export interface DashboardOptions {
  /** Builds the Bridge, reporting the live link's status through the callback. */
  connect: (onStatus: (s: BridgeStatus) => void) => Bridge;
  /** Local clock (tests pass a fake). */
  now?: () => number;
  /** Called when the engine refuses the management token. */
  onUnauthorized?: () => void;
  /** Timers for the Overview's throttled re-reads (tests pass a hand-driven one). */
  schedule?: Schedule;
}

export function createDashboard(o: DashboardOptions) {
  const link = createConnectedBridge();
  let running = false;
  const offs: (() => void)[] = [];
  const toasts = createToastStore();
  const loads = createLoadStatus();
  const ctx: StoreContext = {
    bridge: link.bridge,
    toasts,
    loads,
    now: o.now ?? (() => Date.now()),
    onUnauthorized: () => {
      // A read of a stopped dashboard that comes back refused says nothing about what is on
      // screen now: the token gate may already have judged a newer token.
      if (!running) return;
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
  const sessions = createSessionsStore(ctx);
  const notifications = createNotificationsStore(ctx);
  const usage = createUsageStore(ctx, o.schedule);
  const prices = createPricesStore(ctx);
  const team = createTeamStore(ctx);

  const readers: Record<Topic, () => Promise<void>> = {
    app: () => app.getState().load(),
    connections: () => connections.getState().load(),
    resilience: () => resilience.getState().load(),
    admission: () => admission.getState().load(),
    settings: () => settings.getState().load(),
    logs: () => logs.getState().load(),
    keys: () => keys.getState().load(),
    combos: () => combos.getState().load(),
    claude: () => claude.getState().load(),
    sessions: () => sessions.getState().loadSessions(),
    leases: () => sessions.getState().loadLeases(),
    notifications: () => notifications.getState().load(),
    usage: () => usage.getState().load(),
    prices: () => prices.getState().load(),
    team: () => team.getState().load(),
  };
  /** Reads one topic again (a page's retry): its last error is cleared while the read runs. */
  const reload = (topic: Topic): Promise<void> => {
    loads.getState().clear(topic);
    return readers[topic]();
  };
  /** Reads every topic once (first load, and after the live link comes back). */
  const resync = async (): Promise<void> => {
    await Promise.all(TOPICS.map(reload));
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
    logs: (p) => {
      logs.getState().applyPush(p);
      usage.getState().noteRequests();
    },
    settings: (p) => settings.getState().apply(p),
    health: (p) => app.getState().applyHealth(p),
    combos: (p) => combos.getState().apply(p),
    claude: (p) => claude.getState().apply(p),
    claudeLogin: (p) => claude.getState().applyLogin(p),
    sessions: (p) => sessions.getState().applySessions(p),
    leases: (p) => sessions.getState().applyLeases(p),
    notifications: (p) => notifications.getState().apply(p),
    team: (p) => team.getState().apply(p),
  };

  return {
    /** Usable from the first render: calls made before start() wait for the connection. */
    bridge: link.bridge,
    /** Resolves once start() has connected the Bridge. */
    ready: link.ready,
    toasts,
    loads,
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
    notifications,
    usage,
    prices,
    team,
    reload,
    /**
     * Connects the Bridge, subscribes to every push, then reads each topic once. Can run again
     * after stop() (React's strict mode mounts twice): each run builds a fresh Bridge.
     */
    async start(): Promise<void> {
      if (running) return;
      running = true;
      const bridge = o.connect(onStatus);
      for (const name of Object.keys(handlers) as EventName[]) {
        offs.push(bridge.on(name, handlers[name] as (p: unknown) => void));
      }
      link.attach(bridge);
      await resync();
    },
    resync,
    /** Unsubscribes and closes the Bridge's live link. */
    stop(): void {
      running = false;
      offs.splice(0).forEach((off) => off());
      const bridge = link.current;
      link.detach();
      (bridge as Partial<{ close(): void }> | null)?.close?.();
    },
  };
}

export type Dashboard = ReturnType<typeof createDashboard>;
