// The add/edit connection form as plain data: what the inputs hold (strings, as typed), how a
// stored connection fills them, and how they become a create input or an update that names only
// what the user changed, checked first with the same ranges the contract enforces. Errors are
// keyed by the API's field path, so an error the engine names lands next to the same input.
import type { ConnectionCreateInput, ConnectionUpdateInput } from '../../shared/contract';
import type {
  AuthClass,
  ConnectionKind,
  ConnectionTimeouts,
  ConnectionView,
  ProviderSpecificData,
  RateLimitOverrides,
  RateLimitProtectionMode,
} from '../../shared/model';
import { CLAUDE_KIND, KIND_INFO } from '../../shared/model';
import { checkOutboundProxy } from '../../shared/outboundProxy';
import { PROVIDER_PRESETS, type ProviderPreset } from '../../shared/providerPresets';

export interface ModelCapRow {
  model: string;
  cap: string;
}

export interface ConnectionForm {
  kind: ConnectionKind;
  name: string;
  provider: string;
  authClass: AuthClass;
  baseUrl: string;
  /** New secret text; on edit '' keeps the saved one. Claude subscription: the access token (or Claude Code's JSON). */
  secret: string;
  /** Claude subscription, pasted tokens: the refresh token (optional). */
  claudeRefreshToken: string;
  /** Claude subscription, pasted tokens: when the access token expires (ISO date or epoch; optional). */
  claudeExpiresAt: string;
  removeSecret: boolean;
  priority: string;
  enabled: boolean;
  models: string;
  passthroughModels: boolean;
  /** OpenAI protocol: Responses requests go to /responses natively (else through Chat). */
  servesResponses: boolean;
  /** provider_connections.max_concurrent: the account's real concurrency (shared-quota serialisation, fails open). */
  maxConcurrent: string;
  /** rateLimitOverrides.maxConcurrent: the strict connection-wide cap (typed errors when no slot frees). */
  strictMaxConcurrent: string;
  modelConcurrency: ModelCapRow[];
  disableCooling: boolean;
  /** Rate-limit protection: automatic, on or off (saved through its own write path on edit). */
  protectionMode: RateLimitProtectionMode;
  lowPriorityMode: boolean;
  autoLimitReset: boolean;
  organizationUUID: string;
  rateLimitResetSeconds: string;
  maxWaitMs: string;
  executionMaxWaitMs: string;
  requestsPerMinute: string;
  minTimeMs: string;
  connectMs: string;
  headersMs: string;
  idleMs: string;
  firstOutputMs: string;
  contentStallMs: string;
  attemptDeadlineMs: string;
  /** Outbound proxy URL as typed; on edit it starts as the stored (masked) form, '' = direct. */
  outboundProxy: string;
}

export type FormErrors = Record<string, string>;

/** The Claude options (providerSpecificData) act on Claude subscription connections only. */
export const hasClaudeOptions = (kind: ConnectionKind) => kind === CLAUDE_KIND;

/**
 * The secret of a Claude subscription from the "Paste tokens" inputs: Claude Code's JSON as it is,
 * a bare access token, or (with a refresh token or expiry) the three as one JSON object.
 */
export function claudeSecret(f: Pick<ConnectionForm, 'secret' | 'claudeRefreshToken' | 'claudeExpiresAt'>): string {
  const access = f.secret.trim();
  const refresh = f.claudeRefreshToken.trim();
  const expires = f.claudeExpiresAt.trim();
  if (!access || access.startsWith('{') || (!refresh && !expires)) return access;
  return JSON.stringify({ accessToken: access, ...(refresh ? { refreshToken: refresh } : {}), ...(expires ? { expiresAt: /^\d+$/.test(expires) ? Number(expires) : expires } : {}) });
}

const secretOf = (f: ConnectionForm) => (f.kind === CLAUDE_KIND ? claudeSecret(f) : f.secret.trim());
const secretMissing = (kind: ConnectionKind) =>
  kind === CLAUDE_KIND ? 'paste the access token (or Claude Code\'s credentials JSON), or sign in instead' : 'an API key is required for this kind';

