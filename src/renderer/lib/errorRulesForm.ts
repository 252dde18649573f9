// The operator error rules and per-provider defaults as editable rows (SPEC §7b, R-CM-05/06):
// what the inputs hold (strings, as typed), how stored rules fill them, and how rows become the
// setting values, checked with the same schemas the engine uses. Errors are keyed "<row>.<field>"
// so each lands next to its input; an engine error naming "providerErrorRules[3].cooldownMs" maps
// to the same key.
import {
  operatorErrorRuleSchema,
  providerErrorDefaultSchema,
  type ErrorRuleReason,
  type ErrorRuleScope,
  type OperatorErrorRule,
  type ProviderErrorDefaults,
} from '../../shared/settings';

const MIN = 60_000;

/** R-CM-06: Default (no explicit cooldown), 30 min, 1 h, 5 h, 24 h, or 1-43,200 custom minutes. */
export const DURATION_CHOICES = [
  { value: 'default', label: 'Default', ms: null },
  { value: '30m', label: '30 min', ms: 30 * MIN },
  { value: '1h', label: '1 h', ms: 60 * MIN },
  { value: '5h', label: '5 h', ms: 5 * 60 * MIN },
  { value: '24h', label: '24 h', ms: 24 * 60 * MIN },
  { value: 'custom', label: 'Custom…', ms: null },
] as const;
export type DurationChoice = (typeof DURATION_CHOICES)[number]['value'];
export const CUSTOM_MIN_MINUTES = 1;
export const CUSTOM_MAX_MINUTES = 43_200;

export interface DurationInput {
  choice: DurationChoice;
  /** Minutes, as typed, for the custom choice. */
  customMinutes: string;
}

export function durationFromMs(ms: number | undefined): DurationInput {
  if (ms === undefined) return { choice: 'default', customMinutes: '' };
  const preset = DURATION_CHOICES.find((c) => c.ms === ms);
  if (preset) return { choice: preset.value, customMinutes: '' };
  return { choice: 'custom', customMinutes: String(Math.round((ms / MIN) * 1000) / 1000) };
}

/** The cooldown in ms (undefined for Default), or why the custom minutes are refused. */
export function durationToMs(d: DurationInput): { ok: true; ms: number | undefined } | { ok: false; message: string } {
  if (d.choice === 'default') return { ok: true, ms: undefined };
  if (d.choice !== 'custom') return { ok: true, ms: DURATION_CHOICES.find((c) => c.value === d.choice)!.ms! };
  const t = d.customMinutes.trim().replace(/[_,\s]/g, '');
  const n = Number(t);
  if (t === '' || !Number.isFinite(n) || !Number.isInteger(n)) return { ok: false, message: 'enter whole minutes' };
  if (n < CUSTOM_MIN_MINUTES || n > CUSTOM_MAX_MINUTES) {
    return { ok: false, message: `must be between ${CUSTOM_MIN_MINUTES} and ${CUSTOM_MAX_MINUTES.toLocaleString('en-US')} minutes (30 days)` };
  }
  return { ok: true, ms: n * MIN };
}

export interface RuleRow {
  provider: string;
  /** '' = any status. */
  status: string;
  /** '' = any text. */
  match: string;
  /** '' = derived from the status. */
  reason: ErrorRuleReason | '';
  scope: ErrorRuleScope;
  duration: DurationInput;
}

export interface DefaultRow {
  provider: string;
  scope: ErrorRuleScope;
  reason: ErrorRuleReason | '';
  /** Never "default": a default always names its cooldown. */
  duration: DurationInput;
}

export type RowErrors = Record<string, string>;

export const emptyRuleRow = (provider = ''): RuleRow => ({
  provider,
  status: '',
  match: '',
  reason: '',
  scope: 'connection',
  duration: { choice: 'default', customMinutes: '' },
});

export const emptyDefaultRow = (provider = ''): DefaultRow => ({
  provider,
  scope: 'connection',
  reason: '',
  duration: { choice: '30m', customMinutes: '' },
});

