// In-memory registry of provider connections, written through to provider_connections. The proxy
// reads it on the hot path (no database read per request); configuration changes and health
// changes go through here so the store, the memory and the push events stay in step.
import { randomUUID } from 'node:crypto';
import type { ConnectionCreateInput, ConnectionUpdateInput } from '../../../shared/contract';
import {
  CLAUDE_KIND,
  KIND_INFO,
  type ConnectionKind,
  type ConnectionView,
  type ProviderSpecificData,
  type RateLimitProtectionMode,
} from '../../../shared/model';
import { modeOfFlag } from '../admission/protection';
import { checkOutboundProxy, maskOutboundProxy } from '../../../shared/outboundProxy';
import { ApiError, badInput, notFound } from '../errors';
import type { Clock } from '../clock';
import { urlPassword, type SecretRedactor } from '../logger';
import { maskSecret, type SecretBox } from '../secrets/secretBox';
import { connectionConfigOf, emptyHealth, type ConnectionHealthState, type ConnectionRecord, type ConnectionsRepo } from '../store/connectionsRepo';

export type { ConnectionRecord } from '../store/connectionsRepo';

type Listener = (kind: 'config' | 'health', ids: string[]) => void;

export class ConnectionRegistry {
  private byId = new Map<string, ConnectionRecord>();
  /** Sorted by priority, then creation time. Replaced (not mutated) on config change. */
  private ordered: ConnectionRecord[] = [];
  private readonly secrets = new Map<string, string | null>();
  /** Decrypted outbound proxy URLs (credentials included), by connection. */
  private readonly proxies = new Map<string, string | null>();
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly repo: ConnectionsRepo,
    private readonly box: SecretBox,
    private readonly redactor: SecretRedactor,
    private readonly clock: Clock,
  ) {
    for (const c of repo.all()) this.byId.set(c.id, c);
    this.reorder();
    for (const c of this.ordered) this.secretOf(c);
  }

  onChange(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private notify(kind: 'config' | 'health', ids: string[]) {
    for (const fn of [...this.listeners]) fn(kind, ids);
  }

  private reorder() {
    this.ordered = [...this.byId.values()].sort((a, b) => a.priority - b.priority || a.createdAt - b.createdAt);
  }

  /** All connections in routing order (priority, then age). */
  all(): readonly ConnectionRecord[] {
    return this.ordered;
  }

  get(id: string): ConnectionRecord | undefined {
    return this.byId.get(id);
  }

  require(id: string): ConnectionRecord {
    const c = this.byId.get(id);
    if (!c) throw notFound('connection', id);
    return c;
  }

  /** The decrypted secret, cached; null when none is set or it cannot be decrypted here. */
  secretOf(c: ConnectionRecord): string | null {
    if (this.secrets.has(c.id)) return this.secrets.get(c.id) ?? null;
    const plain = c.secretEnc ? this.box.decrypt(c.secretEnc) : null;
    this.redactor.hold(secretOwner(c.id), plain);
    this.secrets.set(c.id, plain);
    return plain;
  }

  /**
   * The connection's outbound proxy URL with its credentials (decrypted when stored encrypted),
   * cached; null for a direct connection, and for one whose proxy cannot be decrypted with this
   * machine's key (outboundProxyUnreadable(): such a connection is never sent directly).
   */
  outboundProxyOf(c: ConnectionRecord): string | null {
    if (this.proxies.has(c.id)) return this.proxies.get(c.id) ?? null;
    const plain = c.outboundProxyEnc ? this.box.decrypt(c.outboundProxyEnc) : c.outboundProxy;
    this.redactor.hold(proxyOwner(c.id), urlPassword(plain));
    this.proxies.set(c.id, plain);
    return plain;
  }

  /** True when the connection has an encrypted proxy URL this machine's key cannot read. */
  outboundProxyUnreadable(c: ConnectionRecord): boolean {
    return c.outboundProxyEnc !== null && this.outboundProxyOf(c) === null;
  }

  /** The stored form of a proxy URL: display column, and the encrypted URL when it has credentials. */
  private proxyColumns(url: string | null): { outboundProxy: string | null; outboundProxyEnc: string | null } {
    if (!url) return { outboundProxy: null, outboundProxyEnc: null };
    const c = checkOutboundProxy(url);
    if (!c.ok) throw badInput('outboundProxy', `outboundProxy ${c.message}`);
    const plain = url.trim();
    return c.hasCredentials ? { outboundProxy: maskOutboundProxy(plain), outboundProxyEnc: this.box.encrypt(plain) } : { outboundProxy: plain, outboundProxyEnc: null };
  }

  /** True when a secret is stored but cannot be decrypted with this machine's key. */
  secretUnreadable(c: ConnectionRecord): boolean {
    return c.secretEnc !== null && this.secretOf(c) === null;
  }

  create(input: ConnectionCreateInput): ConnectionRecord {
    const now = this.clock.now();
    const info = KIND_INFO[input.kind];
    const provider = input.provider ?? info.defaultProvider;
    if (!provider) throw badInput('provider', `provider is required for ${info.label} (a short id such as "glm")`);
    const baseUrl = normalizeBaseUrl(input.baseUrl ?? info.defaultBaseUrl);
    if (!baseUrl) throw badInput('baseUrl', `baseUrl is required for ${info.label}`);
    checkBaseUrlFitsKind(input.kind, baseUrl);
    const secret = input.secret ?? null;
    if (info.secretRequired && !secret) throw badInput('secret', `an API key is required for ${info.label}`);
    const rec: ConnectionRecord = {
      id: randomUUID(),
      name: input.name,
      kind: input.kind,
      protocol: info.protocol,
      provider,
      authClass: input.authClass ?? info.defaultAuthClass,
      baseUrl,
      priority: input.priority ?? 1,
      enabled: input.enabled ?? true,
      models: dedupe(input.models ?? []),
      passthroughModels: input.passthroughModels ?? true,
      servesResponses: input.servesResponses ?? info.defaultServesResponses,
      maxConcurrent: input.maxConcurrent ?? null,
      rateLimitOverrides: input.rateLimitOverrides ?? {},
      protectionMode: input.rateLimitProtectionMode ?? modeOfFlag(input.rateLimitProtection ?? false),
      disableCooling: input.disableCooling ?? false,
      providerSpecificData: (input.providerSpecificData ?? {}) as ProviderSpecificData,
      timeouts: input.timeouts ?? {},
      secretEnc: secret ? this.box.encrypt(secret) : null,
      secretMasked: secret ? maskedFor(input.kind, secret) : null,
      ...this.proxyColumns(input.outboundProxy ?? null),
      health: emptyHealth(),
      createdAt: now,
      updatedAt: now,
    };
    checkPassthrough(rec);
    this.repo.insert(rec);
    this.secrets.set(rec.id, secret);
    this.redactor.hold(secretOwner(rec.id), secret);
    this.proxies.delete(rec.id);
    this.outboundProxyOf(rec);
    this.byId.set(rec.id, rec);
    this.reorder();
    this.notify('config', [rec.id]);
    return rec;
  }

  /**
   * Applies an update. `replace` (PUT) resets omitted optional fields to their defaults, except the
   * secret (kept unless given) and the protection mode (never changed here, R-RQ-29).
   */
  update(id: string, patch: ConnectionUpdateInput, replace: boolean): ConnectionRecord {
    const cur = this.require(id);
    const next: ConnectionRecord = { ...cur, health: cur.health };
    const kind: ConnectionKind = patch.kind ?? cur.kind;
    const info = KIND_INFO[kind];
    if (replace) {
      if (patch.name === undefined) throw badInput('name', 'name is required');
      if (patch.kind === undefined) throw badInput('kind', 'kind is required');
    }
    next.kind = kind;
    next.protocol = info.protocol;
    if (patch.name !== undefined) next.name = patch.name;
    const pick = <T>(v: T | undefined, keep: T, def: T): T => (v !== undefined ? v : replace ? def : keep);
    next.provider = pick(patch.provider, cur.provider, info.defaultProvider ?? cur.provider);
    next.authClass = pick(patch.authClass, cur.authClass, info.defaultAuthClass);
    const base = pick(patch.baseUrl, cur.baseUrl, info.defaultBaseUrl ?? cur.baseUrl);
    const normalized = normalizeBaseUrl(base);
    if (!normalized) throw badInput('baseUrl', `baseUrl is required for ${info.label}`);
    checkBaseUrlFitsKind(kind, normalized);
    next.baseUrl = normalized;
    next.priority = pick(patch.priority, cur.priority, 1);
    next.enabled = pick(patch.enabled, cur.enabled, true);
    next.models = dedupe(pick(patch.models, cur.models, []));
    next.passthroughModels = pick(patch.passthroughModels, cur.passthroughModels, true);
    // A new kind brings its own default unless the update says otherwise.
    next.servesResponses = pick(patch.servesResponses, kind !== cur.kind ? info.defaultServesResponses : cur.servesResponses, info.defaultServesResponses);
    next.maxConcurrent = pick(patch.maxConcurrent, cur.maxConcurrent, null);
    next.rateLimitOverrides = pick(patch.rateLimitOverrides, cur.rateLimitOverrides, {});
    next.disableCooling = pick(patch.disableCooling, cur.disableCooling, false);
    next.providerSpecificData = pick(
      patch.providerSpecificData as ProviderSpecificData | undefined,
      cur.providerSpecificData,
      {},
    );
    next.timeouts = pick(patch.timeouts, cur.timeouts, {});
    let secretChanged = false;
    if (patch.secret !== undefined) {
      secretChanged = true;
      next.secretEnc = patch.secret ? this.box.encrypt(patch.secret) : null;
      next.secretMasked = patch.secret ? maskedFor(kind, patch.secret) : null;
    }
    if (info.secretRequired && !next.secretEnc) throw badInput('secret', `an API key is required for ${info.label}`);
    // Like the secret, the proxy is kept unless given (also by PUT): answers only ever show it
    // masked, so a form sending back what it was shown keeps the stored URL.
    let proxyChanged = false;
    if (patch.outboundProxy !== undefined && !(patch.outboundProxy !== null && patch.outboundProxy.trim() === cur.outboundProxy)) {
      Object.assign(next, this.proxyColumns(patch.outboundProxy));
      proxyChanged = next.outboundProxy !== cur.outboundProxy || next.outboundProxyEnc !== cur.outboundProxyEnc;
    }
    checkPassthrough(next);
    next.updatedAt = this.clock.now();
    // Credentials or endpoint changed: a terminal state no longer describes this connection.
    if (secretChanged || next.baseUrl !== cur.baseUrl || next.authClass !== cur.authClass) {
      next.health = emptyHealth();
    }
    this.repo.saveConfig(next);
    if (next.health !== cur.health) this.repo.saveHealth(next);
    if (secretChanged) {
      // The old value stays scrubbed while another connection (or client key) still holds it.
      this.secrets.set(id, patch.secret ?? null);
      this.redactor.hold(secretOwner(id), patch.secret ?? null);
    }
    if (proxyChanged) {
      this.proxies.delete(id);
      this.outboundProxyOf(next);
    }
    this.byId.set(id, next);
    this.reorder();
    this.notify('config', [id]);
    return next;
  }

  /**
   * Team mode: creates or replaces a connection the team's publisher owns, under the publisher's
   * id (so combos, pins and leases name the same connection on every instance). The secret is
   * stored encrypted with this machine's key; health is kept unless the credentials or the endpoint
   * changed. Answers false when the connection already was exactly this (no write, no notice).
   */
  adoptFromTeam(c: TeamConnectionInput): boolean {
    const cur = this.byId.get(c.id);
    const info = KIND_INFO[c.kind];
    const config = { ...connectionConfigOf(c), protocol: info.protocol };
    const proxyNow = cur ? this.outboundProxyOf(cur) : null;
    const secretNow = cur ? this.secretOf(cur) : null;
    if (cur && secretNow === c.secret && proxyNow === c.outboundProxy && sameConfig(cur, config)) return false;
    const secretCols = c.secret
      ? { secretEnc: cur && secretNow === c.secret ? cur.secretEnc : this.box.encrypt(c.secret), secretMasked: maskedFor(c.kind, c.secret) }
      : { secretEnc: null, secretMasked: null };
    const proxyCols = cur && proxyNow === c.outboundProxy ? { outboundProxy: cur.outboundProxy, outboundProxyEnc: cur.outboundProxyEnc } : this.proxyColumns(c.outboundProxy);
    const now = this.clock.now();
    const next: ConnectionRecord = {
      id: c.id,
      ...config,
      ...secretCols,
      ...proxyCols,
      health: cur ? cur.health : emptyHealth(),
      createdAt: cur?.createdAt ?? c.createdAt,
      updatedAt: now,
    };
    if (cur) {
      if (secretNow !== c.secret || next.baseUrl !== cur.baseUrl || next.authClass !== cur.authClass) next.health = emptyHealth();
      this.repo.saveConfig(next);
      if (next.health !== cur.health) this.repo.saveHealth(next);
    } else {
      this.repo.insert(next);
    }
    this.secrets.set(c.id, c.secret);
    this.redactor.hold(secretOwner(c.id), c.secret);
    this.proxies.delete(c.id);
    this.outboundProxyOf(next);
    this.byId.set(c.id, next);
    this.reorder();
    this.notify('config', [c.id]);
    return true;
  }

  /**
   * Replaces only the stored secret (a refreshed OAuth token bundle): same account, so health and
   * the rest of the configuration stay as they are.
   */
  rotateSecret(id: string, secret: string): ConnectionRecord | undefined {
    const cur = this.byId.get(id);
    if (!cur) return undefined;
    const next: ConnectionRecord = { ...cur, secretEnc: this.box.encrypt(secret), secretMasked: maskedFor(cur.kind, secret), updatedAt: this.clock.now() };
    this.repo.saveConfig(next);
    this.redactor.forget(this.secrets.get(id) ?? null);
    this.secrets.set(id, secret);
    this.redactor.register(secret);
    this.byId.set(id, next);
    this.reorder();
    this.notify('config', [id]);
    return next;
  }

  /** Sets the rate-limit protection mode (POST /api/rate-limits is the only write path). */
  setRateLimitProtection(id: string, mode: RateLimitProtectionMode): ConnectionRecord {
    const cur = this.require(id);
    const next = { ...cur, protectionMode: mode, updatedAt: this.clock.now() };
    this.repo.saveConfig(next);
    this.byId.set(id, next);
    this.reorder();
    this.notify('config', [id]);
    return next;
  }

  delete(id: string): boolean {
    const cur = this.byId.get(id);
    // A stored row that could not be read is not in memory, but the user can still remove it.
    if (!cur) return this.repo.isUnreadable(id) ? this.repo.delete(id) : false;
    this.repo.delete(id);
    this.redactor.release(secretOwner(id));
    this.redactor.release(proxyOwner(id));
    this.secrets.delete(id);
    this.proxies.delete(id);
    this.byId.delete(id);
    this.reorder();
    this.notify('config', [id]);
    return true;
  }

  /** Persists health fields after the resilience layer changed them in place. */
  saveHealth(ids: string[]): void {
    const recs = ids.map((id) => this.byId.get(id)).filter((c): c is ConnectionRecord => !!c);
    if (recs.length === 0) return;
    if (recs.length === 1) this.repo.saveHealth(recs[0]!);
    else this.repo.saveHealthMany(recs);
    this.notify('health', recs.map((r) => r.id));
  }

  /**
   * Team mode (issue 26): health another instance published, written into each record in place
   * (in-flight attempts hold the record), persisted here and announced like a local change. It is
   * not published again: the team layer publishes from the resilience layer's writes, not from here.
   */
  applyHealth(updates: readonly { id: string; health: Partial<ConnectionHealthState> }[]): void {
    const recs: ConnectionRecord[] = [];
    for (const u of updates) {
      const c = this.byId.get(u.id);
      if (!c) continue;
      Object.assign(c.health, u.health);
      recs.push(c);
    }
    if (recs.length === 0) return;
    if (recs.length === 1) this.repo.saveHealth(recs[0]!);
    else this.repo.saveHealthMany(recs);
    this.notify('health', recs.map((r) => r.id));
  }

  view(c: ConnectionRecord): ConnectionView {
    return {
      id: c.id,
      name: c.name,
      kind: c.kind,
      protocol: c.protocol,
      provider: c.provider,
      authClass: c.authClass,
      baseUrl: c.baseUrl,
      priority: c.priority,
      enabled: c.enabled,
      models: [...c.models],
      passthroughModels: c.passthroughModels,
      servesResponses: c.servesResponses,
      maxConcurrent: c.maxConcurrent,
      rateLimitOverrides: structuredClone(c.rateLimitOverrides),
      rateLimitProtection: c.protectionMode === 'on',
      rateLimitProtectionMode: c.protectionMode,
      disableCooling: c.disableCooling,
      providerSpecificData: structuredClone(c.providerSpecificData),
      timeouts: { ...c.timeouts },
      secret: { set: c.secretEnc !== null, masked: c.secretMasked },
      outboundProxy: c.outboundProxy,
      health: {
        testStatus: c.health.testStatus,
        rateLimitedUntil: c.health.rateLimitedUntil,
        backoffLevel: c.health.backoffLevel,
        lastError: c.health.lastError,
        lastErrorType: c.health.lastErrorType,
        errorCode: c.health.errorCode,
        lastErrorAt: c.health.lastErrorAt,
        lastUsedAt: c.health.lastUsedAt,
      },
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
    };
  }
}