export function emptyForm(kind: ConnectionKind = 'anthropic'): ConnectionForm {
  return {
    kind,
    name: '',
    provider: '',
    authClass: KIND_INFO[kind].defaultAuthClass,
    baseUrl: '',
    secret: '',
    claudeRefreshToken: '',
    claudeExpiresAt: '',
    removeSecret: false,
    priority: '1',
    enabled: true,
    models: '',
    passthroughModels: true,
    servesResponses: KIND_INFO[kind].defaultServesResponses,
    maxConcurrent: '',
    strictMaxConcurrent: '',
    modelConcurrency: [],
    disableCooling: false,
    protectionMode: 'auto',
    lowPriorityMode: false,
    autoLimitReset: false,
    organizationUUID: '',
    rateLimitResetSeconds: '',
    maxWaitMs: '',
    executionMaxWaitMs: '',
    requestsPerMinute: '',
    minTimeMs: '',
    connectMs: '',
    headersMs: '',
    idleMs: '',
    firstOutputMs: '',
    contentStallMs: '',
    attemptDeadlineMs: '',
    outboundProxy: '',
  };
}

/** Switching kind resets the auth class and the Responses switch to the new kind's defaults (the user can change them again). */
export function withKind(f: ConnectionForm, kind: ConnectionKind): ConnectionForm {
  return { ...f, kind, authClass: KIND_INFO[kind].defaultAuthClass, servesResponses: KIND_INFO[kind].defaultServesResponses };
}

/**
 * Fills the form from a provider preset: its kind (and that kind's defaults), provider, base URL and
 * models, and its name when the user has not typed one. What the user already typed as a key stays.
 */
export function withPreset(f: ConnectionForm, p: ProviderPreset): ConnectionForm {
  const named = f.name.trim() !== '' && !PROVIDER_PRESETS.some((x) => x.name === f.name.trim());
  return {
    ...withKind(f, p.kind),
    name: named ? f.name : p.name,
    provider: p.provider,
    baseUrl: p.baseUrl,
    models: p.models.join('\n'),
  };
}

const str = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));

export function formFromConnection(c: ConnectionView): ConnectionForm {
  const psd = c.providerSpecificData ?? {};
  const ro = c.rateLimitOverrides ?? {};
  return {
    kind: c.kind,
    name: c.name,
    provider: c.provider,
    authClass: c.authClass,
    baseUrl: c.baseUrl,
    secret: '',
    claudeRefreshToken: '',
    claudeExpiresAt: '',
    removeSecret: false,
    priority: String(c.priority),
    enabled: c.enabled,
    models: c.models.join('\n'),
    passthroughModels: c.passthroughModels,
    servesResponses: c.servesResponses,
    maxConcurrent: str(c.maxConcurrent),
    strictMaxConcurrent: str(ro.maxConcurrent),
    modelConcurrency: Object.entries(ro.modelConcurrency ?? {}).map(([model, cap]) => ({ model, cap: String(cap) })),
    disableCooling: c.disableCooling,
    protectionMode: c.rateLimitProtectionMode,
    lowPriorityMode: psd.lowPriorityMode === true,
    autoLimitReset: psd.autoLimitReset === true,
    organizationUUID: typeof psd.organizationUUID === 'string' ? psd.organizationUUID : '',
    rateLimitResetSeconds: str(psd.rotationOverrides?.rateLimitResetSeconds),
    maxWaitMs: str(ro.maxWaitMs),
    executionMaxWaitMs: str(ro.executionMaxWaitMs),
    requestsPerMinute: str(ro.requestsPerMinute),
    minTimeMs: str(ro.minTimeMs),
    connectMs: str(c.timeouts?.connectMs),
    headersMs: str(c.timeouts?.headersMs),
    idleMs: str(c.timeouts?.idleMs),
    firstOutputMs: str(c.timeouts?.firstOutputMs),
    contentStallMs: str(c.timeouts?.contentStallMs),
    attemptDeadlineMs: str(c.timeouts?.attemptDeadlineMs),
    outboundProxy: c.outboundProxy ?? '',
  };
}

/** Models typed one per line or comma-separated, trimmed and de-duplicated. */
export function parseModels(text: string): string[] {
  return [...new Set(text.split(/[\n,]/).map((m) => m.trim()).filter(Boolean))];
}

function intIn(
  errors: FormErrors,
  field: string,
  text: string,
  min: number,
  max: number,
): number | undefined {
  const t = text.trim().replace(/[_,\s]/g, '');
  if (t === '') return undefined;
  const n = Number(t);
  if (!Number.isFinite(n) || !Number.isInteger(n)) {
    errors[field] = 'must be a whole number';
    return undefined;
  }
  if (n < min || n > max) {
    errors[field] = `must be between ${min.toLocaleString('en-US')} and ${max.toLocaleString('en-US')}`;
    return undefined;
  }
  return n;
}

function validUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export type BuiltInput<T> = { ok: true; input: T } | { ok: false; errors: FormErrors };

