// The Claude subscription accounts as the engine runs them: one token manager, lane controller,
// limit-reset service and usage book for every connection of kind "claude-subscription", kept in
// step with the connection registry (credentials loaded, re-loaded when they change, forgotten when
// the connection goes), plus the three ways in (sign-in with PKCE, import from Claude Code, pasted
// tokens), the dashboard's views and the read interface combos strategies use (`usageFor`).
// The proxy side is pipelineInterceptor.ts; nothing here is on the hot path of other connections.
import type { ClaudeAccountView, ClaudeAccountsView, ClaudeLoginStart, ClaudeLoginView, ConnectionView } from '../../../shared/model';
import { CLAUDE_KIND } from '../../../shared/model';
import type { Clock, CancelTimer } from '../clock';
import type { ConnectionRecord, ConnectionRegistry } from '../connections/registry';
import { ApiError, badInput, notFound } from '../errors';
import type { Logger, SecretRedactor } from '../logger';
import type { ResiliencePort } from '../resilience/port';
import type { Env } from '../settings/resolve';
import type { SettingsService } from '../settings/settingsService';
import { AccountApiError, fetchUsage } from './accountApi';
import { ClaudeAuthError } from './claudeAuthError';
import { shareClaudeAccounts } from './claudeTeam';
import type { Team } from '../team';
import type { TeamIdentity } from '../team/identity';
import { claudeCodeCredentialsPath, readClaudeCodeCredentials } from './claudeCodeCredentials';
import { accountApiBase, claudeConfigFrom, type ClaudeOAuthConfig } from './claudeConfig';
import type { ClaudeEvent } from './claudeInterceptor';
import { createUndiciHttp, type HttpFn } from './http';
import { LaneController } from './laneController';
import { LimitResetService } from './limitReset';
import { ClaudeLoginFlow, LOGIN_TTL_MS } from './loginFlow';
import { parsePastedTokens, parseStoredBundle, serializeBundle, type ClaudeTokenBundle } from './tokenBundle';
import { ClaudeTokenManager } from './tokenManager';
import type { UnifiedHeaders } from './unifiedHeaders';
import { UsageBook, type Headroom } from './usageWindows';

export interface ClaudeAccountsDeps {
  clock: Clock;
  registry: ConnectionRegistry;
  settings: Pick<SettingsService, 'values'>;
  resilience: Pick<ResiliencePort, 'markConnection'>;
  redactor: SecretRedactor;
  log: Logger;
  env: Env;
  /** The token endpoint and account API transport (default: undici). */
  http?: HttpFn;
  /** Claude Code's credentials file (default: $CLAUDE_CONFIG_DIR or ~/.claude, /.credentials.json). */
  credentialsPath?: string;
  /** Opens a URL in the system browser (the desktop shell); absent: the dashboard opens it. */
  openUrl?: (url: string) => void | Promise<void>;
  /** Host name in the loopback redirect URI (default "localhost", as Claude Code uses). */
  loopbackHost?: string;
  /** Team mode (issue 26): lanes and limit resets shared with the team (absent or off: this process only). */
  team?: Team;
  teamIds?: Pick<TeamIdentity, 'ofId' | 'localIds'>;
}

/** Where new credentials go: an existing Claude connection, or a new one with these fields. */
export interface ClaudeTarget {
  connectionId?: string;
  name?: string;
  provider?: string;
  baseUrl?: string;
  priority?: number;
}

/** What combos' headroom / reset-aware strategies read about one account. */
export interface ClaudeUsageInfo {
  /** Remaining fraction per window and the binding one; null before any observation. */
  headroom: Headroom | null;
  /** The account is in the low-priority lane (answers are slower) until `laneUntil`. */
  laneActive: boolean;
  laneUntil: number | null;
  /** No limit reset is tried before this (null: one may be tried). */
  resetNotBefore: number | null;
  /** The sign-in is dead: the account cannot serve until someone signs in again. */
  expired: boolean;
}

/** The small read interface the combos strategies get (the lead wires it in). */
export interface ClaudeUsageReader {
  usageFor(connectionId: string): ClaudeUsageInfo | null;
}

interface LoginIntent {
  target: ClaudeTarget;
  view: ClaudeLoginView;
  dropTimer: CancelTimer;
}

