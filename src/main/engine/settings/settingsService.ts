// Holds the resolved settings snapshot (read on the hot path as plain property lookups), persists
// patches in key_value, and tells subscribers which keys changed.
import {
  SETTING_KEYS,
  nest,
  settingDefs,
  validatePatch,
  type SettingKey,
  type SettingValues,
} from '../../../shared/settings';
import type { SettingView, SettingsPatchResult, SettingsView } from '../../../shared/model';
import { ApiError, badInput } from '../errors';
import type { Logger } from '../logger';
import type { KeyValueRepo } from '../store/keyValueRepo';
import { resolveSettings, type CliOverrides, type Env, type ResolvedSettings } from './resolve';

const NAMESPACE = 'settings';

export class SettingsService {
  private resolved: ResolvedSettings;
  private readonly listeners = new Set<(changed: SettingKey[]) => void>();

  constructor(
    private readonly repo: KeyValueRepo,
    private readonly env: Env,
    private readonly log: Logger,
    /** Command-line values for this run (`serve --proxy-port`): they win, and saving those keys is refused. */
    private readonly cli: CliOverrides = {},
  ) {
    this.resolved = this.load();
    for (const w of this.resolved.warnings) this.log.warn('settings.ignored', { detail: w });
  }

  /** Current effective values (replaced wholesale on change, never mutated). */
  get values(): SettingValues {
    return this.resolved.values;
  }

  get snapshot(): ResolvedSettings {
    return this.resolved;
  }

  onChange(fn: (changed: SettingKey[]) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  view(filter?: (k: SettingKey) => boolean): SettingsView {
    const r = this.resolved;
    const settings: SettingView[] = [];
    const values: Record<string, unknown> = {};
    for (const key of SETTING_KEYS) {
      if (filter && !filter(key)) continue;
      const def = settingDefs[key];
      values[key] = r.values[key];
      settings.push({
        key,
        group: def.group,
        label: def.label,
        description: def.description,
        type: def.type,
        value: r.values[key],
        source: r.sources[key],
        default: def.default,
        persisted: Object.prototype.hasOwnProperty.call(r.persisted, key) ? r.persisted[key] : null,
        envValue: Object.prototype.hasOwnProperty.call(r.envValues, key) ? r.envValues[key] : null,
        env: def.env ?? [],
        envOverridesPersisted: def.envOverridesPersisted ?? false,
        min: 'min' in def ? def.min : null,
        max: 'max' in def ? def.max : null,
        unit: 'unit' in def ? (def.unit ?? null) : null,
        shape: def.type === 'json' ? def.shape : null,
        options: def.type === 'enum' ? def.options.map((o) => ({ ...o })) : null,
        resilience: def.resilience ?? false,
        restartRequired: def.restartRequired ?? false,
        cliFlag: r.sources[key] === 'cli' ? (this.cli[key]?.flag ?? null) : null,
        envName: r.envNames[key] ?? null,
        envRejected: r.envRejected[key] ?? null,
      });
    }
    return { settings, values: nest(values) };
  }

  /**
   * Applies a patch atomically: every field is validated first; on any error nothing is written
   * and the error names the field.
   */
  patch(patch: unknown, filter?: (k: SettingKey) => boolean): SettingsPatchResult {
    const v = validatePatch(patch, filter);
    if (!v.ok) throw badInput(v.field, v.message);
    for (const e of v.entries) {
      const flag = this.resolved.sources[e.key] === 'cli' ? this.cli[e.key]?.flag : undefined;
      // Saved, it would change nothing until the flag is gone: refused rather than a silent no-op.
      if (flag) throw new ApiError(409, 'set_on_command_line', `${e.key} is set by ${flag} for this run; start without ${flag} to change it here`, e.key);
    }
    // Cross-field check against the values that will result.
    const next = { ...this.resolved.persisted } as Record<string, unknown>;
    for (const e of v.entries) {
      if (e.value === null) delete next[e.key];
      else next[e.key] = e.value;
    }
    const trial = resolveSettings(this.env, next, this.cli);
    const base = trial.values['modelLockout.baseCooldownMs'];
    const max = next['modelLockout.maxCooldownMs'];
    if (typeof max === 'number' && max < base) {
      throw badInput('modelLockout.maxCooldownMs', 'modelLockout.maxCooldownMs must be at least modelLockout.baseCooldownMs');
    }
    this.repo.transaction(() => {
      for (const e of v.entries) {
        if (e.value === null) this.repo.delete(NAMESPACE, e.key);
        else this.repo.set(NAMESPACE, e.key, e.value);
      }
    });
    const before = this.resolved.values;
    this.resolved = trial;
    const changed = SETTING_KEYS.filter((k) => JSON.stringify(before[k]) !== JSON.stringify(trial.values[k]));
    if (changed.length) for (const fn of [...this.listeners]) fn(changed);
    return { ...this.view(filter), adjusted: v.adjusted };
  }

  private load(): ResolvedSettings {
    return resolveSettings(this.env, this.repo.all(NAMESPACE), this.cli);
  }
}