/** The form read as values (undefined: the input is empty), each checked against the contract. */
interface Parsed {
  name: string;
  kind: ConnectionKind;
  provider: string;
  authClass: AuthClass;
  baseUrl: string;
  priority: number | undefined;
  enabled: boolean;
  models: string[];
  passthroughModels: boolean;
  servesResponses: boolean;
  maxConcurrent: number | undefined;
  disableCooling: boolean;
  overrides: RateLimitOverrides;
  lowPriorityMode: boolean;
  autoLimitReset: boolean;
  organizationUUID: string;
  rateLimitResetSeconds: number | undefined;
  timeouts: ConnectionTimeouts;
  /** '' = direct. */
  outboundProxy: string;
}

const OVERRIDE_KEYS = ['maxConcurrent', 'modelConcurrency', 'maxWaitMs', 'executionMaxWaitMs', 'requestsPerMinute', 'minTimeMs'] as const;
const TIMEOUT_KEYS = ['connectMs', 'headersMs', 'idleMs', 'firstOutputMs', 'contentStallMs', 'attemptDeadlineMs'] as const;

function parseForm(f: ConnectionForm, errors: FormErrors): Parsed {
  const info = KIND_INFO[f.kind];
  const name = f.name.trim();
  if (!name) errors.name = 'give the connection a name';
  else if (name.length > 100) errors.name = 'at most 100 characters';

  const provider = f.provider.trim();
  if (!provider && !info.defaultProvider) errors.provider = 'a short provider id is required for this kind (e.g. "glm")';
  else if (provider && !/^[a-z0-9][a-z0-9._-]{0,62}$/.test(provider)) {
    errors.provider = 'use lowercase letters, digits, ".", "_" or "-" (e.g. "glm")';
  }

  const baseUrl = f.baseUrl.trim();
  if (!baseUrl && !info.defaultBaseUrl) errors.baseUrl = 'the endpoint URL is required for this kind';
  else if (baseUrl && !validUrl(baseUrl)) errors.baseUrl = 'must be an http:// or https:// URL';

  const priority = intIn(errors, 'priority', f.priority, 0, 1000);
  const models = parseModels(f.models);
  if (!f.passthroughModels && models.length === 0) {
    errors.models = 'list at least one model, or let the connection accept any model';
  }
  const maxConcurrent = intIn(errors, 'maxConcurrent', f.maxConcurrent, 1, 100_000);

  const modelConcurrency: Record<string, number> = {};
  f.modelConcurrency.forEach((row, i) => {
    const model = row.model.trim();
    if (!model && !row.cap.trim()) return;
    const field = `rateLimitOverrides.modelConcurrency.${i}`;
    if (!model) {
      errors[field] = 'name the model';
      return;
    }
    if (model in modelConcurrency) {
      errors[field] = `${model} is listed twice`;
      return;
    }
    const cap = intIn(errors, field, row.cap, 1, 100_000);
    if (cap === undefined && !errors[field]) errors[field] = 'enter how many requests may run at once';
    if (cap !== undefined) modelConcurrency[model] = cap;
  });

  const overrides: RateLimitOverrides = {
    maxConcurrent: intIn(errors, 'rateLimitOverrides.maxConcurrent', f.strictMaxConcurrent, 1, 100_000),
    modelConcurrency: Object.keys(modelConcurrency).length ? modelConcurrency : undefined,
    maxWaitMs: intIn(errors, 'rateLimitOverrides.maxWaitMs', f.maxWaitMs, 1, 86_400_000),
    executionMaxWaitMs: intIn(errors, 'rateLimitOverrides.executionMaxWaitMs', f.executionMaxWaitMs, 1, 86_400_000),
    requestsPerMinute: intIn(errors, 'rateLimitOverrides.requestsPerMinute', f.requestsPerMinute, 1, 1_000_000),
    minTimeMs: intIn(errors, 'rateLimitOverrides.minTimeMs', f.minTimeMs, 0, 3_600_000),
  };

  const organizationUUID = f.organizationUUID.trim();
  if (hasClaudeOptions(f.kind) && organizationUUID.length > 100) {
    errors['providerSpecificData.organizationUUID'] = 'at most 100 characters';
  }
  const rateLimitResetSeconds = intIn(
    errors,
    'providerSpecificData.rotationOverrides.rateLimitResetSeconds',
    f.rateLimitResetSeconds,
    1,
    21_600,
  );

  const timeouts: ConnectionTimeouts = {
    connectMs: intIn(errors, 'timeouts.connectMs', f.connectMs, 100, 600_000),
    headersMs: intIn(errors, 'timeouts.headersMs', f.headersMs, 1_000, 86_400_000),
    idleMs: intIn(errors, 'timeouts.idleMs', f.idleMs, 1_000, 3_600_000),
    firstOutputMs: intIn(errors, 'timeouts.firstOutputMs', f.firstOutputMs, 0, 3_600_000),
    contentStallMs: intIn(errors, 'timeouts.contentStallMs', f.contentStallMs, 0, 3_600_000),
    attemptDeadlineMs: intIn(errors, 'timeouts.attemptDeadlineMs', f.attemptDeadlineMs, 0, 86_400_000),
  };

  const outboundProxy = f.outboundProxy.trim();
  if (outboundProxy) {
    const c = checkOutboundProxy(outboundProxy);
    // The stored form of a proxy with credentials is masked; sent back unchanged it keeps the stored URL.
    if (!c.ok && !outboundProxy.includes('••••')) errors.outboundProxy = c.message;
  }

  return {
    outboundProxy,
    name,
    kind: f.kind,
    provider,
    authClass: f.authClass,
    baseUrl,
    priority,
    enabled: f.enabled,
    models,
    passthroughModels: f.passthroughModels,
    servesResponses: f.servesResponses,
    maxConcurrent,
    disableCooling: f.disableCooling,
    overrides,
    lowPriorityMode: f.lowPriorityMode,
    autoLimitReset: f.autoLimitReset,
    organizationUUID,
    rateLimitResetSeconds,
    timeouts,
  };
}

