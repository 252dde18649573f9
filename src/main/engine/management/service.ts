// The management service behind the contract: one function per method, used alike by the IPC
// handlers (desktop) and the HTTP routes (headless). Inputs arrive already validated.
import type { Handlers } from '../../../shared/contract';
import type { AppInfo, ConnectionTestResult, HealthView, UnreadableRecord } from '../../../shared/model';
import { CLAUDE_KIND, isTerminalStatus } from '../../../shared/model';
import type { SettingKey } from '../../../shared/settings';
import { settingDefs } from '../../../shared/settings';
import type { AdmissionPort } from '../admission/port';
import { modeOfFlag } from '../admission/protection';
import type { ClientKeyService } from '../auth/clientKeys';
import type { ClaudeAccounts } from '../claude/claudeAccounts';
import type { ManagementToken } from '../auth/managementToken';
import type { Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import { ApiError, notFound } from '../errors';
import type { RequestLog } from '../logs/requestLog';
import { exportLogs } from '../usage/exports';
import type { UsageService } from '../usage/usageService';
import { modelsView } from '../proxy/models';
import type { ErrorRuleRegistry } from '../resilience/errorRuleRegistry';
import { errorRulesView, explainProviderError } from '../resilience/errorRuleTester';
import type { Resilience } from '../resilience/port';
import { gatherHealth } from '../health/healthModel';
import { remainingHolds, toRemaining, type HealthSnapshot, type RemainingHold } from '../../../shared/health';
import type { EgressIps } from '../upstream/egressIps';
import type { ComboRegistry } from '../routing/combos/comboRegistry';
import type { ModelCatalog } from '../routing/combos/modelCatalog';
import { PriceInputError, type PriceCatalogue } from '../usage/prices';
import type { SettingsService } from '../settings/settingsService';
import type { AgentConfigWriter } from './agentConfig';
import { AGENT_CONFIG_AGENTS } from '../../../shared/agentConfig';
import { routeAgentModels } from './agentRoute';
import { testCombo } from './comboTester';
import type { ConnectionTester } from './connectionTester';
import { checkKeyAccess, leasesView, sessionsView, type SessionViewDeps } from './sessionViews';
import type { NotificationHandlers } from '../notifications';
import type { ManagedKind } from '../team/configShare';
import type { TeamHandlers } from '../team/teamMode';
import { guardTeamManaged } from './teamGuard';

export interface ManagementDeps {
  version: string;
  shell: 'desktop' | 'headless';
  dataDir: string;
  startedAt: number;
  clock: Clock;
  registry: ConnectionRegistry;
  settings: SettingsService;
  resilience: Resilience;
  admission: AdmissionPort;
  clientKeys: ClientKeyService;
  requestLog: RequestLog;
  /** The usage roll-ups' report and export (issue 23). */
  usage: UsageService;
  token: ManagementToken;
  tester: ConnectionTester;
  combos: ComboRegistry;
  catalog: ModelCatalog;
  /** The price catalogue (the model catalog's prices come from it too). */
  prices: PriceCatalogue;
  claude: ClaudeAccounts;
  errorRules: ErrorRuleRegistry;
  egress: Pick<EgressIps, 'probe'>;
  /** The proxy's port; `url` as agents reach it, `localUrl` as this process does (default http://127.0.0.1:<port>). */
  proxy: () => { port: number | null; error: string | null; url?: string | null; localUrl?: string | null };
  managementUrl: () => string | null;
  /** Stored rows skipped because they cannot be read. */
  unreadable: () => UnreadableRecord[];
  /** Session affinity pins and exclusive leases. */
  sessions: Pick<SessionViewDeps, 'affinity' | 'leases' | 'ttlMs'>;
  /** "Apply" / "Restore" for the CLI agents' own configuration files. */
  agentConfigs: AgentConfigWriter;
  /** The notification feed and the state timeline (notifications/). */
  notifications: NotificationHandlers;
  /** Team mode (issue 26): the Team page's handlers, and who manages an item here (edits of those are refused). */
  team: { handlers: TeamHandlers; ownerOf(kind: ManagedKind, id: string): string | null };
}

/** The UTC day of a time, as a price's date. */
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Runs a price edit; a price that cannot be kept is a 400 (404: nothing to reset) with a plain message. */
function priceCall<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof PriceInputError) throw new ApiError(err.code === 'price_not_found' ? 404 : 400, err.code, err.message);
    throw err;
  }
}