/** Counts every recorded answer so the account view can be pushed. */
class ObservedUsageBook extends UsageBook {
  constructor(private readonly changed: (id: string) => void) {
    super();
  }
  override recordHeaders(accountId: string, u: UnifiedHeaders, now: number): boolean {
    const r = super.recordHeaders(accountId, u, now);
    if (r) this.changed(accountId);
    return r;
  }
  override recordUsageAnswer(accountId: string, a: Parameters<UsageBook['recordUsageAnswer']>[1], now: number): void {
    super.recordUsageAnswer(accountId, a, now);
    this.changed(accountId);
  }
}

export class ClaudeAccounts implements ClaudeUsageReader {
  readonly tokens: ClaudeTokenManager;
  readonly lane = new LaneController();
  readonly usage: UsageBook;
  readonly reset: LimitResetService;
  readonly login: ClaudeLoginFlow;
  private readonly http: HttpFn;
  /** The stored secret each account's tokens were loaded from (to see a change). */
  private readonly loaded = new Map<string, string>();
  private readonly intents = new Map<string, LoginIntent>();
  private readonly listeners = new Set<() => void>();
  private readonly loginListeners = new Set<(v: ClaudeLoginView) => void>();
  private readonly offs: (() => void)[] = [];

  constructor(private readonly d: ClaudeAccountsDeps) {
    this.http = d.http ?? createUndiciHttp();
    const config = () => this.config();
    this.tokens = new ClaudeTokenManager({
      clock: d.clock,
      http: this.http,
      config,
      redactor: d.redactor,
      persist: (id, bundle) => {
        const s = serializeBundle(bundle);
        this.loaded.set(id, s);
        d.registry.rotateSecret(id, s);
        this.changed();
      },
      onExpired: (id, message) => {
        d.log.warn('claude.sign_in_expired', { connectionId: id });
        d.resilience.markConnection(id, { kind: 'terminal', status: 'expired', reason: 'auth_expired', message }, d.clock.now());
        this.changed();
      },
      onPersistError: (id, err) => d.log.error('claude.persist_failed', { connectionId: id, err }),
    });
    this.usage = new ObservedUsageBook(() => this.changed());
    this.reset = new LimitResetService({
      clock: d.clock,
      http: this.http,
      tokens: this.tokens,
      usage: this.usage,
      onOrganizationDiscovered: (id, org) => this.rememberOrganization(id, org),
    });
    this.login = new ClaudeLoginFlow({ clock: d.clock, http: this.http, config, loopbackHost: d.loopbackHost });
    if (d.team?.enabled && d.teamIds) shareClaudeAccounts({ team: d.team, teamIds: d.teamIds, clock: d.clock, lane: this.lane, reset: this.reset });
    this.offs.push(this.lane.onChange(() => this.changed()));
    this.offs.push(this.reset.onChange(() => this.changed()));
    this.offs.push(d.registry.onChange((kind, ids) => kind === 'config' && this.sync(ids)));
    this.sync(d.registry.all().map((c) => c.id));
  }

  config(): ClaudeOAuthConfig {
    return claudeConfigFrom(this.d.settings.values);
  }

  /** Origin of the usage / profile / reset calls of one connection. */
  apiBaseFor(conn: Pick<ConnectionRecord, 'baseUrl'>): string {
    return accountApiBase({ apiBaseUrl: this.d.settings.values['claude.apiBaseUrl'] }, conn.baseUrl);
  }

  /** Subscribe to any change of an account view (for the push topic). */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Subscribe to sign-ins finishing or failing. */
  onLogin(fn: (v: ClaudeLoginView) => void): () => void {
    this.loginListeners.add(fn);
    return () => this.loginListeners.delete(fn);
  }

  /** The interceptor's events: logged (never with a token) and pushed. */
  onInterceptorEvent = (e: ClaudeEvent): void => {
    const { type, ...fields } = e;
    this.d.log.info(type, type === 'limit_reset' ? { connectionId: e.connectionId, outcome: e.outcome.kind } : fields);
  };

  // ---- the registry ------------------------------------------------------------------------------