/** Drops the keys whose value is undefined (an empty input sets nothing). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Value equality for the form's values (objects compared key by key, in any order). */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => same(v, b[i]));
  }
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(defined(a));
  const kb = Object.keys(defined(b));
  return ka.length === kb.length && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

export function buildCreateInput(f: ConnectionForm): BuiltInput<ConnectionCreateInput> {
  const errors: FormErrors = {};
  const p = parseForm(f, errors);
  const secret = secretOf(f);
  if (!secret && KIND_INFO[f.kind].secretRequired) errors.secret = secretMissing(f.kind);
  if (Object.keys(errors).length) return { ok: false, errors };
  const psd: ProviderSpecificData = {};
  if (hasClaudeOptions(p.kind)) {
    psd.lowPriorityMode = p.lowPriorityMode;
    psd.autoLimitReset = p.autoLimitReset;
    if (p.organizationUUID) psd.organizationUUID = p.organizationUUID;
  }
  if (p.rateLimitResetSeconds !== undefined) psd.rotationOverrides = { rateLimitResetSeconds: p.rateLimitResetSeconds };
  return {
    ok: true,
    input: {
      name: p.name,
      kind: p.kind,
      ...(p.provider ? { provider: p.provider } : {}),
      authClass: p.authClass,
      ...(p.baseUrl ? { baseUrl: p.baseUrl } : {}),
      ...(p.priority !== undefined ? { priority: p.priority } : {}),
      enabled: p.enabled,
      models: p.models,
      passthroughModels: p.passthroughModels,
      ...(KIND_INFO[p.kind].protocol === 'openai' ? { servesResponses: p.servesResponses } : {}),
      ...(p.maxConcurrent !== undefined ? { maxConcurrent: p.maxConcurrent } : {}),
      rateLimitOverrides: defined(p.overrides),
      disableCooling: p.disableCooling,
      providerSpecificData: psd,
      timeouts: defined(p.timeouts),
      ...(secret ? { secret } : {}),
      ...(p.outboundProxy ? { outboundProxy: p.outboundProxy } : {}),
      rateLimitProtectionMode: f.protectionMode,
    },
  };
}

/**
 * The update (a PATCH) for an edit: only what the user changed. `opened` is the connection the form
 * was filled from; a field whose value still equals it is left out, so the stored value stays as it
 * is, whatever the form can or cannot show. A changed key inside rateLimitOverrides,
 * providerSpecificData or timeouts is merged into that object as stored now (`latest`), so the
 * keys the user did not touch are sent back unchanged. The secret is sent only when typed or removed.
 */
