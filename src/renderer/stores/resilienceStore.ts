// Resilience state as pushed by the engine (provider breakers, connection cooldowns with terminal
// states, model lockouts) plus what the Cooldown manager does with it: select connections, clear
// one / a selection / a provider / everything, re-enable a locked model, reset breakers.
import { createStore } from 'zustand/vanilla';
import type { ResilienceSnapshot } from '../../shared/contract';
import type { BreakerView, ClearCooldownsResult, CooldownEntry, ModelLockoutView } from '../../shared/model';
import { formatCount } from '../lib/format';
import { reportError, reportLoadError, Revision, type StoreContext } from './context';

export type ClearTarget = { connectionIds: string[] } | { all: true; provider?: string };

export interface ResilienceState {
  breakers: BreakerView[];
  cooldowns: CooldownEntry[];
  lockouts: ModelLockoutView[];
  /** Engine time of the last snapshot. */
  snapshotAt: number | null;
  loaded: boolean;
  /** Connection ids ticked in the Cooldown manager. */
  selected: string[];
  /** A clear or reset is in flight. */
  busy: boolean;
  lastClear: ClearCooldownsResult | null;
  applySnapshot(s: ResilienceSnapshot): void;
  load(): Promise<void>;
  toggleSelected(id: string): void;
  setSelected(ids: string[]): void;
  clear(target: ClearTarget): Promise<ClearCooldownsResult | null>;
  clearLockout(l: ModelLockoutView): Promise<boolean>;
  resetBreakers(provider?: string): Promise<string[] | null>;
}

/** One sentence for a clear result, e.g. "Cleared 2 connections and 1 model lockout; 1 terminal state left as is". */
export function describeClear(r: ClearCooldownsResult): string {
  const parts: string[] = [];
  if (r.cleared.length) parts.push(`Cleared ${formatCount(r.cleared.length, 'connection')}`);
  if (r.lockoutsCleared) parts.push(`${parts.length ? 'and ' : 'Cleared '}${formatCount(r.lockoutsCleared, 'model lockout')}`);
  let s = parts.length ? parts.join(' ') : 'Nothing to clear';
  if (r.skippedTerminal.length) {
    s += `; ${formatCount(r.skippedTerminal.length, 'terminal state')} left as is (terminal states are never cleared here)`;
  }
  return s;
}

export function createResilienceStore(ctx: StoreContext) {
  const rev = new Revision();
  return createStore<ResilienceState>()((set, get) => {
    const applyUnguarded = (s: ResilienceSnapshot) =>
      set((st) => {
        const ids = new Set(s.cooldowns.connections.map((c) => c.connectionId));
        const selected = st.selected.filter((id) => ids.has(id));
        return {
          breakers: s.breakers,
          cooldowns: s.cooldowns.connections,
          lockouts: s.lockouts,
          snapshotAt: s.now,
          loaded: true,
          selected: selected.length === st.selected.length ? st.selected : selected,
        };
      });

    const refresh = async () => {
      try {
        await get().load();
      } catch {
        // the push will bring it
      }
    };

    /** One page action (clear, re-enable, reset): the page's buttons wait while it runs; a failure is a toast and gives `failed`. */
    const whileBusy = async <T>(doing: string, failed: T, call: () => Promise<T>): Promise<T> => {
      set({ busy: true });
      try {
        return await call();
      } catch (err) {
        reportError(ctx, err, doing);
        return failed;
      } finally {
        set({ busy: false });
      }
    };

    return {
      breakers: [],
      cooldowns: [],
      lockouts: [],
      snapshotAt: null,
      loaded: false,
      selected: [],
      busy: false,
      lastClear: null,
      applySnapshot(s) {
        rev.bump();
        applyUnguarded(s);
      },
      async load() {
        try {
          await rev.guard(
            async () => {
              const [breakers, cooldowns, models] = await Promise.all([
                ctx.bridge.listBreakers(),
                ctx.bridge.listCooldowns({}),
                ctx.bridge.listModelCooldowns(),
              ]);
              return { now: cooldowns.now, breakers, cooldowns, lockouts: models.lockouts } satisfies ResilienceSnapshot;
            },
            applyUnguarded,
          );
        } catch (err) {
          reportLoadError(ctx, 'resilience', err, 'Could not load resilience state');
        }
      },
      toggleSelected(id) {
        set((s) => ({ selected: s.selected.includes(id) ? s.selected.filter((x) => x !== id) : [...s.selected, id] }));
      },
      setSelected(ids) {
        set({ selected: [...new Set(ids)] });
      },
      async clear(target) {
        if ('connectionIds' in target && target.connectionIds.length === 0) return null;
        return whileBusy('Could not clear cooldowns', null, async () => {
          const r = await ctx.bridge.clearCooldowns(target);
          const done = new Set([...r.cleared, ...r.unchanged]);
          set((s) => ({ lastClear: r, selected: s.selected.filter((id) => !done.has(id)) }));
          ctx.toasts.getState().push(r.cleared.length || r.lockoutsCleared ? 'success' : 'info', describeClear(r));
          await refresh();
          return r;
        });
      },
      clearLockout(l) {
        return whileBusy(`Could not re-enable ${l.model}`, false, async () => {
          const { removed } = await ctx.bridge.clearModelCooldown({ provider: l.provider, connection: l.connectionId, model: l.model });
          ctx.toasts
            .getState()
            .push(removed ? 'success' : 'info', removed ? `Re-enabled ${l.model} on ${l.connectionName}` : `${l.model} was no longer locked`);
          await refresh();
          return removed > 0;
        });
      },
      resetBreakers(provider) {
        return whileBusy<string[] | null>('Could not reset the breaker', null, async () => {
          const { providers } = await ctx.bridge.resetResilience(provider ? { provider } : {});
          ctx.toasts
            .getState()
            .push('success', provider ? `Reset the ${provider} breaker` : `Reset ${formatCount(providers.length, 'provider breaker')}`);
          await refresh();
          return providers;
        });
      },
    };
  });
}

export type ResilienceStore = ReturnType<typeof createResilienceStore>;
