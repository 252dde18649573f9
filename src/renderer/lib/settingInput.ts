// Reads what a user typed into a setting's field and checks it with the shared settings rules
// before anything is sent. The UI is stricter than the API: a number outside the range is an
// error naming the range (the API would clamp it), so what is saved is what the user sees.
import type { SettingView } from '../../shared/model';
import { settingDefs, validatePatch, type SettingKey, type SettingUnit } from '../../shared/settings';
import { formatRange, UNIT_LABEL } from './format';

export type ParsedSetting = { ok: true; value: unknown } | { ok: false; message: string };

/** A structured setting whose value is one string (a URL, a client id): edited as plain text, not JSON. */
export const isTextSetting = (s: Pick<SettingView, 'type' | 'default'>): boolean => s.type === 'json' && typeof s.default === 'string';

/** The text an input shows for a value. */
export function settingText(s: Pick<SettingView, 'type' | 'value' | 'default'>, value: unknown = s.value): string {
  if (value === null || value === undefined) return '';
  if (s.type === 'json') return typeof value === 'string' && isTextSetting(s) ? value : JSON.stringify(value, null, 2);
  return String(value);
}

export function parseSettingText(s: SettingView, text: string): ParsedSetting {
  const t = text.trim();
  let value: unknown;
  switch (s.type) {
    case 'boolean':
      if (t !== 'true' && t !== 'false') return { ok: false, message: 'must be on or off' };
      value = t === 'true';
      break;
    case 'enum':
      value = t;
      break;
    case 'int':
    case 'int?': {
      if (t === '') {
        if (s.type === 'int?') return { ok: true, value: null };
        return { ok: false, message: 'enter a number' };
      }
      const n = Number(t.replace(/[_,\s]/g, ''));
      if (!Number.isFinite(n)) return { ok: false, message: 'must be a number' };
      if (!Number.isInteger(n)) return { ok: false, message: 'must be a whole number' };
      if ((s.min !== null && n < s.min) || (s.max !== null && n > s.max)) {
        return { ok: false, message: rangeMessage(s.min, s.max, s.unit) };
      }
      value = n;
      break;
    }
    case 'json':
      if (isTextSetting(s)) {
        value = t;
        break;
      }
      try {
        value = JSON.parse(t === '' ? 'null' : t);
      } catch {
        return { ok: false, message: `is not valid JSON${s.shape ? ` (expected ${s.shape})` : ''}` };
      }
      break;
  }
  return checkSettingValue(s.key, value);
}

/** "must be between 1000 and 86,400,000 ms (1 s – 1 day)"; "must be between 1 and 20". */
export function rangeMessage(min: number | null, max: number | null, unit: SettingUnit | null): string {
  const n = (v: number | null) => (v === null ? '?' : v.toLocaleString('en-US'));
  const u = unit ? UNIT_LABEL[unit] : '';
  const words = unit === 'ms' || unit === 's' || unit === 'bytes' ? formatRange(min, max, unit) : null;
  return `must be between ${n(min)} and ${n(max)}${u ? ` ${u}` : ''}${words ? ` (${words})` : ''}`;
}

/** Runs the shared validator on a single value (null = go back to env/default). */
export function checkSettingValue(key: string, value: unknown): ParsedSetting {
  if (value === null) return { ok: true, value: null };
  const r = validatePatch({ [key]: value });
  if (!r.ok) return { ok: false, message: withoutKey(key, r.message) };
  if (r.adjusted.length) {
    // The API would clamp it; the dashboard says so instead of saving a different number.
    const def = settingDefs[key as SettingKey];
    const unit = 'unit' in def ? (def.unit ?? null) : null;
    return { ok: false, message: rangeMessage('min' in def ? def.min : null, 'max' in def ? def.max : null, unit) };
  }
  const entry = r.entries[0];
  return { ok: true, value: entry ? entry.value : value };
}

/** Cross-field rules the single-value check cannot see (the other value is already saved). */
export function crossFieldError(key: string, value: unknown, current: Record<string, unknown>): string | null {
  if (typeof value !== 'number') return null;
  if (key === 'modelLockout.maxCooldownMs') {
    const base = current['modelLockout.baseCooldownMs'];
    if (typeof base === 'number' && value < base) return 'must be at least the first lockout duration';
  }
  if (key === 'modelLockout.baseCooldownMs') {
    const max = current['modelLockout.maxCooldownMs'];
    if (typeof max === 'number' && value > max) return 'must not exceed the longest lockout duration';
  }
  return null;
}

/**
 * The shared validator names the setting and the item ("providerErrorRules[3].cooldownMs must
 * be ..."); next to the field the key is noise, and the item reads better as a number from 1.
 */
function withoutKey(key: string, message: string): string {
  if (!message.startsWith(key)) return message;
  const rest = message.slice(key.length);
  const item = /^\[(\d+)\]\.?([A-Za-z0-9_.]*)\s+/.exec(rest);
  if (item) return `item ${Number(item[1]) + 1}${item[2] ? `, ${item[2]}` : ''}: ${rest.slice(item[0].length)}`;
  const field = /^\.([A-Za-z0-9_.-]+)\s+/.exec(rest);
  if (field) return `${field[1]}: ${rest.slice(field[0].length)}`;
  return rest.trimStart();
}

/**
 * What a typed value would do, checked as the user types (before anything is sent): the value to
 * save, or why it is refused, including the rules that involve another, already saved value.
 */
export function checkDraft(s: SettingView, text: string, current: Record<string, unknown>): ParsedSetting {
  const parsed = parseSettingText(s, text);
  if (!parsed.ok) return parsed;
  const cross = crossFieldError(s.key, parsed.value, current);
  return cross ? { ok: false, message: cross } : parsed;
}
