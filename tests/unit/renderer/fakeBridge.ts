// A fake Bridge for the renderer's store tests: every contract method is a vi.fn with a harmless
// default answer (override per test), pushes are delivered with emit(), and the link status with
// status().
import { vi, type Mock } from 'vitest';
import { EVENT_NAMES, METHOD_NAMES, type Bridge, type EventName, type EventPayload, type MethodName, type OutputOf } from '../../../src/shared/contract';
import type { BridgeStatus } from '../../../src/renderer/bridge';
import { createDashboard } from '../../../src/renderer/stores/dashboard';
import type { Schedule } from '../../../src/renderer/stores/usageStore';
import type { UsageRange } from '../../../src/shared/usage';
import { settingsView, usageReport } from './builders';

type Impl<M extends MethodName> = (input?: any) => Promise<OutputOf<M>>;

const defaults: { [M in MethodName]?: Impl<M> } = {
  getHealth: async () => ({
    status: 'ok',
    version: '0.0.0-test',
    uptime: 1,
    now: 1_000_000,
    proxy: { port: 8480, url: 'http://127.0.0.1:8480', listening: true, error: null },
    breakers: [],
    connections: { total: 0, enabled: 0, active: 0, cooling: 0, terminal: 0 },
    store: { unreadable: [] },
  }),
  getAppInfo: async () => ({
    name: 'Switchyard',
    version: '0.0.0-test',
    shell: 'headless',
    dataDir: '/tmp/data',
    proxyUrl: 'http://127.0.0.1:8480',
    proxyPort: 8480,
    managementUrl: 'http://127.0.0.1:8481',
    startedAt: 0,
  }),
  listConnections: async () => [],
  listBreakers: async () => [],
  listCooldowns: async () => ({ now: 1_000_000, connections: [] }),
  listModelCooldowns: async () => ({ now: 1_000_000, lockouts: [] }),
  getConnectionHealth: async () => ({ now: 1_000_000, connections: [], counts: { healthy: 0, limited: 0, out: 0, needsAttention: 0, disabled: 0, total: 0 } }),
  getAdmission: async () => [],
  getSettings: async () => settingsView(),
  listLogs: async () => ({ entries: [], nextBefore: null }),
  listClientKeys: async () => [],
  listCombos: async () => [],
  listModelMappings: async () => [],
  listClaudeAccounts: async () => ({ now: 1_000_000, accounts: [] }),
  listSessions: async () => ({ now: 1_000_000, ttlMs: 3_600_000, sessions: [] }),
  listLeases: async () => ({ now: 1_000_000, leases: [] }),
  getUsage: async (input?: { range?: UsageRange }) => usageReport({ range: input?.range ?? 'day' }),
  getStateTimeline: async (input?: { from?: number; to?: number }) => ({ from: input?.from ?? 0, to: input?.to ?? 0, connections: [] }),
  listPrices: async () => ({ entries: [] }),
  listNotifications: async () => ({ items: [], unread: 0, muted: [] }),
  getTeam: async () => ({
    enabled: false,
    instanceId: 'test-instance',
    status: { state: 'off', since: null, reason: null, pendingWrites: 0 },
    settings: {
      address: { value: null, source: 'default', setBy: null, saved: null },
      team: { value: 'default', source: 'default', setBy: null, saved: null },
      key: { set: false, source: 'default', setBy: null, masked: null, fingerprint: null },
      role: { value: 'off', source: 'default', setBy: null, saved: null },
      displayName: { value: 'test-host', source: 'default', setBy: null, saved: null },
      restartNeeded: null,
    },
    config: { state: 'off', message: null, publisher: null, appliedAt: null, appliedRevision: null },
    managed: { owner: null, connections: [], combos: [], mappings: [], settings: [] },
  }),
};

export type FakeBridge = Bridge & {
  [M in MethodName]: Mock<Impl<M>>;
} & {
  emit<E extends EventName>(event: E, payload: EventPayload<E>): void;
  listenerCount(event: EventName): number;
};

export function fakeBridge(): FakeBridge {
  const listeners = new Map<EventName, Set<(p: unknown) => void>>(EVENT_NAMES.map((e) => [e, new Set()]));
  const b: Record<string, unknown> = {};
  for (const m of METHOD_NAMES) {
    const d = defaults[m] as ((i?: unknown) => Promise<unknown>) | undefined;
    b[m] = vi.fn(d ?? (async () => {
      throw new Error(`fake bridge: ${m} not scripted`);
    }));
  }
  b.on = (event: EventName, fn: (p: unknown) => void) => {
    listeners.get(event)!.add(fn);
    return () => listeners.get(event)!.delete(fn);
  };
  b.emit = (event: EventName, payload: unknown) => listeners.get(event)!.forEach((fn) => fn(payload));
  b.listenerCount = (event: EventName) => listeners.get(event)!.size;
  return b as unknown as FakeBridge;
}

/** A dashboard wired to a fake Bridge and a settable clock; `status` drives the live link. */
export function testDashboard(bridge = fakeBridge(), schedule?: Schedule) {
  let now = 1_000_000;
  let status: (s: BridgeStatus) => void = () => {};
  const onUnauthorized = vi.fn();
  const dash = createDashboard({
    connect: (onStatus) => {
      status = onStatus;
      return bridge;
    },
    now: () => now,
    onUnauthorized,
    schedule,
  });
  return {
    dash,
    bridge,
    onUnauthorized,
    status: (s: BridgeStatus) => status(s),
    setNow: (t: number) => {
      now = t;
    },
  };
}

/** A promise with its resolve handle, for ordering a load against a push. */
export function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
