// Settings: every value with its source, pushed by the engine, and saving one setting at a time.
// Input is checked with the shared rules first; a bad value stays in its field with the reason and
// nothing is sent. A saved value can be removed (patch null), which falls back to env or default.
// "Saved" belongs to the value that was saved: it goes as soon as the field is edited again
// (clearError) or the value changes under it (a pushed view).
import { createStore } from 'zustand/vanilla';
import type { SettingsPatchResult, SettingsView, SettingView } from '../../shared/model';
import { describeError, messageForField } from '../lib/errors';
import { checkSettingValue, crossFieldError, parseSettingText } from '../lib/settingInput';
import { reportError, reportLoadError, Revision, type StoreContext } from './context';

export interface SettingsState {
  view: SettingsView | null;
  loaded: boolean;
  /** Per setting key: why the last input was refused. */
  errors: Record<string, string>;
  saving: Record<string, boolean>;
  /** Per setting key: what the last save did ("Saved", "Reset to default"), while that value stands. */
  notices: Record<string, string>;
  apply(view: SettingsView): void;
  load(): Promise<void>;
  saveText(key: string, text: string): Promise<boolean>;
  save(key: string, value: unknown): Promise<boolean>;
  reset(key: string): Promise<boolean>;
  /** The field was edited: its error and its "Saved" notice no longer apply. */
  clearError(key: string): void;
}

export const settingOf = (view: SettingsView | null, key: string): SettingView | undefined =>
  view?.settings.find((s) => s.key === key);

export const flatValues = (view: SettingsView | null): Record<string, unknown> =>
  Object.fromEntries((view?.settings ?? []).map((s) => [s.key, s.value]));

const without = (m: Record<string, string>, k: string) => {
  if (!(k in m)) return m;
  const next = { ...m };
  delete next[k];
  return next;
};

/** The notices whose setting still has the value it had when the notice was made. */
function standing(notices: Record<string, string>, noticed: Map<string, string>, view: SettingsView): Record<string, string> {
  let out = notices;
  for (const key of Object.keys(notices)) {
    const now = settingOf(view, key);
    if (now && JSON.stringify([now.value, now.source]) === noticed.get(key)) continue;
    if (out === notices) out = { ...notices };
    delete out[key];
    noticed.delete(key);
  }
  return out;
}

/** A 409 for a value given on the command line, in words. */
function commandLineMessage(flag: string | null | undefined): string {
  const f = flag ?? 'a command-line option';
  return `set on the command line (${f}) for this run, so it cannot be changed here; start Switchyard without ${f} to change it here`;
}

export function createSettingsStore(ctx: StoreContext) {
  const rev = new Revision();
  /** Per notice: the value and source it was made for. */
  const noticed = new Map<string, string>();
  return createStore<SettingsState>()((set, get) => {
    const fail = (key: string, message: string) => {
      set((s) => ({ errors: { ...s.errors, [key]: message }, notices: without(s.notices, key) }));
      return false;
    };

    const send = async (key: string, value: unknown, doneNotice: (r: SettingsPatchResult) => string) => {
      set((s) => ({ saving: { ...s.saving, [key]: true } }));
      try {
        const r = await ctx.bridge.patchSettings({ patch: { [key]: value } });
        rev.bump();
        const view = { settings: r.settings, values: r.values };
        const after = settingOf(view, key);
        noticed.set(key, JSON.stringify([after?.value, after?.source]));
        set((s) => ({
          view,
          errors: without(s.errors, key),
          notices: standing({ ...s.notices, [key]: doneNotice(r) }, noticed, view),
        }));
        return true;
      } catch (err) {
        const e = describeError(err);
        if (e.unauthorized) {
          reportError(ctx, err);
          return false;
        }
        const field = e.field && settingOf(get().view, e.field) ? e.field : key;
        if (e.code === 'set_on_command_line') return fail(field, commandLineMessage(settingOf(get().view, field)?.cliFlag));
        return fail(field, messageForField(e));
      } finally {
        set((s) => {
          const saving = { ...s.saving };
          delete saving[key];
          return { saving };
        });
      }
    };

    return {
      view: null,
      loaded: false,
      errors: {},
      saving: {},
      notices: {},
      apply(view) {
        rev.bump();
        set((s) => ({ view, loaded: true, notices: standing(s.notices, noticed, view) }));
      },
      async load() {
        try {
          await rev.guard(
            () => ctx.bridge.getSettings(),
            (view) => set({ view, loaded: true }),
          );
        } catch (err) {
          reportLoadError(ctx, 'settings', err, 'Could not load settings');
        }
      },
      async saveText(key, text) {
        const s = settingOf(get().view, key);
        if (!s) return fail(key, 'is not a known setting');
        const parsed = parseSettingText(s, text);
        if (!parsed.ok) return fail(key, parsed.message);
        return get().save(key, parsed.value);
      },
      async save(key, value) {
        const s = settingOf(get().view, key);
        if (!s) return fail(key, 'is not a known setting');
        if (value === null) return get().reset(key);
        const checked = checkSettingValue(key, value);
        if (!checked.ok) return fail(key, checked.message);
        const cross = crossFieldError(key, checked.value, flatValues(get().view));
        if (cross) return fail(key, cross);
        if (s.source === 'cli') return fail(key, commandLineMessage(s.cliFlag));
        return send(key, checked.value, (r) => {
          const adj = r.adjusted.find((a) => a.key === key);
          const after = settingOf(r, key);
          if (after?.source === 'env') return 'Saved; the environment variable still wins while it is set';
          return adj ? `Saved as ${String(adj.to)} (the nearest value in range)` : 'Saved';
        });
      },
      async reset(key) {
        const s = settingOf(get().view, key);
        if (!s) return fail(key, 'is not a known setting');
        if (s.source === 'cli') return fail(key, commandLineMessage(s.cliFlag));
        return send(key, null, (r) => {
          const after = settingOf(r, key);
          return after?.source === 'env' ? 'Saved value removed; the environment value applies' : 'Reset to default';
        });
      },
      clearError(key) {
        noticed.delete(key);
        set((s) => ({ errors: without(s.errors, key), notices: without(s.notices, key) }));
      },
    };
  });
}

export type SettingsStore = ReturnType<typeof createSettingsStore>;
