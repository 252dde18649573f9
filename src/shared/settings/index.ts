// The one settings schema: every setting with its default, range and env names, plus the pure
// rules that parse, clamp and validate values. Resolution against env/persisted/connection
// values lives in the engine (engine/settings/resolve.ts).
import { admissionSettings } from './admission';
import { claudeSettings } from './claude';
import { comboSettings } from './combos';
import type { SettingDef, SettingGroup, ValueOfDef } from './define';
import { errorRuleSettings } from './errorRules';
import { proxySettings } from './proxy';
import { resilienceSettings } from './resilience';
import { sessionSettings } from './sessions';
import { streamSettings } from './streams';
import { notificationSettings } from './notifications';

export * from './define';
export { providerQuotaOverrideSchema, type ProviderQuotaOverride } from './resilience';
export { CLAUDE_CODE_CLIENT_ID } from './claude';
export type { AutoWeights } from './combos';
export * from './errorRules';
export { DEFAULT_MODEL_DEADLINES, modelDeadlineSchema, type ModelDeadline } from './streams';

export const settingDefs = {
  ...proxySettings,
  ...resilienceSettings,
  ...admissionSettings,
  ...claudeSettings,
  ...comboSettings,
  ...sessionSettings,
  ...errorRuleSettings,
  ...streamSettings,
  ...notificationSettings,
} as const satisfies Record<string, SettingDef>;

export type SettingKey = keyof typeof settingDefs;
export type SettingValues = { -readonly [K in SettingKey]: ValueOfDef<(typeof settingDefs)[K]> };
/** `cli`: a command-line flag (e.g. `serve --proxy-port`) that wins over everything for this run. */
export type SettingSource = 'default' | 'env' | 'persisted' | 'connection' | 'cli';

export const SETTING_KEYS = Object.keys(settingDefs) as SettingKey[];

export const isSettingKey = (k: string): k is SettingKey => Object.prototype.hasOwnProperty.call(settingDefs, k);

export function defaultValues(): SettingValues {
  const out: Record<string, unknown> = {};
  for (const k of SETTING_KEYS) out[k] = structuredClone(settingDefs[k].default);
  return out as SettingValues;
}

export type Normalized =
  | { ok: true; value: unknown; adjusted?: { from: unknown; to: unknown } }
  /** `named`: the message already starts with the setting's key (and the item's path). */
  | { ok: false; message: string; named?: boolean };

const clamp = (n: number, min: number, max: number) => Math.min(max, Math.max(min, n));

/**
 * Checks one value against its definition. Numbers outside the range are clamped (the spec's
 * "clamped on normalisation"), and the clamp is reported so the caller can say so. Wrong types,
 * fractions for integer settings and malformed structured values are errors.
 */
export function normalizeValue(def: SettingDef, raw: unknown): Normalized {
  switch (def.type) {
    case 'boolean':
      return typeof raw === 'boolean' ? { ok: true, value: raw } : { ok: false, message: 'must be true or false' };
    case 'enum':
      return typeof raw === 'string' && def.options.some((o) => o.value === raw)
        ? { ok: true, value: raw }
        : { ok: false, message: `must be one of ${def.options.map((o) => o.value).join(', ')}` };
    case 'int':
    case 'int?': {
      if (raw === null && def.type === 'int?') return { ok: true, value: null };
      if (typeof raw !== 'number' || !Number.isFinite(raw)) return { ok: false, message: 'must be a number' };
      if (!Number.isInteger(raw)) return { ok: false, message: 'must be a whole number' };
      const v = clamp(raw, def.min, def.max);
      return v === raw ? { ok: true, value: v } : { ok: true, value: v, adjusted: { from: raw, to: v } };
    }
    case 'json': {
      const r = def.schema.safeParse(raw);
      if (r.success) return { ok: true, value: r.data };
      const issue = r.error.issues[0];
      if (issue && def.describeIssue) return { ok: false, message: def.describeIssue(issue.path, issue.message), named: true };
      const where = issue && issue.path.length ? ` at ${issue.path.join('.')}` : '';
      return { ok: false, message: `${issue?.message ?? 'is not valid'}${where} (expected ${def.shape})` };
    }
  }
}

/** Parses an env string for a setting; undefined when the string cannot be read as that type. */
export function parseEnvValue(def: SettingDef, raw: string): Normalized | undefined {
  const s = raw.trim();
  switch (def.type) {
    case 'boolean': {
      const l = s.toLowerCase();
      if (['true', '1', 'on', 'yes'].includes(l)) return { ok: true, value: true };
      if (['false', '0', 'off', 'no'].includes(l)) return { ok: true, value: false };
      return undefined;
    }
    case 'enum': {
      const n = normalizeValue(def, s);
      return n.ok ? n : undefined;
    }
    case 'int':
    case 'int?': {
      if (!/^-?\d+(\.\d+)?(e\d+)?$/i.test(s)) return undefined;
      return normalizeValue(def, Math.round(Number(s)));
    }
    case 'json': {
      try {
        return normalizeValue(def, JSON.parse(s));
      } catch {
        return undefined;
      }
    }
  }
}

