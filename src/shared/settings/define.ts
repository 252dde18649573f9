// Setting definitions: plain data plus zod schemas. No I/O here; the engine resolves values
// (default < env < persisted < per-connection) and the renderer uses the same rules to validate input.
import { z } from 'zod';

export type SettingGroup =
  | 'proxy'
  | 'upstream'
  | 'logs'
  | 'providerBreaker'
  | 'providerCooldown'
  | 'connectionCooldown'
  | 'modelLockout'
  | 'requestQueue'
  | 'concurrency'
  | 'routing'
  | 'claude'
  | 'combos'
  | 'errorRules'
  | 'streams'
  | 'notifications';

export type SettingUnit = 'ms' | 's' | 'count' | 'bytes' | 'port' | 'points' | 'days';

interface BaseDef {
  group: SettingGroup;
  label: string;
  description: string;
  /** Env vars (first match wins). By default the env only supplies the default (R-GEN-01). */
  env?: readonly string[];
  /** When true the env value beats a persisted one (RATE_LIMIT_AUTO_ENABLE, R-RQ-24). */
  envOverridesPersisted?: boolean;
  /** Dotted path inside a connection (e.g. "rateLimitOverrides.maxWaitMs") that overrides this value. */
  connectionOverride?: string;
  /** Served and patched by /api/resilience as well as /api/settings. */
  resilience?: boolean;
  /** The value is read at start-up; changing it needs a restart (the UI says so). */
  restartRequired?: boolean;
}

export interface IntDef extends BaseDef {
  type: 'int';
  default: number;
  min: number;
  max: number;
  unit?: SettingUnit;
}

export interface NullableIntDef extends BaseDef {
  type: 'int?';
  default: number | null;
  min: number;
  max: number;
  unit?: SettingUnit;
}

export interface BoolDef extends BaseDef {
  type: 'boolean';
  default: boolean;
}

export interface JsonDef<T = unknown> extends BaseDef {
  type: 'json';
  default: T;
  schema: z.ZodType<T>;
  /** Human hint for the editor, e.g. "list of {provider, rateLimitCooldownSeconds}". */
  shape: string;
  /** Words for a schema issue at `path` (e.g. "providerErrorRules[3].cooldownMs must be ..."); replaces the generic message. */
  describeIssue?: (path: readonly PropertyKey[], message: string) => string;
}

export interface EnumDef<T extends string = string> extends BaseDef {
  type: 'enum';
  default: T;
  options: readonly { value: T; label: string }[];
}

export type SettingDef = IntDef | NullableIntDef | BoolDef | EnumDef | JsonDef<any>;

export type ValueOfDef<D> = D extends IntDef
  ? number
  : D extends NullableIntDef
    ? number | null
    : D extends BoolDef
      ? boolean
      : D extends EnumDef<infer E>
        ? E
      : D extends JsonDef<infer T>
        ? T
        : never;

export const int = (d: Omit<IntDef, 'type'>): IntDef => ({ type: 'int', ...d });
export const nullableInt = (d: Omit<NullableIntDef, 'type'>): NullableIntDef => ({ type: 'int?', ...d });
export const bool = (d: Omit<BoolDef, 'type'>): BoolDef => ({ type: 'boolean', ...d });
export const oneOf = <T extends string>(d: Omit<EnumDef<T>, 'type'>): EnumDef<T> => ({ type: 'enum', ...d });
export const json = <T>(d: Omit<JsonDef<T>, 'type'>): JsonDef<T> => ({ type: 'json', ...d });

/** Env names under both our prefix and the seed system's, so an existing deployment's variables keep working. */
export const envNames = (suffix: string): readonly string[] => [`SWITCHYARD_${suffix}`, `OMNIROUTE_${suffix}`];