/** A connection as the team's publisher configured it, its secret and proxy URL in the clear (team/configDoc.ts). */
export type TeamConnectionInput = Omit<ConnectionRecord, 'protocol' | 'secretEnc' | 'secretMasked' | 'outboundProxyEnc' | 'health' | 'updatedAt'> & {
  secret: string | null;
};

/** True when the record already holds this configuration (the team's copy changed nothing). */
function sameConfig(cur: ConnectionRecord, config: Partial<ConnectionRecord>): boolean {
  return Object.entries(config).every(([k, v]) => JSON.stringify(cur[k as keyof ConnectionRecord]) === JSON.stringify(v));
}

/** The redactor holds one reference per connection to the value it uses. */
const secretOwner = (id: string) => `connection:${id}`;
const proxyOwner = (id: string) => `connection-proxy:${id}`;

/** How a secret is shown: a Claude subscription's token bundle by its access token. */
function maskedFor(kind: ConnectionKind, secret: string): string {
  if (kind === CLAUDE_KIND && secret.startsWith('{')) {
    try {
      const t = (JSON.parse(secret) as { accessToken?: unknown }).accessToken;
      if (typeof t === 'string') return maskSecret(t);
    } catch {
      // not a bundle: masked as it is
    }
  }
  return maskSecret(secret);
}