export type PatchEntry = { key: SettingKey; value: unknown | null };
export type PatchValidation =
  | { ok: true; entries: PatchEntry[]; adjusted: { key: SettingKey; from: unknown; to: unknown }[] }
  | { ok: false; field: string; message: string };

/**
 * Validates a settings patch. Accepts nested objects ({"requestQueue": {"maxWaitMs": 5000}}) and
 * dotted keys ({"requestQueue.maxWaitMs": 5000}). A null value removes the saved value, so the
 * setting falls back to env/default. `allowed` restricts the keys (e.g. resilience-only).
 * All-or-nothing: the first bad field fails the whole patch.
 */
export function validatePatch(patch: unknown, allowed?: (k: SettingKey) => boolean): PatchValidation {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    return { ok: false, field: '(body)', message: 'must be a JSON object' };
  }
  const entries: PatchEntry[] = [];
  const adjusted: { key: SettingKey; from: unknown; to: unknown }[] = [];
  const walk = (obj: Record<string, unknown>, prefix: string): { field: string; message: string } | undefined => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (isSettingKey(key) && (allowed === undefined || allowed(key))) {
        if (v === null) {
          entries.push({ key, value: null });
          continue;
        }
        const n = normalizeValue(settingDefs[key], v);
        if (!n.ok) return { field: key, message: n.named ? n.message : `${key} ${n.message}` };
        entries.push({ key, value: n.value });
        if (n.adjusted) adjusted.push({ key, ...n.adjusted });
        continue;
      }
      // Walk into a group even when none of its keys is allowed, so the error names the leaf.
      const isPrefix = SETTING_KEYS.some((s) => s.startsWith(`${key}.`));
      if (isPrefix && v !== null && typeof v === 'object' && !Array.isArray(v)) {
        const err = walk(v as Record<string, unknown>, key);
        if (err) return err;
        continue;
      }
      if (isSettingKey(key)) return { field: key, message: `${key} cannot be changed here (use /api/settings)` };
      return { field: key, message: `${key} is not a known setting` };
    }
    return undefined;
  };
  const err = walk(patch as Record<string, unknown>, '');
  if (err) return { ok: false, ...err };
  const modelMin = entries.find((e) => e.key === 'modelLockout.baseCooldownMs');
  const modelMax = entries.find((e) => e.key === 'modelLockout.maxCooldownMs');
  if (modelMin && modelMax && typeof modelMin.value === 'number' && typeof modelMax.value === 'number') {
    if (modelMax.value < modelMin.value) {
      return {
        ok: false,
        field: 'modelLockout.maxCooldownMs',
        message: 'modelLockout.maxCooldownMs must be at least modelLockout.baseCooldownMs',
      };
    }
  }
  return { ok: true, entries, adjusted };
}

/** Nests flat dotted values ({"a.b": 1} -> {a: {b: 1}}) for answers shaped like the spec's examples. */
export function nest(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    const parts = k.split('.');
    let cur = out;
    for (let i = 0; i < parts.length - 1; i++) {
      const p = parts[i]!;
      if (typeof cur[p] !== 'object' || cur[p] === null) cur[p] = {};
      cur = cur[p] as Record<string, unknown>;
    }
    cur[parts[parts.length - 1]!] = v;
  }
  return out;
}

export const SETTING_GROUPS: { id: SettingGroup; label: string }[] = [
  { id: 'proxy', label: 'Proxy' },
  { id: 'upstream', label: 'Upstream timeouts' },
  { id: 'routing', label: 'Routing' },
  { id: 'providerBreaker', label: 'Provider circuit breaker' },
  { id: 'providerCooldown', label: 'Provider cooldown window gate' },
  { id: 'connectionCooldown', label: 'Connection cooldown' },
  { id: 'modelLockout', label: 'Model lockout' },
  { id: 'streams', label: 'Stream resilience' },
  { id: 'requestQueue', label: 'Request queue' },
  { id: 'concurrency', label: 'Concurrency' },
  { id: 'combos', label: 'Combos' },
  { id: 'logs', label: 'Request log' },
  { id: 'errorRules', label: 'Provider error rules' },
  { id: 'claude', label: 'Claude subscription accounts' },
  { id: 'notifications', label: 'Notifications' },
];
