// Settings precedence in one pure function: built-in default < env < persisted < command line (<
// per-connection, see effectiveFor). A command-line value (`serve --proxy-port`) holds for the run. Each value comes back with its source, which the UI shows. The exception is a
// setting marked envOverridesPersisted (RATE_LIMIT_AUTO_ENABLE), whose env value wins (R-RQ-24).
import {
  SETTING_KEYS,
  normalizeValue,
  parseEnvValue,
  settingDefs,
  type SettingKey,
  type SettingSource,
  type SettingValues,
} from '../../../shared/settings';

export interface ResolvedSettings {
  values: SettingValues;
  sources: Record<SettingKey, SettingSource>;
  /** Env values that were read (after clamping), by key. */
  envValues: Partial<Record<SettingKey, unknown>>;
  /** The environment variable each env value was read from (the first of its names that is set). */
  envNames: Partial<Record<SettingKey, string>>;
  /** Environment variables that are set but could not be read as their setting's type (ignored). */
  envRejected: Partial<Record<SettingKey, string>>;
  persisted: Partial<Record<SettingKey, unknown>>;
  /** Env or stored values that were outside their range and were clamped into it. */
  adjusted: { key: SettingKey; source: 'env' | 'persisted'; from: unknown; to: unknown }[];
  /** Env or stored values that could not be used as given (ignored or clamped), with why. */
  warnings: string[];
}

export type Env = Record<string, string | undefined>;

/** Values given on the command line for this run, each with the flag that gave it. */
export type CliOverrides = Partial<Record<SettingKey, { value: unknown; flag: string }>>;

export function resolveSettings(env: Env, persisted: Partial<Record<string, unknown>>, cli: CliOverrides = {}): ResolvedSettings {
  const values: Record<string, unknown> = {};
  const sources = {} as Record<SettingKey, SettingSource>;
  const envValues: Partial<Record<SettingKey, unknown>> = {};
  const envNames: Partial<Record<SettingKey, string>> = {};
  const envRejected: Partial<Record<SettingKey, string>> = {};
  const cleanPersisted: Partial<Record<SettingKey, unknown>> = {};
  const warnings: string[] = [];
  const adjusted: ResolvedSettings['adjusted'] = [];

  for (const key of SETTING_KEYS) {
    const def = settingDefs[key];
    let value: unknown = structuredClone(def.default);
    let source: SettingSource = 'default';

    let envValue: unknown;
    let hasEnv = false;
    for (const name of def.env ?? []) {
      const raw = env[name];
      if (raw === undefined || raw === '') continue;
      const parsed = parseEnvValue(def, raw);
      if (!parsed || !parsed.ok) {
        warnings.push(`${name}=${JSON.stringify(raw)} is not a valid value for ${key}; ignored`);
        envRejected[key] ??= name;
        continue;
      }
      if (parsed.adjusted) {
        adjusted.push({ key, source: 'env', ...parsed.adjusted });
        warnings.push(`${name}=${JSON.stringify(raw)} is outside the range of ${key}; using ${JSON.stringify(parsed.value)}`);
      }
      envValue = parsed.value;
      hasEnv = true;
      envValues[key] = envValue;
      envNames[key] = name;
      break;
    }

    let hasPersisted = false;
    let persistedValue: unknown;
    if (Object.prototype.hasOwnProperty.call(persisted, key)) {
      const n = normalizeValue(def, persisted[key]);
      if (n.ok) {
        if (n.adjusted) {
          adjusted.push({ key, source: 'persisted', ...n.adjusted });
          warnings.push(`saved value of ${key} is outside its range; using ${JSON.stringify(n.value)}`);
        }
        hasPersisted = true;
        persistedValue = n.value;
        cleanPersisted[key] = n.value;
      } else {
        warnings.push(`saved value of ${key} ${n.message}; using the default`);
      }
    }

    if (def.envOverridesPersisted) {
      if (hasEnv) [value, source] = [envValue, 'env'];
      else if (hasPersisted) [value, source] = [persistedValue, 'persisted'];
    } else if (hasPersisted) [value, source] = [persistedValue, 'persisted'];
    else if (hasEnv) [value, source] = [envValue, 'env'];

    const flag = cli[key];
    if (flag) {
      const n = normalizeValue(def, flag.value);
      if (n.ok) [value, source] = [n.value, 'cli'];
      else warnings.push(`${flag.flag} ${JSON.stringify(flag.value)} ${n.message}; ignored`);
    }

    values[key] = value;
    sources[key] = source;
  }

  // Cross-field rule: the longest model lockout is never below the first one.
  if ((values['modelLockout.maxCooldownMs'] as number) < (values['modelLockout.baseCooldownMs'] as number)) {
    values['modelLockout.maxCooldownMs'] = values['modelLockout.baseCooldownMs'];
  }

  return { values: values as SettingValues, sources, envValues, envNames, envRejected, persisted: cleanPersisted, adjusted, warnings };
}

function readPath(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

/**
 * The value of a setting for one connection: its per-connection override when the setting has one
 * and the connection sets it, otherwise the resolved global value.
 */
export function effectiveFor<K extends SettingKey>(
  resolved: Pick<ResolvedSettings, 'values' | 'sources'>,
  key: K,
  connection: object | null | undefined,
): { value: SettingValues[K]; source: SettingSource } {
  const def = settingDefs[key];
  if (connection && def.connectionOverride) {
    const v = readPath(connection, def.connectionOverride);
    if (v !== undefined && v !== null) return { value: v as SettingValues[K], source: 'connection' };
  }
  return { value: resolved.values[key], source: resolved.sources[key] };
}