  /** Loads, re-loads or forgets the credentials of these connections. */
  private sync(ids: readonly string[]): void {
    let any = false;
    for (const id of ids) {
      const conn = this.d.registry.get(id);
      if (!conn || conn.kind !== CLAUDE_KIND) {
        if (this.loaded.has(id) || this.tokens.has(id)) {
          this.forget(id);
          any = true;
        }
        continue;
      }
      // Switching the lane off forgets an active lane at once.
      if (conn.providerSpecificData.lowPriorityMode !== true && this.lane.view(id, this.d.clock.now()).state !== 'idle') this.lane.forget(id);
      const secret = this.d.registry.secretOf(conn);
      if (secret === null) {
        if (this.tokens.has(id)) this.forget(id);
        this.loaded.delete(id);
        any = true;
        continue;
      }
      if (this.loaded.get(id) === secret) continue;
      let bundle: ClaudeTokenBundle;
      try {
        bundle = parseStoredBundle(secret);
      } catch {
        this.d.log.warn('claude.credentials_unreadable', { connectionId: id });
        this.forget(id);
        this.loaded.set(id, secret);
        any = true;
        continue;
      }
      const cur = this.tokens.bundle(id);
      const ours = cur !== undefined && cur.accessToken === bundle.accessToken;
      if (!ours && cur !== undefined) {
        // New credentials (sign-in again, import, paste): whatever was learnt about the old ones goes.
        this.lane.forget(id);
        this.reset.forget(id);
        this.usage.forget(id);
      }
      this.tokens.set(id, bundle);
      this.loaded.set(id, secret);
      any = true;
    }
    if (any) this.changed();
  }

  private forget(id: string): void {
    this.tokens.remove(id);
    this.lane.forget(id);
    this.reset.forget(id);
    this.usage.forget(id);
    this.loaded.delete(id);
  }

  private rememberOrganization(id: string, org: string): void {
    const conn = this.d.registry.get(id);
    if (!conn || conn.providerSpecificData.organizationUUID) return;
    try {
      this.d.registry.update(id, { providerSpecificData: { ...conn.providerSpecificData, organizationUUID: org } }, false);
    } catch (err) {
      this.d.log.warn('claude.organization_not_saved', { connectionId: id, err });
    }
  }

  private changed(): void {
    for (const fn of [...this.listeners]) fn();
  }

  private claudeConnections(): ConnectionRecord[] {
    return this.d.registry.all().filter((c) => c.kind === CLAUDE_KIND);
  }

  // ---- views ---------------------------------------------------------------------------------------

  accountView(conn: ConnectionRecord, now: number): ClaudeAccountView {
    const id = conn.id;
    const t = this.tokens.view(id, now);
    const u = this.usage.snapshot(id, now);
    const lane = this.lane.view(id, now);
    return {
      connectionId: id,
      token: t,
      subscriptionType: this.tokens.bundle(id)?.subscriptionType ?? null,
      usage: u && {
        fiveHour: u.fiveHour,
        sevenDay: u.sevenDay,
        status: u.status,
        representativeClaim: u.representativeClaim,
        overage: u.overage,
        updatedAt: u.updatedAt,
      },
      lane,
      reset: this.reset.view(id),
    };
  }

  accountsView(): ClaudeAccountsView {
    const now = this.d.clock.now();
    return { now, accounts: this.claudeConnections().map((c) => this.accountView(c, now)) };
  }

  usageFor(connectionId: string): ClaudeUsageInfo | null {
    const conn = this.d.registry.get(connectionId);
    if (!conn || conn.kind !== CLAUDE_KIND) return null;
    const now = this.d.clock.now();
    const lane = this.lane.view(connectionId, now);
    const memo = this.reset.view(connectionId);
    const notBefore = Math.max(memo?.nextAvailableAt ?? 0, memo?.backoffUntil ?? 0);
    return {
      headroom: this.usage.headroom(connectionId, now),
      laneActive: lane.state === 'active',
      laneUntil: lane.state === 'active' ? lane.until : null,
      resetNotBefore: notBefore > now ? notBefore : null,
      expired: this.tokens.view(connectionId, now)?.status === 'expired',
    };
  }

  /** `GET /api/oauth/usage` (R-CLA-17 step 1) now, for one account or all; records the windows. */
  async refreshUsage(connectionId?: string): Promise<ClaudeAccountsView> {
    const targets = connectionId ? [this.requireClaude(connectionId)] : this.claudeConnections();
    const failures: string[] = [];
    await Promise.all(
      targets.map(async (conn) => {
        const tok = await this.tokens.token(conn.id);
        if (!tok.ok) return void failures.push(`${conn.name}: ${tok.message}`);
        try {
          const answer = await fetchUsage(this.http, { apiBase: this.apiBaseFor(conn), accessToken: tok.token });
          this.usage.recordUsageAnswer(conn.id, answer, this.d.clock.now());
        } catch (err) {
          failures.push(`${conn.name}: ${err instanceof AccountApiError ? err.message : 'the usage call failed'}`);
        }
      }),
    );
    if (connectionId && failures.length > 0) throw new ApiError(502, 'usage_unavailable', failures[0]!);
    if (failures.length > 0) this.d.log.warn('claude.usage_refresh_failed', { failures });
    return this.accountsView();
  }

