// Settings: every value with its source, pushed by the engine, and saving one setting at a time.
// Input is checked with the shared rules first; a bad value stays in its field with the reason and
// nothing is sent. A saved value can be removed (patch null), which falls back to env or default.
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
  /** Per setting key: what the last save did ("Saved", "Reset to default"). */
  notices: Record<string, string>;
  apply(view: SettingsView): void;
  load(): Promise<void>;
  saveText(key: string, text: string): Promise<boolean>;
  save(key: string, value: unknown): Promise<boolean>;
  reset(key: string): Promise<boolean>;
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

export function createSettingsStore(ctx: StoreContext) {
  const rev = new Revision();
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
        set((s) => ({
          view: { settings: r.settings, values: r.values },
          errors: without(s.errors, key),
          notices: { ...s.notices, [key]: doneNotice(r) },
        }));
        return true;
      } catch (err) {
        const e = describeError(err);
        if (e.unauthorized) {
          reportError(ctx, err);
          return false;
        }
        return fail(e.field && settingOf(get().view, e.field) ? e.field : key, messageForField(e));
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
        set({ view, loaded: true });
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
        return send(key, checked.value, (r) => {
          const adj = r.adjusted.find((a) => a.key === key);
          return adj ? `Saved as ${String(adj.to)} (the nearest value in range)` : 'Saved';
        });
      },
      async reset(key) {
        const s = settingOf(get().view, key);
        if (!s) return fail(key, 'is not a known setting');
        return send(key, null, (r) => {
          const after = settingOf(r, key);
          return after?.source === 'env' ? 'Saved value removed; the environment value applies' : 'Reset to default';
        });
      },
      clearError(key) {
        set((s) => ({ errors: without(s.errors, key), notices: without(s.notices, key) }));
      },
    };
  });
}

export type SettingsStore = ReturnType<typeof createSettingsStore>;
