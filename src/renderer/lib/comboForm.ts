// The combo form: its state, the list edits (add, remove, reorder by drag or buttons), the checks
// made before anything is sent (the same rules as the API, keyed by the API's field paths, so an
// error the engine names lands next to the same input), and the input it builds.
import type { ComboCreateInput } from '../../shared/contract';
import type { ComboStrategy, ComboView } from '../../shared/model';

export interface TargetRow {
  /** Local identity for React keys and drag-and-drop. */
  uid: string;
  provider: string;
  model: string;
  /** '' = any connection of the provider. */
  connectionId: string;
  weight: string;
}

export interface ComboForm {
  name: string;
  strategy: ComboStrategy;
  targets: TargetRow[];
  /** The combo opts out of the cooldown-aware waits (a literal false). */
  noWaits: boolean;
  targetTimeoutMs: string;
  resetWindowMinutes: string;
}

export type ComboFormErrors = Record<string, string>;

let uidSeq = 0;
const uid = () => `t${++uidSeq}`;

export const emptyTarget = (provider = ''): TargetRow => ({ uid: uid(), provider, model: '', connectionId: '', weight: '1' });

export function emptyComboForm(provider = ''): ComboForm {
  return { name: '', strategy: 'priority', targets: [emptyTarget(provider)], noWaits: false, targetTimeoutMs: '', resetWindowMinutes: '' };
}

export function formFromCombo(c: ComboView): ComboForm {
  return {
    name: c.name,
    strategy: c.strategy,
    targets: c.targets.map((t) => ({ uid: uid(), provider: t.provider, model: t.model, connectionId: t.connectionId ?? '', weight: String(t.weight) })),
    noWaits: c.options.comboCooldownWaitEnabled === false,
    targetTimeoutMs: c.options.targetTimeoutMs !== undefined ? String(c.options.targetTimeoutMs) : '',
    resetWindowMinutes: c.options.resetWindowMs !== undefined ? String(Math.round(c.options.resetWindowMs / 60_000)) : '',
  };
}

/** Moves the target at `from` to position `to` (drag and drop, or the up/down buttons). */
export function moveTarget(targets: TargetRow[], from: number, to: number): TargetRow[] {
  if (from === to || from < 0 || from >= targets.length || to < 0 || to >= targets.length) return targets;
  const next = [...targets];
  const [row] = next.splice(from, 1);
  next.splice(to, 0, row!);
  return next;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:@+/-]*$/;
const wholeIn = (s: string, min: number, max: number) => /^\d+$/.test(s.trim()) && Number(s) >= min && Number(s) <= max;

export type BuiltCombo = { ok: true; input: ComboCreateInput } | { ok: false; errors: ComboFormErrors };

export function buildComboInput(f: ComboForm): BuiltCombo {
  const errors: ComboFormErrors = {};
  const name = f.name.trim();
  if (!name) errors.name = 'Give the combo a name; agents send it as the model.';
  else if (!NAME.test(name)) errors.name = 'Use letters, digits and . _ : @ + / - (no spaces).';
  else if (name.toLowerCase().startsWith('combo/')) errors.name = 'Leave out the "combo/" prefix.';
  if (f.targets.length === 0) errors.targets = 'Add at least one target.';
  const seen = new Map<string, number>();
  f.targets.forEach((t, i) => {
    if (!t.provider && !t.connectionId) errors[`targets.${i}.provider`] = 'Choose a provider.';
    if (!t.model.trim()) errors[`targets.${i}.model`] = 'Enter the model id.';
    if (t.weight.trim() !== '' && !wholeIn(t.weight, 1, 1000)) errors[`targets.${i}.weight`] = 'A whole number from 1 to 1000.';
    const key = `${t.provider}/${t.model.trim()}#${t.connectionId}`;
    const dup = seen.get(key);
    if (dup !== undefined && t.model.trim()) errors[`targets.${i}`] = `Same as target ${dup + 1}.`;
    seen.set(key, i);
  });
  if (f.targetTimeoutMs.trim() !== '' && !wholeIn(f.targetTimeoutMs, 100, 86_400_000)) {
    errors['options.targetTimeoutMs'] = 'A whole number of milliseconds from 100 to 86400000.';
  }
  if (f.resetWindowMinutes.trim() !== '' && !wholeIn(f.resetWindowMinutes, 1, 10_080)) {
    errors['options.resetWindowMs'] = 'A whole number of minutes from 1 to 10080.';
  }
  if (Object.keys(errors).length) return { ok: false, errors };
  const options: ComboCreateInput['options'] = {};
  if (f.noWaits) options.comboCooldownWaitEnabled = false;
  if (f.targetTimeoutMs.trim()) options.targetTimeoutMs = Number(f.targetTimeoutMs);
  if (f.resetWindowMinutes.trim()) options.resetWindowMs = Number(f.resetWindowMinutes) * 60_000;
  return {
    ok: true,
    input: {
      name,
      strategy: f.strategy,
      targets: f.targets.map((t) => ({
        ...(t.provider ? { provider: t.provider } : {}),
        model: t.model.trim(),
        ...(t.connectionId ? { connectionId: t.connectionId } : {}),
        ...(t.weight.trim() ? { weight: Number(t.weight) } : {}),
      })),
      options,
    },
  };
}

/** The error for a field, or for the target row it belongs to. */
export function comboErrorFor(errors: ComboFormErrors, field: string): string | undefined {
  return errors[field];
}

/** Fields the form shows next to an input; other engine errors are form-level. */
export function isComboField(field: string): boolean {
  return field === 'name' || field === 'targets' || field === 'strategy' || /^targets\.\d+(\.(provider|model|connectionId|weight))?$/.test(field) || field.startsWith('options.');
}