  /** The upstream headers that authenticate a "Test" of this connection, or why there are none. */
  async testHeaders(connectionId: string): Promise<{ ok: true; headers: Record<string, string> } | { ok: false; message: string }> {
    const tok = await this.tokens.token(connectionId);
    if (!tok.ok) return { ok: false, message: tok.message };
    return { ok: true, headers: { authorization: `Bearer ${tok.token}`, 'anthropic-beta': 'oauth-2025-04-20' } };
  }

  // ---- the three ways in -----------------------------------------------------------------------------

  /** Pasted tokens (create/update with kind claude-subscription): the secret becomes a token bundle. */
  prepareSecret(secret: string): string {
    try {
      return serializeBundle(parsePastedTokens({ accessToken: secret }, this.d.clock.now()));
    } catch (err) {
      if (err instanceof ClaudeAuthError) throw badInput('secret', err.field && err.field !== 'accessToken' ? `${err.message} (${err.field})` : err.message);
      throw err;
    }
  }

  async startLogin(input: ClaudeTarget & { mode?: 'loopback' | 'paste' }): Promise<ClaudeLoginStart> {
    const { mode = 'loopback', ...target } = input;
    this.checkTarget(target);
    const s = await this.login.start(mode).catch((err: unknown) => {
      throw toApi(err);
    });
    const view: ClaudeLoginView = { loginId: s.loginId, status: 'pending', connectionId: null, error: null };
    const intent: LoginIntent = {
      target,
      view,
      dropTimer: this.d.clock.setTimer(() => this.intents.delete(s.loginId), LOGIN_TTL_MS + 60_000),
    };
    this.intents.set(s.loginId, intent);
    this.login.result(s.loginId).then(
      (bundle) => {
        try {
          this.finishLogin(s.loginId, bundle);
        } catch (err) {
          this.failLogin(s.loginId, err);
        }
      },
      (err) => this.failLogin(s.loginId, err),
    );
    let opened = false;
    if (this.d.openUrl) {
      try {
        await this.d.openUrl(s.authorizeUrl);
        opened = true;
      } catch (err) {
        this.d.log.warn('claude.open_browser_failed', { err });
      }
    }
    this.d.log.info('claude.sign_in_started', { loginId: s.loginId, mode });
    return { ...s, opened };
  }

  async completeLogin(loginId: string, code: string): Promise<ConnectionView> {
    const intent = this.intents.get(loginId);
    if (!intent) throw new ApiError(404, 'login_unknown', 'this sign-in is no longer open: start "Sign in with Claude" again', 'loginId');
    if (intent.view.status === 'done' && intent.view.connectionId) return this.d.registry.view(this.d.registry.require(intent.view.connectionId));
    let bundle: ClaudeTokenBundle;
    try {
      bundle = await this.login.completeWithCode(loginId, code);
    } catch (err) {
      throw toApi(err, 'code');
    }
    return this.d.registry.view(this.finishLogin(loginId, bundle));
  }

  loginView(loginId: string): ClaudeLoginView {
    const intent = this.intents.get(loginId);
    if (!intent) throw new ApiError(404, 'login_unknown', 'this sign-in is no longer open: start "Sign in with Claude" again', 'loginId');
    return { ...intent.view };
  }

  cancelLogin(loginId: string): boolean {
    const intent = this.intents.get(loginId);
    if (!intent) return false;
    this.login.cancel(loginId);
    return true;
  }

  /** Import from Claude Code: reads its credentials file; nothing is stored when it is unusable. */
  async importCredentials(target: ClaudeTarget): Promise<ConnectionView> {
    this.checkTarget(target);
    const path = this.d.credentialsPath ?? claudeCodeCredentialsPath(this.d.env);
    let bundle: ClaudeTokenBundle;
    try {
      bundle = await readClaudeCodeCredentials(path, this.d.clock.now());
    } catch (err) {
      throw toApi(err);
    }
    const conn = this.store(target, bundle, 'Claude Code');
    this.d.log.info('claude.imported', { connectionId: conn.id });
    return this.d.registry.view(conn);
  }