const isResilienceKey = (k: SettingKey) => settingDefs[k].resilience === true;

/** What still holds these connections as a whole after a clear (terminal states are reported apart). */
function remainingAfterClear(h: HealthSnapshot, ids: readonly string[], now: number): RemainingHold[] {
  const want = new Set(ids);
  return h.connections
    .filter((c) => want.has(c.connectionId))
    .flatMap((c) => toRemaining(c, remainingHolds(c, now).filter((x) => x.kind !== 'terminal')));
}

export function createManagementService(d: ManagementDeps): Handlers & { health(): HealthView; appInfo(): AppInfo } {
  const health = (): HealthView => {
    const now = d.clock.now();
    const breakers = d.resilience.breakers(now);
    const conns = d.registry.all();
    let cooling = 0;
    let terminal = 0;
    let active = 0;
    for (const c of conns) {
      if (isTerminalStatus(c.health.testStatus)) terminal++;
      else if (c.health.rateLimitedUntil !== null && c.health.rateLimitedUntil > now) cooling++;
      else if (c.enabled) active++;
    }
    const proxy = d.proxy();
    const unreadable = d.unreadable();
    const degraded =
      proxy.port === null || breakers.some((b) => b.state !== 'CLOSED') || cooling > 0 || terminal > 0 || unreadable.length > 0;
    return {
      status: degraded ? 'degraded' : 'ok',
      version: d.version,
      uptime: Math.floor((now - d.startedAt) / 1000),
      now,
      proxy: {
        port: proxy.port,
        url: proxy.port !== null ? (proxy.url ?? `http://127.0.0.1:${proxy.port}`) : null,
        listening: proxy.port !== null,
        error: proxy.error,
      },
      breakers,
      connections: {
        total: conns.length,
        enabled: conns.filter((c) => c.enabled).length,
        active,
        cooling,
        terminal,
      },
      store: { unreadable },
    };
  };

  /** The health model now (built on demand, as for a push). */
  const healthNow = (): HealthSnapshot =>
    gatherHealth({ connections: () => d.registry.all(), resilience: d.resilience, admission: d.admission }, d.clock.now());

  const appInfo = (): AppInfo => {
    const { port, url } = d.proxy();
    return {
      name: 'Switchyard',
      version: d.version,
      shell: d.shell,
      dataDir: d.dataDir,
      proxyUrl: port !== null ? (url ?? `http://127.0.0.1:${port}`) : null,
      proxyPort: port,
      managementUrl: d.managementUrl(),
      startedAt: d.startedAt,
    };
  };

  const connectionView = (id: string) => d.registry.view(d.registry.require(id));
  const sessionDeps = (): SessionViewDeps => ({ ...d.sessions, clientKeys: d.clientKeys, registry: d.registry, combos: d.combos });

  /** A Claude subscription's pasted secret (a token, or Claude Code's JSON) is stored as a token bundle. */
  const withClaudeSecret = <T extends { kind?: string; secret?: string | null }>(input: T, currentKind?: string): T =>
    typeof input.secret === 'string' && (input.kind ?? currentKind) === CLAUDE_KIND ? { ...input, secret: d.claude.prepareSecret(input.secret) } : input;

  const handlers: Handlers = {
    getHealth: async () => health(),
    getAppInfo: async () => appInfo(),
    getManagementToken: async () => ({ token: d.token.value }),

    getSettings: async () => d.settings.view(),
    patchSettings: async ({ patch }) => d.settings.patch(patch),
    getResilience: async () => d.settings.view(isResilienceKey),
    patchResilience: async ({ patch }) => d.settings.patch(patch, isResilienceKey),
    resetResilience: async ({ provider }) => {
      const now = d.clock.now();
      const providers = d.resilience.resetBreakers(provider, now);
      const ids = d.registry.all().filter((c) => providers.includes(c.provider)).map((c) => c.id);
      return { providers, remaining: remainingAfterClear(healthNow(), ids, now) };
    },
    listBreakers: async () => d.resilience.breakers(d.clock.now()),
    listCooldowns: async ({ provider }) => d.resilience.cooldowns(d.clock.now(), provider),
    clearCooldowns: async (input) => {
      const now = d.clock.now();
      const result = d.resilience.clearCooldowns(input, now);
      // The queue may hold the same connections paused on the upstream's hint: lift that too,
      // also for a connection the queue alone was holding.
      const lifted = new Set(d.admission.resume([...result.cleared, ...result.unchanged]));
      const cleared = [...result.cleared, ...result.unchanged.filter((id) => lifted.has(id))];
      const touched = [...result.cleared, ...result.unchanged];
      return {
        ...result,
        cleared,
        unchanged: result.unchanged.filter((id) => !lifted.has(id)),
        pausesLifted: lifted.size,
        remaining: remainingAfterClear(healthNow(), touched, now),
      };
    },
    listModelCooldowns: async () => {
      const now = d.clock.now();
      return { now, lockouts: d.resilience.lockouts(now) };
    },
    clearModelCooldown: async (input) => {
      const now = d.clock.now();
      const removed = d.resilience.clearLockout(input, now);
      const conn = d.registry.get(input.connection) ?? d.registry.all().find((c) => c.provider === input.provider && c.name === input.connection);
      // The queue's pause on the same model's Retry-After holds it too: lift it with the lockout.
      const pausesLifted = conn !== undefined && d.admission.resumeModel(conn.id, input.model) ? 1 : 0;
      const item = conn === undefined ? undefined : healthNow().connections.find((c) => c.connectionId === conn.id);
      return { removed, pausesLifted, remaining: item ? toRemaining(item, remainingHolds(item, now, input.model)) : [] };
    },
    getConnectionHealth: async () => healthNow(),

    listConnections: async () => d.registry.all().map((c) => d.registry.view(c)),
    getConnection: async ({ id }) => connectionView(id),
    createConnection: async (input) => d.registry.view(d.registry.create(withClaudeSecret(input))),
    replaceConnection: async ({ id, patch }) => d.registry.view(d.registry.update(id, withClaudeSecret(patch, d.registry.require(id).kind), true)),
    updateConnection: async ({ id, patch }) => d.registry.view(d.registry.update(id, withClaudeSecret(patch, d.registry.require(id).kind), false)),
    deleteConnection: async ({ id }) => {
      if (!d.registry.delete(id)) throw notFound('connection', id);
      return { deleted: true };
    },
    testConnection: async ({ id }): Promise<ConnectionTestResult> => {
      const conn = d.registry.require(id);
      let auth: Record<string, string> | undefined;
      if (conn.kind === CLAUDE_KIND) {
        const h = await d.claude.testHeaders(id);
        if (!h.ok) return { ok: false, status: null, latencyMs: null, models: [], message: h.message };
        auth = h.headers;
      }
      const result = await d.tester.test(conn, auth);
      if (result.ok) d.resilience.onConnectionTestOk(id, d.clock.now());
      return result;
    },

    setRateLimitProtection: async ({ connectionId, enabled, mode }) => {
      const c = d.registry.setRateLimitProtection(connectionId, mode ?? modeOfFlag(enabled === true));
      const view = d.admission.views().find((v) => v.connectionId === c.id);
      return {
        connectionId: c.id,
        rateLimitProtection: c.protectionMode === 'on',
        mode: c.protectionMode,
        protected: view?.protected ?? c.protectionMode === 'on',
        protectionSource: view?.protectionSource ?? (c.protectionMode === 'on' ? 'explicit' : 'off'),
      };
    },
    getAdmission: async () => d.admission.views(),

    listClientKeys: async () => d.clientKeys.list(),
    createClientKey: async ({ name, ...access }) => d.clientKeys.create(name, checkKeyAccess(d.registry, access)),
    updateClientKey: async ({ id, patch }) => d.clientKeys.setAccess(id, checkKeyAccess(d.registry, patch)),
    revealClientKey: async ({ id }) => ({ secret: d.clientKeys.reveal(id) }),
    listAgentConfigs: async () => AGENT_CONFIG_AGENTS.map((a) => d.agentConfigs.status(a)),
    applyAgentConfig: async ({ agent, keyId, model }) => {
      const { port, localUrl } = d.proxy();
      if (port === null) throw new ApiError(409, 'proxy_not_listening', 'The proxy is not listening, so there is no address to write.');
      return d.agentConfigs.apply(agent, { proxyUrl: localUrl ?? `http://127.0.0.1:${port}`, clientKey: d.clientKeys.reveal(keyId), model: model ?? null });
    },
    restoreAgentConfig: async ({ agent }) => d.agentConfigs.restore(agent),
    revokeClientKey: async ({ id }) => {
      const revoked = d.clientKeys.revoke(id);
      // A revoked key's leases end with it: its connections are free for other sessions.
      d.sessions.leases.revokeWhere((l) => l.clientKeyId === id);
      return { revoked };
    },

    listLogs: async ({ limit, ...query }) => d.requestLog.page({ limit: limit ?? 100, ...query }),
    getUsage: async ({ range }) => d.usage.report(range ?? 'day', d.clock.now()),
    exportUsage: async ({ format, ...q }) => d.usage.exportUsage({ ...q, format: format ?? 'csv' }),
    exportLogs: async ({ format, ...q }) => exportLogs((p) => d.requestLog.page(p), { ...q, format: format ?? 'csv' }),
    getLog: async ({ id }) => {
      const e = await d.requestLog.get(id);
      if (!e) throw notFound('request', id);
      return e;
    },
    listModels: async () => modelsView(d.registry.all(), d.combos.list()),

    listCombos: async () => d.combos.list().map((c) => d.combos.view(c)),
    getCombo: async ({ id }) => d.combos.view(d.combos.require(id)),
    createCombo: async (input) => d.combos.create(input),
    replaceCombo: async ({ id, patch }) => d.combos.update(id, patch, true),
    updateCombo: async ({ id, patch }) => d.combos.update(id, patch, false),
    deleteCombo: async ({ id }) => ({ deleted: true, mappingsRemoved: d.combos.delete(id) }),
    testCombo: async ({ id }) => testCombo(d, d.combos.require(id)),
    listModelMappings: async () => d.combos.mappingViews(),
    createModelMapping: async (input) => d.combos.createMapping(input),
    routeAgentModels: async (input) => routeAgentModels(d.combos, d.registry, input),
    updateModelMapping: async ({ id, patch }) => d.combos.updateMapping(id, patch),
    deleteModelMapping: async ({ id }) => {
      if (!d.combos.deleteMapping(id)) throw notFound('model mapping', id);
      return { deleted: true };
    },
    getModelCatalog: async () => d.catalog.entries(),
    listPrices: async () => d.prices.view(),
    setPrice: async (input) => priceCall(() => d.prices.set(input, dayOf(d.clock.now()))),
    resetPrice: async ({ model }) => priceCall(() => {
      const entry = d.prices.reset(model);
      return { reset: true, entry };
    }),

    startClaudeLogin: async (input) => d.claude.startLogin(input),
    completeClaudeLogin: async ({ loginId, code }) => d.claude.completeLogin(loginId, code),
    getClaudeLogin: async ({ loginId }) => d.claude.loginView(loginId),
    cancelClaudeLogin: async ({ loginId }) => ({ cancelled: d.claude.cancelLogin(loginId) }),
    importClaudeCredentials: async (input) => d.claude.importCredentials(input),
    listClaudeAccounts: async () => d.claude.accountsView(),
    refreshClaudeUsage: async ({ connectionId }) => d.claude.refreshUsage(connectionId),
    listSessions: async () => sessionsView(sessionDeps(), d.clock.now()),
    forgetSession: async ({ id }) => {
      if (!d.sessions.affinity.forget(id)) throw notFound('session pin', id);
      return { forgotten: true };
    },
    listLeases: async () => leasesView(sessionDeps(), d.clock.now()),
    releaseLease: async ({ id }) => {
      if (!d.sessions.leases.revoke(id, d.clock.now())) throw notFound('lease', id);
      return { released: true };
    },
    listErrorRules: async () => errorRulesView(d.errorRules),
    testErrorRule: async (input) => explainProviderError(d.errorRules, input, d.clock.now(), d.settings.values),
    probeEgressIp: async ({ id }) => d.egress.probe(d.registry.require(id)),
    ...d.notifications,
    ...d.team.handlers,
  };

  return Object.assign(guardTeamManaged(handlers, { ownerOf: d.team.ownerOf, registry: d.registry, combos: d.combos }), { health, appInfo });
}

export { ApiError };