export function rowsFromRules(rules: readonly OperatorErrorRule[]): RuleRow[] {
  return rules.map((r) => ({
    provider: r.provider,
    status: r.status !== undefined ? String(r.status) : '',
    match: r.match ?? '',
    reason: r.reason ?? '',
    scope: r.scope ?? 'connection',
    duration: durationFromMs(r.cooldownMs),
  }));
}

export function rowsFromDefaults(defaults: ProviderErrorDefaults): DefaultRow[] {
  return Object.entries(defaults).map(([provider, d]) => ({
    provider,
    scope: d.scope ?? 'connection',
    reason: d.reason ?? '',
    duration: durationFromMs(d.cooldownMs),
  }));
}

const issueKey = (row: number, path: readonly PropertyKey[]) => `${row}.${String(path[0] ?? 'provider')}`;

/** Rows as the `providerErrorRules` value, or the errors by "<row>.<field>". */
export function rulesFromRows(rows: readonly RuleRow[]): { ok: true; value: OperatorErrorRule[] } | { ok: false; errors: RowErrors } {
  const errors: RowErrors = {};
  const out: OperatorErrorRule[] = [];
  rows.forEach((row, i) => {
    const raw: Record<string, unknown> = { provider: row.provider.trim(), scope: row.scope };
    const status = row.status.trim();
    if (status !== '') {
      const n = Number(status);
      if (!Number.isInteger(n)) {
        errors[`${i}.status`] = 'must be an HTTP status (400-599)';
        return;
      }
      raw.status = n;
    }
    if (row.match !== '') raw.match = row.match;
    if (row.reason !== '') raw.reason = row.reason;
    const d = durationToMs(row.duration);
    if (!d.ok) {
      errors[`${i}.cooldownMs`] = d.message;
      return;
    }
    if (d.ms !== undefined) raw.cooldownMs = d.ms;
    const r = operatorErrorRuleSchema.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      errors[issueKey(i, issue.path)] = issue.message;
      return;
    }
    out.push(r.data);
  });
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, value: out };
}

/** Rows as the `providerErrorDefaults` value, or the errors by "<row>.<field>". */
export function defaultsFromRows(rows: readonly DefaultRow[]): { ok: true; value: ProviderErrorDefaults } | { ok: false; errors: RowErrors } {
  const errors: RowErrors = {};
  const out: ProviderErrorDefaults = {};
  rows.forEach((row, i) => {
    const provider = row.provider.trim();
    if (Object.prototype.hasOwnProperty.call(out, provider)) {
      errors[`${i}.provider`] = `${provider} has a default already`;
      return;
    }
    const d = durationToMs(row.duration);
    if (!d.ok || d.ms === undefined) {
      errors[`${i}.cooldownMs`] = d.ok ? 'a default needs a duration' : d.message;
      return;
    }
    const raw: Record<string, unknown> = { cooldownMs: d.ms, scope: row.scope };
    if (row.reason !== '') raw.reason = row.reason;
    const r = providerErrorDefaultSchema.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      errors[issueKey(i, issue.path)] = issue.message;
      return;
    }
    if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(provider)) {
      errors[`${i}.provider`] = 'must be a provider id (lowercase letters, digits, ".", "_" or "-")';
      return;
    }
    out[provider] = r.data;
  });
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, value: out };
}

/**
 * An engine message naming an item ("providerErrorRules[3].cooldownMs must be ...",
 * "providerErrorDefaults.glm.cooldownMs ...") as a row error; null when it names none.
 */
export function rowErrorFromMessage(
  message: string,
  rowOfProvider: (provider: string) => number = () => -1,
): { key: string; message: string } | null {
  const rule = /^providerErrorRules\[(\d+)\]\.?(\w+)?\s+(.*)$/.exec(message);
  if (rule) return { key: `${rule[1]}.${rule[2] ?? 'provider'}`, message: rule[3]! };
  const def = /^providerErrorDefaults\.([a-z0-9._-]+?)\.(\w+)\s+(.*)$/.exec(message);
  if (def) {
    const row = rowOfProvider(def[1]!);
    if (row >= 0) return { key: `${row}.${def[2]}`, message: def[3]! };
  }
  return null;
}