function dedupe(xs: string[]): string[] {
  return [...new Set(xs.map((x) => x.trim()).filter(Boolean))];
}

function checkPassthrough(c: ConnectionRecord) {
  if (!c.passthroughModels && c.models.length === 0) {
    throw badInput('models', 'list at least one model, or let the connection accept any model (passthrough)');
  }
}

/**
 * A Gemini connection speaks Google's own API: a base URL of Google's OpenAI-compatible endpoint
 * (`…/v1beta/openai`) would send its requests to paths that do not exist there.
 */
function checkBaseUrlFitsKind(kind: ConnectionKind, baseUrl: string) {
  if (KIND_INFO[kind].protocol !== 'gemini') return;
  if (/\/openai$/i.test(new URL(baseUrl).pathname.replace(/\/+$/, ''))) {
    throw badInput(
      'baseUrl',
      `this is Google's OpenAI-compatible address; a Google AI Studio key connection uses ${KIND_INFO[kind].defaultBaseUrl ?? 'the address without /v1beta'} (or choose the kind "${KIND_INFO['openai-compatible'].label}" for this address)`,
    );
  }
}

/** Trims a trailing slash so paths can be appended; null for an empty value. */
export function normalizeBaseUrl(u: string | null | undefined): string | null {
  if (!u) return null;
  try {
    const url = new URL(u);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ApiError(400, 'invalid_input', 'baseUrl must be http(s)', 'baseUrl');
    return url.toString().replace(/\/+$/, '');
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw badInput('baseUrl', 'baseUrl must be an http:// or https:// URL');
  }
}
