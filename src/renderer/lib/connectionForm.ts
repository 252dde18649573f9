// The add/edit connection form as plain data: what the inputs hold (strings, as typed), how a
// stored connection fills them, and how they become a create or update input, checked first with
// the same ranges the contract enforces. Errors are keyed by the API's field path, so an error the
// engine names lands next to the same input.
import type { ConnectionCreateInput, ConnectionUpdateInput } from '../../shared/contract';
import type { AuthClass, ConnectionKind, ConnectionView, ProviderSpecificData, RateLimitOverrides } from '../../shared/model';
import { KIND_INFO } from '../../shared/model';

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
  /** New secret text; on edit '' keeps the saved one. */
  secret: string;
  removeSecret: boolean;
  priority: string;
  enabled: boolean;
  models: string;
  passthroughModels: boolean;
  maxConcurrent: string;
  modelConcurrency: ModelCapRow[];
  disableCooling: boolean;
  rateLimitProtection: boolean;
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
}

export type FormErrors = Record<string, string>;

/** Claude-only options live in providerSpecificData of Anthropic connections. */
export const hasClaudeOptions = (kind: ConnectionKind) => kind === 'anthropic';

export function emptyForm(kind: ConnectionKind = 'anthropic'): ConnectionForm {
  return {
    kind,
    name: '',
    provider: '',
    authClass: KIND_INFO[kind].defaultAuthClass,
    baseUrl: '',
    secret: '',
    removeSecret: false,
    priority: '1',
    enabled: true,
    models: '',
    passthroughModels: true,
    maxConcurrent: '',
    modelConcurrency: [],
    disableCooling: false,
    rateLimitProtection: false,
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
  };
}

