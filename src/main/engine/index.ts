// The engine's composition: store, settings, connections, keys, resilience, admission, proxy,
// request log and the management service, wired once. Both shells call createEngine(); the
// engine never imports electron.
import { homedir } from 'node:os';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { EventName, ResilienceSnapshot } from '../../shared/contract';
import { buildHealth } from './health/healthModel';
import { APP_VERSION } from '../../shared/version';
import { createAdmission } from './admission/admissionService';
import type { AdmissionPort } from './admission/port';
import { ClientKeyService } from './auth/clientKeys';
import { AgentConfigWriter } from './management/agentConfig';
import { ManagementToken } from './auth/managementToken';
import { ClaudeAccounts } from './claude/claudeAccounts';
import type { HttpFn } from './claude/http';
import { createClaudePipelineInterceptor } from './claude/pipelineInterceptor';
import { systemClock, type Clock } from './clock';
import { ConnectionRegistry } from './connections/registry';
import { CoalescedTopic, EventBus } from './events';
import { createLogger, SecretRedactor, stderrSink, type LogLevel, type LogSink, type Logger } from './logger';
import { FileLogJournal } from './logs/logJournal';
import { createNotifications } from './notifications';
import { tuneHeap } from './memory/heapPolicy';
import { createTeam, type Team } from './team';
import { TeamIdentity } from './team/identity';
import { TeamSettings } from './team/teamSettings';
import { ConfigShare } from './team/configShare';
import { createTeamMode } from './team/teamMode';
import { IdleTrim, fullGc, minorGc } from './memory/idleTrim';
import { YoungNudge } from './memory/youngNudge';
import { mallocTrim } from './memory/mallocTrim';
import { WorkerLogWriter } from './logs/logWriter';
import { RequestLog } from './logs/requestLog';
import { ConnectionTester } from './management/connectionTester';
import { createManagementService } from './management/service';
import { leasesView, sessionsView, type SessionViewDeps } from './management/sessionViews';
import type { AttemptInterceptor } from './proxy/attempt';
import { ProxyServer } from './proxy/server';
import { LOOPBACK_ONLY, localOrigin, proxyOrigin, type Exposure } from './net/exposure';
import type { EgressHistory } from './resilience/egressLockout';
import { ErrorRuleRegistry } from './resilience/errorRuleRegistry';
import type { Resilience } from './resilience/port';
import { createResilience } from './resilience/resilienceService';
import { statusRestatementInterceptor } from './resilience/statusRestatement';
import { ComboRegistry } from './routing/combos/comboRegistry';
import { ComboRouter } from './routing/combos/comboRouter';
import { ModelCatalog } from './routing/combos/modelCatalog';
import { PriceCatalogue } from './usage/prices';
import { PricesRepo } from './store/pricesRepo';
import { ToolLimits } from './routing/toolLimits';
import { QuotaSignals, quotaSignalsInterceptor } from './routing/combos/quotaSignals';
import { SessionAffinity } from './routing/affinity/sessionAffinity';
import { LeaseBook } from './routing/leases/leaseBook';
import { LeaseEndpoint } from './routing/leases/leaseEndpoint';
import { LeaseRouting } from './routing/leases/leaseRouting';
import { LatencyTracker } from './routing/latencyTracker';
import { SessionRouting } from './routing/sessionRouting';
import { createTeamSessions } from './routing/teamSessions';
import type { Target } from './routing/target';
import { TargetSelector } from './routing/selector';
import { SecretBox, type KeyProvider } from './secrets/secretBox';
import type { CliOverrides, Env } from './settings/resolve';
import { SettingsService } from './settings/settingsService';
import { BreakersRepo } from './store/breakersRepo';
import { ClientKeysRepo } from './store/clientKeysRepo';
import { CombosRepo } from './store/combosRepo';
import { ConnectionsRepo } from './store/connectionsRepo';
import { openScratch, openStore, type Db } from './store/db';
import { KeyValueRepo } from './store/keyValueRepo';
import { LeasesRepo } from './store/leasesRepo';
import { LogsRepo } from './store/logsRepo';
import { UsageRepo } from './store/usageRepo';
import { UsageService } from './usage/usageService';
import { SessionPinsRepo } from './store/sessionPinsRepo';
import { UnreadableRows } from './store/unreadableRows';
import { UpstreamClient } from './upstream/client';
import { EgressIps } from './upstream/egressIps';
import { TimeoutResolver } from './upstream/timeouts';
import type { Random } from './random';
import { systemRandom } from './random';

