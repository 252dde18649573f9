// Combos and model mappings: the pushed list, and every change a user makes (create, edit, delete,
// test; add and remove mappings). Form saves throw, so the form can put the engine's error next to
// the field it names; warnings from the engine (a name that is also a model id) become toasts.
import { createStore } from 'zustand/vanilla';
import type { AgentRouteInput, ComboCreateInput, ModelMappingInput } from '../../shared/contract';
import type { ComboTestResult, ComboView, CombosSnapshot, ModelMappingView } from '../../shared/model';
import { describeError } from '../lib/errors';
import { pendingActions, reportLoadError, rethrow, Revision, type StoreContext } from './context';

export interface ComboTestState {
  running: boolean;
  result: ComboTestResult | null;
}

export interface CombosState {
  list: ComboView[];
  mappings: ModelMappingView[];
  loaded: boolean;
  tests: Record<string, ComboTestState>;
  pending: Record<string, boolean>;
  apply(s: CombosSnapshot): void;
  load(): Promise<void>;
  create(input: ComboCreateInput): Promise<ComboView>;
  /** Replaces a combo with the form's content (PUT). */
  save(id: string, input: ComboCreateInput): Promise<ComboView>;
  remove(id: string): Promise<boolean>;
  test(id: string): Promise<ComboTestResult | null>;
  addMapping(input: ModelMappingInput): Promise<ModelMappingView>;
  removeMapping(id: string): Promise<boolean>;
  /** "Route model ids": the pattern's one-target combo and its mapping, added or re-pointed. */
  routeAgent(input: AgentRouteInput): Promise<ModelMappingView>;
}

function upsert(list: ComboView[], c: ComboView): ComboView[] {
  const i = list.findIndex((x) => x.id === c.id);
  return i === -1 ? [...list, c] : list.map((x) => (x.id === c.id ? c : x));
}

export function createCombosStore(ctx: StoreContext) {
  const rev = new Revision();
  return createStore<CombosState>()((set, get) => {
    const { run } = pendingActions(ctx, set);
    const warn = (warnings: string[]) => warnings.forEach((w) => ctx.toasts.getState().push('info', w));
    return {
      list: [],
      mappings: [],
      loaded: false,
      tests: {},
      pending: {},
      apply(s) {
        rev.bump();
        set({ list: s.combos, mappings: s.mappings, loaded: true });
      },
      async load() {
        try {
          await rev.guard(
            async () => {
              const [list, mappings] = await Promise.all([ctx.bridge.listCombos(), ctx.bridge.listModelMappings()]);
              return { list, mappings };
            },
            (v) => set({ ...v, loaded: true }),
          );
        } catch (err) {
          reportLoadError(ctx, 'combos', err, 'Could not load combos');
        }
      },
      async create(input) {
        const r = await rethrow(ctx, () => ctx.bridge.createCombo(input));
        set((s) => ({ list: upsert(s.list, r.combo) }));
        ctx.toasts.getState().push('success', `Created combo ${r.combo.name}`);
        warn(r.warnings);
        return r.combo;
      },
      async save(id, input) {
        const r = await rethrow(ctx, () => ctx.bridge.replaceCombo({ id, patch: input }));
        set((s) => ({ list: upsert(s.list, r.combo) }));
        ctx.toasts.getState().push('success', `Saved combo ${r.combo.name}`);
        warn(r.warnings);
        return r.combo;
      },
      remove(id) {
        const name = get().list.find((c) => c.id === id)?.name ?? 'combo';
        return run(id, `Could not delete ${name}`, async () => {
          const r = await ctx.bridge.deleteCombo({ id });
          set((s) => ({ list: s.list.filter((c) => c.id !== id), mappings: s.mappings.filter((m) => m.comboId !== id) }));
          ctx.toasts.getState().push('success', `Deleted combo ${name}${r.mappingsRemoved ? ` and ${r.mappingsRemoved} mapping${r.mappingsRemoved > 1 ? 's' : ''}` : ''}`);
        });
      },
      async test(id) {
        set((s) => ({ tests: { ...s.tests, [id]: { running: true, result: s.tests[id]?.result ?? null } } }));
        try {
          const result = await ctx.bridge.testCombo({ id });
          set((s) => ({ tests: { ...s.tests, [id]: { running: false, result } } }));
          return result;
        } catch (err) {
          const e = describeError(err);
          if (e.unauthorized) ctx.onUnauthorized();
          const result: ComboTestResult = { ok: false, status: 0, connectionId: null, connectionName: null, servedModel: null, latencyMs: 0, requestId: null, message: e.message };
          set((s) => ({ tests: { ...s.tests, [id]: { running: false, result } } }));
          return result;
        }
      },
      async addMapping(input) {
        const m = await rethrow(ctx, () => ctx.bridge.createModelMapping(input));
        set((s) => ({ mappings: [...s.mappings.filter((x) => x.id !== m.id), m] }));
        ctx.toasts.getState().push('success', `Models matching ${m.pattern} now go to ${m.comboName}`);
        return m;
      },
      async routeAgent(input) {
        const r = await rethrow(ctx, () => ctx.bridge.routeAgentModels(input));
        set((s) => ({ list: upsert(s.list, r.combo), mappings: [...s.mappings.filter((x) => x.id !== r.mapping.id), r.mapping] }));
        warn(r.warnings);
        ctx.toasts.getState().push('success', `Models matching ${r.mapping.pattern} now go to ${input.model}`);
        return r.mapping;
      },
      removeMapping(id) {
        return run(id, 'Could not delete the mapping', async () => {
          await ctx.bridge.deleteModelMapping({ id });
          set((s) => ({ mappings: s.mappings.filter((m) => m.id !== id) }));
        });
      },
    };
  });
}

export type CombosStore = ReturnType<typeof createCombosStore>;