export function buildUpdateInput(
  f: ConnectionForm,
  opened: ConnectionView,
  latest: ConnectionView = opened,
): BuiltInput<ConnectionUpdateInput> {
  const errors: FormErrors = {};
  const now = parseForm(f, errors);
  const was = parseForm(formFromConnection(opened), {});
  const info = KIND_INFO[f.kind];
  const secret = secretOf(f);
  if (f.removeSecret && info.secretRequired) errors.secret = 'this kind needs an API key; enter a new one instead';
  if (!secret && !f.removeSecret && !latest.secret.set && info.secretRequired) {
    errors.secret = secretMissing(f.kind);
  }
  if (Object.keys(errors).length) return { ok: false, errors };

  const input: ConnectionUpdateInput = {};
  const changed = <K extends keyof Parsed>(k: K) => !same(now[k], was[k]);
  if (changed('name')) input.name = now.name;
  if (changed('kind')) input.kind = now.kind;
  // An emptied provider or base URL goes back to the kind's default.
  if (changed('provider')) input.provider = now.provider || info.defaultProvider!;
  if (changed('authClass')) input.authClass = now.authClass;
  if (changed('baseUrl')) input.baseUrl = now.baseUrl || info.defaultBaseUrl!;
  if (changed('priority')) input.priority = now.priority ?? 1;
  if (changed('enabled')) input.enabled = now.enabled;
  if (changed('models')) input.models = now.models;
  if (changed('passthroughModels')) input.passthroughModels = now.passthroughModels;
  if (changed('servesResponses')) input.servesResponses = now.servesResponses;
  if (changed('maxConcurrent')) input.maxConcurrent = now.maxConcurrent ?? null;
  if (changed('disableCooling')) input.disableCooling = now.disableCooling;
  if (changed('outboundProxy')) input.outboundProxy = now.outboundProxy || null;

  const ro = mergeKeys(latest.rateLimitOverrides ?? {}, now.overrides, was.overrides, OVERRIDE_KEYS);
  if (ro) input.rateLimitOverrides = ro;
  const timeouts = mergeKeys(latest.timeouts ?? {}, now.timeouts, was.timeouts, TIMEOUT_KEYS);
  if (timeouts) input.timeouts = timeouts;

  const psd: ProviderSpecificData = { ...(latest.providerSpecificData ?? {}) };
  let psdChanged = false;
  if (hasClaudeOptions(now.kind)) {
    if (now.lowPriorityMode !== was.lowPriorityMode) psd.lowPriorityMode = now.lowPriorityMode;
    if (now.autoLimitReset !== was.autoLimitReset) psd.autoLimitReset = now.autoLimitReset;
    if (now.organizationUUID !== was.organizationUUID) {
      if (now.organizationUUID) psd.organizationUUID = now.organizationUUID;
      else delete psd.organizationUUID;
    }
    psdChanged = now.lowPriorityMode !== was.lowPriorityMode || now.autoLimitReset !== was.autoLimitReset || now.organizationUUID !== was.organizationUUID;
  }
  if (now.rateLimitResetSeconds !== was.rateLimitResetSeconds) {
    psdChanged = true;
    const { rateLimitResetSeconds: _drop, ...rest } = psd.rotationOverrides ?? {};
    if (now.rateLimitResetSeconds !== undefined) psd.rotationOverrides = { ...rest, rateLimitResetSeconds: now.rateLimitResetSeconds };
    else if (Object.keys(rest).length) psd.rotationOverrides = rest;
    else delete psd.rotationOverrides;
  }
  if (psdChanged) input.providerSpecificData = psd;

  if (secret) input.secret = secret;
  else if (f.removeSecret) input.secret = null;
  return { ok: true, input };
}

/**
 * The stored object with the keys the user changed set (or, emptied, removed); null when the user
 * changed none of them, so the object is not sent at all.
 */
function mergeKeys<T extends object>(stored: T, now: T, was: T, keys: readonly (keyof T)[]): T | null {
  const changedKeys = keys.filter((k) => !same(now[k], was[k]));
  if (changedKeys.length === 0) return null;
  const out = { ...stored };
  for (const k of changedKeys) {
    if (now[k] === undefined) delete out[k];
    else out[k] = now[k];
  }
  return out;
}

/** The error for an input: an exact match, or one the engine reported deeper inside it. */
export function errorFor(errors: FormErrors, field: string): string | undefined {
  if (errors[field]) return errors[field];
  const deeper = Object.keys(errors).find((k) => k.startsWith(`${field}.`));
  return deeper ? errors[deeper] : undefined;
}

/** Every input the form has, for deciding whether an engine error can be shown in place. */
export const FORM_FIELDS = [
  'name',
  'kind',
  'provider',
  'authClass',
  'baseUrl',
  'secret',
  'priority',
  'models',
  'servesResponses',
  'maxConcurrent',
  'rateLimitOverrides',
  'providerSpecificData',
  'timeouts',
  'outboundProxy',
] as const;

export function isFormField(field: string): boolean {
  return FORM_FIELDS.some((f) => field === f || field.startsWith(`${f}.`));
}