/** Switching kind resets the auth class to the new kind's default (the user can change it again). */
export function withKind(f: ConnectionForm, kind: ConnectionKind): ConnectionForm {
  return { ...f, kind, authClass: KIND_INFO[kind].defaultAuthClass };
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
    removeSecret: false,
    priority: String(c.priority),
    enabled: c.enabled,
    models: c.models.join('\n'),
    passthroughModels: c.passthroughModels,
    maxConcurrent: str(c.maxConcurrent ?? ro.maxConcurrent),
    modelConcurrency: Object.entries(ro.modelConcurrency ?? {}).map(([model, cap]) => ({ model, cap: String(cap) })),
    disableCooling: c.disableCooling,
    rateLimitProtection: c.rateLimitProtection,
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

interface Common {
  name: string;
  kind: ConnectionKind;
  provider?: string;
  authClass: AuthClass;
  baseUrl?: string;
  priority?: number;
  enabled: boolean;
  models: string[];
  passthroughModels: boolean;
  maxConcurrent: number | null;
  rateLimitOverrides: RateLimitOverrides;
  disableCooling: boolean;
  providerSpecificData: ProviderSpecificData;
  timeouts: { connectMs?: number; headersMs?: number; idleMs?: number };
}

function buildCommon(f: ConnectionForm, original: ConnectionView | undefined, errors: FormErrors): Common {
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

  const rateLimitOverrides: RateLimitOverrides = {};
  const setRo = (k: keyof RateLimitOverrides, v: number | undefined) => {
    if (v !== undefined) (rateLimitOverrides as Record<string, unknown>)[k] = v;
  };
  setRo('maxWaitMs', intIn(errors, 'rateLimitOverrides.maxWaitMs', f.maxWaitMs, 1, 86_400_000));
  setRo('executionMaxWaitMs', intIn(errors, 'rateLimitOverrides.executionMaxWaitMs', f.executionMaxWaitMs, 1, 86_400_000));
  setRo('requestsPerMinute', intIn(errors, 'rateLimitOverrides.requestsPerMinute', f.requestsPerMinute, 1, 1_000_000));
  setRo('minTimeMs', intIn(errors, 'rateLimitOverrides.minTimeMs', f.minTimeMs, 0, 3_600_000));
  if (Object.keys(modelConcurrency).length) rateLimitOverrides.modelConcurrency = modelConcurrency;

  // Keep whatever else is stored in providerSpecificData; set only what this form edits.
  const psd: ProviderSpecificData = { ...(original?.providerSpecificData ?? {}) };
  if (hasClaudeOptions(f.kind)) {
    psd.lowPriorityMode = f.lowPriorityMode;
    psd.autoLimitReset = f.autoLimitReset;
    const org = f.organizationUUID.trim();
    if (org.length > 100) errors['providerSpecificData.organizationUUID'] = 'at most 100 characters';
    if (org) psd.organizationUUID = org;
    else delete psd.organizationUUID;
  }
  const resetSeconds = intIn(
    errors,
    'providerSpecificData.rotationOverrides.rateLimitResetSeconds',
    f.rateLimitResetSeconds,
    1,
    21_600,
  );
  if (resetSeconds !== undefined) psd.rotationOverrides = { ...(psd.rotationOverrides ?? {}), rateLimitResetSeconds: resetSeconds };
  else if (psd.rotationOverrides) {
    const { rateLimitResetSeconds: _drop, ...rest } = psd.rotationOverrides;
    if (Object.keys(rest).length) psd.rotationOverrides = rest;
    else delete psd.rotationOverrides;
  }

  const timeouts: Common['timeouts'] = {};
  const connectMs = intIn(errors, 'timeouts.connectMs', f.connectMs, 100, 600_000);
  const headersMs = intIn(errors, 'timeouts.headersMs', f.headersMs, 1_000, 86_400_000);
  const idleMs = intIn(errors, 'timeouts.idleMs', f.idleMs, 1_000, 3_600_000);
  if (connectMs !== undefined) timeouts.connectMs = connectMs;
  if (headersMs !== undefined) timeouts.headersMs = headersMs;
  if (idleMs !== undefined) timeouts.idleMs = idleMs;

  return {
    name,
    kind: f.kind,
    ...(provider ? { provider } : {}),
    authClass: f.authClass,
    ...(baseUrl ? { baseUrl } : {}),
    ...(priority !== undefined ? { priority } : {}),
    enabled: f.enabled,
    models,
    passthroughModels: f.passthroughModels,
    maxConcurrent: maxConcurrent ?? null,
    rateLimitOverrides,
    disableCooling: f.disableCooling,
    providerSpecificData: psd,
    timeouts,
  };
}

export function buildCreateInput(f: ConnectionForm): BuiltInput<ConnectionCreateInput> {
  const errors: FormErrors = {};
  const common = buildCommon(f, undefined, errors);
  const secret = f.secret.trim();
  if (!secret && KIND_INFO[f.kind].secretRequired) errors.secret = 'an API key is required for this kind';
  if (Object.keys(errors).length) return { ok: false, errors };
  const { maxConcurrent, ...rest } = common;
  return {
    ok: true,
    input: {
      ...rest,
      ...(maxConcurrent !== null ? { maxConcurrent } : {}),
      ...(secret ? { secret } : {}),
      rateLimitProtection: f.rateLimitProtection,
    },
  };
}

/** A full update of the fields the form edits; the secret only when typed or removed. */
export function buildUpdateInput(f: ConnectionForm, original: ConnectionView): BuiltInput<ConnectionUpdateInput> {
  const errors: FormErrors = {};
  const common = buildCommon(f, original, errors);
  const secret = f.secret.trim();
  if (f.removeSecret && KIND_INFO[f.kind].secretRequired) errors.secret = 'this kind needs an API key; enter a new one instead';
  if (!secret && !f.removeSecret && !original.secret.set && KIND_INFO[f.kind].secretRequired) {
    errors.secret = 'an API key is required for this kind';
  }
  if (Object.keys(errors).length) return { ok: false, errors };
  const input: ConnectionUpdateInput = { ...common };
  // An emptied optional field goes back to the kind's default.
  if (!common.provider && KIND_INFO[f.kind].defaultProvider) input.provider = KIND_INFO[f.kind].defaultProvider!;
  if (!common.baseUrl && KIND_INFO[f.kind].defaultBaseUrl) input.baseUrl = KIND_INFO[f.kind].defaultBaseUrl!;
  if (secret) input.secret = secret;
  else if (f.removeSecret) input.secret = null;
  return { ok: true, input };
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
  'maxConcurrent',
  'rateLimitOverrides',
  'providerSpecificData',
  'timeouts',
] as const;

export function isFormField(field: string): boolean {
  return FORM_FIELDS.some((f) => field === f || field.startsWith(`${f}.`));
}
