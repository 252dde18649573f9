// Team mode (issue 26): the link's status, the team settings and configuration sharing, pushed by
// the engine on every change (the `team` event) and read once on start and after the live link comes
// back. The Team page saves through here; a refused save keeps its message for the page to show in
// place. Other pages ask `managedOwner` whether an item is managed by the team (read-only here).
import { createStore } from 'zustand/vanilla';
import type { TeamSettingsPatchInput } from '../../shared/contract';
import type { TeamView } from '../../shared/team';
import { describeError } from '../lib/errors';
import { reportError, reportLoadError, Revision, type StoreContext } from './context';

export type TeamAction = 'settings' | 'role' | 'key' | 'generate' | 'publish';

export interface TeamState {
  view: TeamView | null;
  /** The action in flight, if any (its button waits). */
  busy: TeamAction | null;
  /** The last refused action's message, shown beside its form. */
  errors: Partial<Record<TeamAction, string>>;
  apply(v: TeamView): void;
  load(): Promise<void>;
  save(patch: TeamSettingsPatchInput, action?: TeamAction): Promise<boolean>;
  generateKey(): Promise<boolean>;
  revealKey(): Promise<string | null>;
  publish(): Promise<boolean>;
  clearError(action: TeamAction): void;
}

export type ManagedKind = 'connections' | 'combos' | 'mappings' | 'settings';

/** The publisher's name when this item is managed by the team on this instance (null: it is this instance's own). */
export function managedOwner(view: TeamView | null, kind: ManagedKind, id: string): string | null {
  if (!view?.managed.owner) return null;
  return view.managed[kind].includes(id) ? view.managed.owner : null;
}

export function createTeamStore(ctx: StoreContext) {
  const rev = new Revision();
  return createStore<TeamState>()((set, get) => {
    /** Runs one action; its refusal is kept for the page (and an unauthorized answer still signs out). */
    const act = async (action: TeamAction, call: () => Promise<TeamView>): Promise<boolean> => {
      set((s) => ({ busy: action, errors: { ...s.errors, [action]: undefined } }));
      try {
        const view = await call();
        rev.bump();
        set({ view });
        return true;
      } catch (err) {
        const e = describeError(err);
        if (e.unauthorized) ctx.onUnauthorized();
        set((s) => ({ errors: { ...s.errors, [action]: e.message } }));
        return false;
      } finally {
        set({ busy: null });
      }
    };
    return {
      view: null,
      busy: null,
      errors: {},
      apply(view) {
        rev.bump();
        set({ view });
      },
      async load() {
        try {
          await rev.guard(
            () => ctx.bridge.getTeam(),
            (view) => set({ view }),
          );
        } catch (err) {
          reportLoadError(ctx, 'team', err, 'Could not load the team settings');
        }
      },
      save: (patch, action = 'settings') => act(action, () => ctx.bridge.updateTeamSettings({ patch })),
      generateKey: () => act('generate', () => ctx.bridge.generateTeamKey()),
      publish: () => act('publish', () => ctx.bridge.publishTeamConfig()),
      async revealKey() {
        try {
          return (await ctx.bridge.revealTeamKey()).key;
        } catch (err) {
          reportError(ctx, err, 'Could not copy the team key');
          return null;
        }
      },
      clearError(action) {
        if (get().errors[action] === undefined) return;
        set((s) => ({ errors: { ...s.errors, [action]: undefined } }));
      },
    };
  });
}

export type TeamStore = ReturnType<typeof createTeamStore>;