export interface EngineContext {
  db: Db;
  clock: Clock;
  random: Random;
  env: Env;
  log: Logger;
  bus: EventBus;
  settings: SettingsService;
  registry: ConnectionRegistry;
  breakersRepo: BreakersRepo;
  /** Provider error rules: the built-in catalog and the operator's (kept in step with settings by resilience). */
  errorRules: ErrorRuleRegistry;
  /** Each connection's last known egress IP (the egress-bucketed lockout). */
  egress: EgressHistory;
  /** Team mode (issue 26): the state shared with other instances through Redis; off: a no-op team. */
  team: Team;
  /** Team mode: each connection's id in the team (a keyed hash of its credential), and back. */
  teamIds: TeamIdentity;
}

export interface EngineOptions {
  dataDir: string;
  shell: 'desktop' | 'headless';
  keyProvider: KeyProvider;
  env?: Env;
  clock?: Clock;
  random?: Random;
  logSinks?: LogSink[];
  logLevel?: LogLevel;
  /** better_sqlite3.node for another ABI (the desktop's Electron build). */
  nativeBinding?: string;
  /** Proxy port from the command line; beats the setting for this run. */
  proxyPort?: number;
  /** Where the management API is reachable over HTTP (headless), for the UI. */
  managementUrl?: () => string | null;
  /** Where the proxy listens and which host names it answers (a team server's opt-in); default loopback only. */
  exposure?: Exposure;
  /** Provider error rules with another built-in catalog or allowlists (tests); default: the shipped ones. */
  errorRules?: ErrorRuleRegistry;
  /** Factories for the layers that have more than one implementation. */
  resilience?: (ctx: EngineContext) => Resilience;
  admission?: (ctx: EngineContext & { resilience: Resilience }) => AdmissionPort;
  /** Claude subscription accounts: opens the sign-in page in the system browser (the desktop shell). */
  openUrl?: (url: string) => void | Promise<void>;
  /** The home directory whose agent configuration files "Apply" writes (default: the user's). */
  agentHome?: string;
  /** Claude Code's credentials file for "Import from Claude Code" (default ~/.claude/.credentials.json). */
  claudeCredentialsPath?: string;
  /** The Claude token endpoint / account API transport (default undici). */
  claudeHttp?: HttpFn;
  /** More attempt interceptors, inside the Claude one (e.g. an in-attempt retry that reacts to 400s, R-CLA-14). */
  interceptors?: readonly AttemptInterceptor[];
  /**
   * Team mode (issue 26): the Redis address (`--redis`; else SWITCHYARD_REDIS_URL) and the team's
   * name (`--team`; else SWITCHYARD_TEAM, else "default"). No address: one process, nothing shared.
   */
  team?: { redisUrl?: string | null; name?: string | null; instanceId?: string; tlsCaFile?: string | null };
}

export type Engine = Awaited<ReturnType<typeof createEngine>>;

/** How soon a change of the session pins or leases reaches the dashboard (one push per burst). */
const SESSIONS_PUSH_MS = 500;
/** A pin's sliding expiry moves with every request of its session: pushed at most this often. */
const SESSION_SLIDES_PUSH_MS = 5_000;

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
/** SWITCHYARD_LOG_LEVEL=debug|info|warn|error; anything else means info. */
function logLevelFrom(v: string | undefined): LogLevel {
  return LOG_LEVELS.includes(v as LogLevel) ? (v as LogLevel) : 'info';
}