  close(): void {
    this.login.close();
    for (const i of this.intents.values()) i.dropTimer();
    this.intents.clear();
    this.offs.splice(0).forEach((off) => off());
  }

  private finishLogin(loginId: string, bundle: ClaudeTokenBundle): ConnectionRecord {
    const intent = this.intents.get(loginId);
    if (!intent) throw new ApiError(404, 'login_unknown', 'this sign-in is no longer open: start "Sign in with Claude" again', 'loginId');
    // The loopback callback and a pasted code can both finish one sign-in: the first one stores.
    if (intent.view.connectionId) return this.d.registry.require(intent.view.connectionId);
    const conn = this.store(intent.target, bundle, 'Claude');
    intent.view = { loginId, status: 'done', connectionId: conn.id, error: null };
    this.d.log.info('claude.signed_in', { loginId, connectionId: conn.id });
    this.emitLogin(intent.view);
    return conn;
  }

  private failLogin(loginId: string, err: unknown): void {
    const intent = this.intents.get(loginId);
    if (!intent || intent.view.status !== 'pending') return;
    const e = toApi(err);
    intent.view = { loginId, status: 'failed', connectionId: null, error: { code: e.code, message: e.message } };
    this.d.log.info('claude.sign_in_failed', { loginId, code: e.code });
    this.emitLogin(intent.view);
  }

  private emitLogin(v: ClaudeLoginView): void {
    for (const fn of [...this.loginListeners]) fn({ ...v });
  }

  private requireClaude(id: string): ConnectionRecord {
    const conn = this.d.registry.get(id);
    if (!conn) throw notFound('connection', id);
    if (conn.kind !== CLAUDE_KIND) throw badInput('connectionId', `connection "${conn.name}" is not a Claude subscription`);
    return conn;
  }

  private checkTarget(t: ClaudeTarget): void {
    if (t.connectionId === undefined) return;
    this.requireClaude(t.connectionId);
    for (const k of ['name', 'provider', 'baseUrl', 'priority'] as const) {
      if (t[k] !== undefined) throw badInput(k, `give either connectionId (new credentials for that connection) or the fields of a new one, not both`);
    }
  }

  /** Writes the credentials: into the named connection (its health starts over), or a new one. */
  private store(t: ClaudeTarget, bundle: ClaudeTokenBundle, via: string): ConnectionRecord {
    const secret = serializeBundle(bundle);
    if (t.connectionId) {
      this.requireClaude(t.connectionId);
      return this.d.registry.update(t.connectionId, { secret }, false);
    }
    return this.d.registry.create({
      name: t.name ?? this.defaultName(via, bundle),
      kind: CLAUDE_KIND,
      ...(t.provider ? { provider: t.provider } : {}),
      ...(t.baseUrl ? { baseUrl: t.baseUrl } : {}),
      ...(t.priority !== undefined ? { priority: t.priority } : {}),
      secret,
    });
  }

  private defaultName(via: string, bundle: ClaudeTokenBundle): string {
    const plan = bundle.subscriptionType ? ` ${bundle.subscriptionType[0]!.toUpperCase()}${bundle.subscriptionType.slice(1)}` : '';
    const base = `Claude${plan}${via === 'Claude Code' ? ' (Claude Code)' : ''}`;
    const names = new Set(this.d.registry.all().map((c) => c.name));
    if (!names.has(base)) return base;
    for (let i = 2; ; i++) if (!names.has(`${base} ${i}`)) return `${base} ${i}`;
  }
}

/** A sign-in or credentials error in the management API's form (input errors: 400 naming the field). */
function toApi(err: unknown, field?: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ClaudeAuthError) {
    const e = err.toApiError();
    const f =
      field && (err.code === 'login_missing_code' || err.code === 'login_state_mismatch' || err.code === 'token_invalid_grant' || err.code === 'token_rejected')
        ? field
        : e.field;
    // A refused sign-in code is the user's input: a 400 naming it, whatever the token endpoint said.
    const status = f === 'code' && e.status === 401 ? 400 : e.status;
    return new ApiError(status, e.code, e.message, f);
  }
  return new ApiError(502, 'token_unavailable', 'the sign-in failed');
}