export async function createEngine(o: EngineOptions) {
  const clock = o.clock ?? systemClock;
  const random = o.random ?? systemRandom;
  const env = o.env ?? process.env;
  const redactor = new SecretRedactor();
  const log = createLogger({
    sinks: o.logSinks ?? [stderrSink],
    level: o.logLevel ?? logLevelFrom(env.SWITCHYARD_LOG_LEVEL),
    redactor,
    now: () => clock.now(),
  });
  const startedAt = clock.now();
  const db = openStore({ path: join(o.dataDir, 'switchyard.db'), nativeBinding: o.nativeBinding, now: () => clock.now() });
  try {
    chmodSync(join(o.dataDir, 'switchyard.db'), 0o600);
  } catch {
    // not fatal: the data dir itself is 0700
  }
  const box = new SecretBox(o.keyProvider);
  const token = ManagementToken.loadOrCreate(o.dataDir);
  // The management token is a secret like any key: no log line may carry it.
  redactor.hold('management-token', token.value);
  const bus = new EventBus();

  // Rows a repository cannot read are skipped, reported here, and listed in health.
  const unreadable = new UnreadableRows(log.child('store'));
  const cliSettings: CliOverrides = o.proxyPort !== undefined ? { 'proxy.port': { value: o.proxyPort, flag: '--proxy-port' } } : {};
  const settings = new SettingsService(new KeyValueRepo(db, () => clock.now(), unreadable), env, log.child('settings'), cliSettings);
  const registry = new ConnectionRegistry(new ConnectionsRepo(db, unreadable), box, redactor, clock);
  const clientKeys = new ClientKeyService(new ClientKeysRepo(db), box, redactor, clock);
  clientKeys.ensureDefault();
  const breakersRepo = new BreakersRepo(db, () => clock.now(), unreadable);

  const upstream = new UpstreamClient();
  const errorRules = o.errorRules ?? new ErrorRuleRegistry();
  // The request log is created further down; the egress history reads it only when a 429 arrives.
  let requestLogRef: RequestLog | null = null;
  const egress = new EgressIps({
    upstream,
    registry,
    clock,
    probeUrl: () => settings.values['egress.probeUrl'],
    history: (ids, since) => requestLogRef?.lastEgressIps(ids, since) ?? new Map(),
    log: log.child('egress'),
  });

  // Team settings: the command line (or the caller's options) > the environment > saved here.
  const teamKv = new KeyValueRepo(db, () => clock.now(), unreadable);
  const teamSettings = new TeamSettings({ repo: teamKv, box, env, cli: o.team, redactor, log: log.child('team') });
  const teamUrl = teamSettings.address().value;
  const teamName = teamSettings.team().value;
  teamSettings.markRunning(teamUrl, teamName);
  const team = await createTeam({
    url: teamUrl,
    name: teamName,
    clock,
    log: log.child('team'),
    instanceId: o.team?.instanceId,
    tlsCaFile: o.team?.tlsCaFile ?? env.SWITCHYARD_REDIS_CA ?? null,
  });
  const teamIds = new TeamIdentity(registry, team.name);
  const ctx: EngineContext = { db, clock, random, env, log, bus, settings, registry, breakersRepo, errorRules, egress, team, teamIds };
  const resilience = (o.resilience ?? ((c) => createResilience(c)))(ctx);
  const admission = (o.admission ?? ((c) => createAdmission({ ...c, log: c.log.child('admission') })))({ ...ctx, resilience });

  const latency = new LatencyTracker();
  const quota = new QuotaSignals();
  const timeouts = new TimeoutResolver(() => settings.snapshot);
  const claude = new ClaudeAccounts({
    clock,
    registry,
    settings,
    resilience,
    redactor,
    log: log.child('claude'),
    env,
    http: o.claudeHttp,
    credentialsPath: o.claudeCredentialsPath,
    openUrl: o.openUrl,
    team,
    teamIds,
  });
  // Pooled sockets of an outbound proxy no connection uses any more are closed.
  const proxyOf = new Map(registry.all().map((c) => [c.id, registry.outboundProxyOf(c)]));
  registry.onChange((kind, ids) => {
    if (kind !== 'config') return;
    for (const id of ids) {
      const before = proxyOf.get(id) ?? null;
      const conn = registry.get(id);
      const after = conn ? registry.outboundProxyOf(conn) : null;
      proxyOf.set(id, after);
      if (!conn) proxyOf.delete(id);
      if (before && before !== after && ![...proxyOf.values()].includes(before)) void upstream.forgetProxy(before);
    }
  });
  registry.onChange((kind, ids) => {
    if (kind !== 'config') return;
    for (const id of ids) {
      // A changed connection may leave through another route: probe its egress IP afresh.
      egress.forget(id);
      if (registry.get(id)) continue;
      latency.forget(id);
      quota.forget(id);
    }
  });
  // One price catalogue: the combo strategies read it through the model catalog, the request log prices by it.
  const prices = new PriceCatalogue(new PricesRepo(db, () => clock.now()));
  const catalog = new ModelCatalog(undefined, prices);
  const applyCatalog = () =>
    catalog.setOverrides({ contextWindows: settings.values['combos.contextWindows'], modelPrices: settings.values['combos.modelPrices'] });
  applyCatalog();
  const combosRepo = new CombosRepo(db);
  const combos = new ComboRegistry(combosRepo, registry, catalog, clock);
  const selector = new TargetSelector({ random, latency, load: (id) => admission.load(id), now: () => clock.now() });
  const comboRouter = new ComboRouter({
    combos,
    connections: () => registry.all(),
    connection: (id) => registry.get(id),
    selector,
    routing: () => ({ name: settings.values['routing.strategy'], latencyWeight: settings.values['p2cLatency.weight'] }),
    autoWeights: () => settings.values['combos.autoWeights'],
    random,
    latency,
    load: (id) => admission.load(id),
    quota,
    // Claude subscriptions: the binding usage window (the lower remaining of 5 h and 7 d).
    accountQuota: (id, now) => {
      const h = claude.usageFor(id)?.headroom;
      return h ? { fraction: h.remaining, requestsRemaining: null, tokensRemaining: null, resetAt: h.resetsAt, observedAt: now - h.ageMs } : null;
    },
    catalog,
    clock,
  });
  // Session affinity and exclusive leases (routing/affinity, routing/leases).
  const connectionName = (id: string) => registry.get(id)?.name ?? null;
  const exclusion = (t: Target, now: number) => resilience.exclusion(t, now);
  const affinity = new SessionAffinity({
    repo: new SessionPinsRepo(db),
    clock,
    ttlMs: () => settings.values.sessionAffinityTtlMs,
    exclusion,
    connectionName,
  });
  const leasesRepo = new LeasesRepo(db, () => clock.now());
  const leaseBook = new LeaseBook(leasesRepo, clock);
  // Team mode: pins and leases are the team's (routing/teamSessions.ts); the lease ledger asks it.
  const teamSessions = team.enabled
    ? createTeamSessions({
        team,
        teamIds,
        clientKeys,
        combos,
        affinity,
        book: leaseBook,
        leasesRepo,
        clock,
        log: log.child('sessions'),
        ttlMs: () => settings.values.sessionAffinityTtlMs,
      })
    : null;
  const ledger = teamSessions?.leases;
  const sessions = new SessionRouting(affinity, new LeaseRouting({ book: leaseBook, ledger, clientKey: (id) => clientKeys.get(id), exclusion, connectionName }));
  registry.onChange((kind, ids) => {
    if (kind !== 'config') return;
    const gone = new Set(ids.filter((id) => !registry.get(id)));
    if (gone.size === 0) return;
    affinity.forgetWhere((p) => gone.has(p.connectionId));
    leaseBook.revokeWhere((l) => gone.has(l.connectionId));
  });
  combos.onChange(() => affinity.forgetWhere((p) => p.scope !== '' && !combos.get(p.scope)));
  const dbPath = join(o.dataDir, 'switchyard.db');
  // Before the log worker starts, which takes both flags: its own collection (idleTrim.ts) and the
  // heap's growing factor (heapPolicy.ts).
  const gc = fullGc();
  tuneHeap();
  const logWriter = await WorkerLogWriter.start({
    db,
    dbPath,
    clock,
    nativeBinding: o.nativeBinding,
    onError: (err) => log.error('requestLog.writeFailed', { err }),
  });
  const journal = new FileLogJournal(join(o.dataDir, 'request-log-journal'), (err) => log.error('requestLog.journalFailed', { err }));
  const requestLog = new RequestLog(
    new LogsRepo(db, unreadable),
    logWriter,
    clock,
    bus,
    log.child('requestLog'),
    () => ({
      retentionDays: settings.values['logs.retentionDays'],
      maxRows: settings.values['logs.maxRows'],
    }),
    journal,
    (id) => {
      const k = clientKeys.get(id);
      return k ? { name: k.name, revoked: k.revokedAt !== null } : null;
    },
  );
  requestLog.recover();
  requestLogRef = requestLog;
  const idleTrim = new IdleTrim({
    clock,
    gc,
    startup: true,
    others: () => {
      void logWriter.trim();
      try {
        db.pragma('shrink_memory');
      } catch (err) {
        log.warn('memory.trimFailed', { err });
      }
    },
    release: () => {
      try {
        const scratch = openScratch(o.nativeBinding);
        try {
          mallocTrim(scratch);
        } finally {
          scratch.close();
        }
      } catch (err) {
        log.warn('memory.trimFailed', { err });
      }
    },
  });
  bus.on('logs', (batch) => idleTrim.activity(batch.length));

  const proxy = new ProxyServer({
    registry,
    settings,
    resilience,
    admission,
    upstream,
    selector,
    latency,
    combos: comboRouter,
    sessions,
    toolLimits: new ToolLimits(),
    prices,
    leases: new LeaseEndpoint({ book: leaseBook, ledger, connection: (id) => registry.get(id), exclusion, clock, log: log.child('leases') }),
    requestLog,
    timeouts,
    redactor,
    clock,
    log: log.child('proxy'),
    clientKeys,
    startedAt,
    exposure: o.exposure,
    youngNudge: new YoungNudge(minorGc()),
    // Outermost first. The quota-header tracker and the combo router's last-known-good memory see
    // each attempt's final outcome; the Claude interceptor must see what any in-attempt retry
    // returns (R-CLA-14), so the optional extra interceptors sit inside it.
    interceptors: [
      quotaSignalsInterceptor(quota, clock),
      comboRouter.interceptor(),
      sessions.interceptor(),
      egress.interceptor(),
      createClaudePipelineInterceptor({ accounts: claude, resilience, timeouts, clock, random }),
      ...(o.interceptors ?? []),
      // Status restatement is innermost, so every other interceptor already sees the corrected status.
      statusRestatementInterceptor(),
    ],
  });
  let proxyError: string | null = null;
  // Notifications and the state timeline: subscriptions on the layers above, nothing in the proxy's loop.
  const notifications = createNotifications({ db, clock, bus, settings, registry, resilience, claude });
  // Team mode's configuration sharing (publish / follow) and the Team page's view (issue 26).
  const configShare = new ConfigShare({ team, teamSettings, registry, combos, combosRepo, db, settings, kv: teamKv, clock, log: log.child('team') });
  const teamMode = createTeamMode({ team, teamSettings, config: configShare, bus, clock, raise: (n) => notifications.center.raise(n) });

  const management = createManagementService({
    version: APP_VERSION,
    shell: o.shell,
    dataDir: o.dataDir,
    startedAt,
    clock,
    registry,
    settings,
    resilience,
    admission,
    clientKeys,
    requestLog,
    usage: new UsageService({
      repo: new UsageRepo(db),
      settle: () => requestLog.settled(),
      connectionName: (id) => registry.get(id)?.name ?? null,
      clientKeyName: (id) => clientKeys.get(id)?.name ?? null,
    }),
    token,
    tester: new ConnectionTester(registry, upstream, clock, redactor, (c) => timeouts.of(c)),
    combos,
    catalog,
    prices,
    claude,
    errorRules,
    egress,
    proxy: () => {
      const port = proxy.port;
      const e = o.exposure ?? LOOPBACK_ONLY;
      return { port, error: proxyError, url: port === null ? null : proxyOrigin(e, port), localUrl: port === null ? null : localOrigin(e, port) };
    },
    managementUrl: o.managementUrl ?? (() => null),
    unreadable: () => unreadable.list(),
    sessions: { affinity, leases: leaseBook, ttlMs: () => settings.values.sessionAffinityTtlMs },
    agentConfigs: new AgentConfigWriter({ home: o.agentHome ?? homedir(), stateDir: o.dataDir, now: () => clock.now() }),
    notifications: notifications.handlers,
    team: teamMode,
  });

  /** The resilience push: the layer views and the health model built from them (once per push). */
  const resilienceSnapshot = (): ResilienceSnapshot => {
    const now = clock.now();
    const breakers = resilience.breakers(now);
    const lockouts = resilience.lockouts(now);
    const extra = resilience.healthLayers(now);
    const health = buildHealth(
      { connections: registry.all(), breakers, lockouts, breakerHolds: extra.breakerHolds, failureStreaks: extra.failureStreaks, admission: admission.views() },
      now,
    );
    return { now, breakers, cooldowns: resilience.cooldowns(now), lockouts, health };
  };

  // Push events: bursts of changes become one push per topic per interval.
  const sessionDeps: SessionViewDeps = { affinity, leases: leaseBook, clientKeys, registry, combos, ttlMs: () => settings.values.sessionAffinityTtlMs };
  const topics = {
    connections: new CoalescedTopic(bus, clock, 'connections', () => registry.all().map((c) => registry.view(c)), 50),
    resilience: new CoalescedTopic(
      bus,
      clock,
      'resilience',
      () => resilienceSnapshot(),
      100,
    ),
    admission: new CoalescedTopic(bus, clock, 'admission', () => admission.views(), 250),
    health: new CoalescedTopic(bus, clock, 'health', () => management.health(), 250),
    claude: new CoalescedTopic(bus, clock, 'claude', () => claude.accountsView(), 250),
    // Pins and leases: a change of the set within half a second; a pin's sliding expiry (every
    // request of a pinned session) at most every 5 s. Touching a topic is one check, so the
    // proxy's hot path stays cheap, and nothing is built while no dashboard listens.
    sessions: new CoalescedTopic(bus, clock, 'sessions', () => sessionsView(sessionDeps, clock.now()), SESSIONS_PUSH_MS),
    sessionSlides: new CoalescedTopic(bus, clock, 'sessions', () => sessionsView(sessionDeps, clock.now()), SESSION_SLIDES_PUSH_MS),
    leases: new CoalescedTopic(bus, clock, 'leases', () => leasesView(sessionDeps, clock.now()), SESSIONS_PUSH_MS),
  };
  affinity.onChange((change) => (change === 'pins' ? topics.sessions : topics.sessionSlides).touch());
  leaseBook.onChange(() => topics.leases.touch());
  claude.onChange(() => topics.claude.touch());
  claude.onLogin((v) => bus.emit('claudeLogin', v));
  registry.onChange((kind) => {
    topics.connections.touch();
    topics.resilience.touch();
    topics.health.touch();
    if (kind === 'config') {
      topics.admission.touch();
      topics.sessions.touch();
      topics.leases.touch();
    }
  });
  resilience.onChange(() => {
    topics.resilience.touch();
    topics.health.touch();
    topics.connections.touch();
  });
  admission.onChange(() => topics.admission.touch());
  // A queue pause starting or lifted early changes the health model (carried by the resilience push).
  admission.onPauseChange(() => topics.resilience.touch());
  unreadable.onChange(() => topics.health.touch());
  combos.onChange(() => bus.emit('combos', combos.snapshot()));
  settings.onChange((changed) => {
    if (changed.some((k) => k === 'combos.contextWindows' || k === 'combos.modelPrices')) applyCatalog();
  });
  settings.onChange((changed) => {
    bus.emit('settings', settings.view());
    topics.resilience.touch();
    topics.admission.touch();
    if (changed.includes('sessionAffinityTtlMs')) topics.sessions.touch();
    if (changed.includes('proxy.port')) void rebindProxy(settings.values['proxy.port']);
  });

  /** Moves the proxy to a new port; on failure the old listener keeps serving and health says why. */
  async function rebindProxy(port: number): Promise<void> {
    const previous = proxy.port;
    try {
      await proxy.listen(port);
      proxyError = null;
      log.info('proxy.listening', { port: proxy.port });
    } catch (err) {
      const code = (err as { code?: string }).code;
      const why = code === 'EADDRINUSE' ? 'it is already in use' : (err as Error).message;
      proxyError =
        previous !== null
          ? `could not move the proxy to port ${port} (${why}); still listening on ${previous}`
          : `could not listen on port ${port} (${why}); pick another proxy port in Settings`;
      log.error('proxy.listenFailed', { port, err });
      notifications.proxyBindFailed(port, code === 'EADDRINUSE' ? 'The port is already in use' : `The port could not be opened (${(err as Error).message})`);
    }
    topics.health.touch();
  }

  let started = false;
  const engine = {
    version: APP_VERSION,
    dataDir: o.dataDir,
    clock,
    log,
    bus,
    db,
    token,
    settings,
    registry,
    clientKeys,
    resilience,
    admission,
    requestLog,
    combos,
    /** Claude subscription accounts; `claude.usageFor(id)` is the read interface for combos strategies. */
    claude,
    /** The notification feed (`notifications.center.onRaised` drives the desktop's native notifications) and the state timeline. */
    notifications,
    handlers: management as import('../../shared/contract').Handlers,
    health: management.health,
    appInfo: management.appInfo,
    get proxyPort(): number | null {
      return proxy.port;
    },
    get proxyError(): string | null {
      return proxyError;
    },
    /** Snapshot payloads for a new subscriber (SSE connect, window load). */
    initialEvents(): { name: EventName; payload: unknown }[] {
      const now = clock.now();
      return [
        { name: 'connections', payload: registry.all().map((c) => registry.view(c)) },
        { name: 'resilience', payload: resilienceSnapshot() },
        { name: 'admission', payload: admission.views() },
        { name: 'settings', payload: settings.view() },
        { name: 'health', payload: management.health() },
        { name: 'combos', payload: combos.snapshot() },
        { name: 'claude', payload: claude.accountsView() },
        { name: 'sessions', payload: sessionsView(sessionDeps, now) },
        { name: 'leases', payload: leasesView(sessionDeps, now) },
        { name: 'notifications', payload: notifications.center.feed() },
        { name: 'team', payload: teamMode.view() },
      ];
    },
    /** Team mode: the state shared through Redis (a no-op team when off), and the connections' team ids. */
    team,
    teamIds,
    /** Team mode's view, settings and configuration sharing (the Team page). */
    teamMode,
    async start(): Promise<{ proxyPort: number | null; error: string | null }> {
      if (started) return { proxyPort: proxy.port, error: proxyError };
      started = true;
      // Joins the team before serving (bounded: an unreachable Redis leaves it degraded, not waiting).
      await team.start();
      configShare.start();
      const port = settings.values['proxy.port'];
      try {
        await proxy.listen(port);
        log.info('proxy.listening', { port: proxy.port });
      } catch (err) {
        const code = (err as { code?: string }).code;
        proxyError =
          code === 'EADDRINUSE'
            ? `port ${port} is already in use; pick another proxy port in Settings`
            : `could not listen on port ${port}: ${(err as Error).message}`;
        log.error('proxy.listenFailed', { port, err });
        notifications.proxyBindFailed(port, code === 'EADDRINUSE' ? 'The port is already in use' : `The port could not be opened (${(err as Error).message})`);
      }
      return { proxyPort: proxy.port, error: proxyError };
    },
    async stop(): Promise<void> {
      idleTrim.stop();
      for (const t of Object.values(topics)) t.dispose();
      notifications.close();
      claude.close();
      await proxy.close();
      await admission.close();
      await upstream.close();
      await requestLog.close();
      affinity.flush();
      teamMode.close();
      await teamSessions?.close();
      await team.close();
      db.close();
    },
  };
  return engine;
}
