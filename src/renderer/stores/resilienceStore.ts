// Resilience state as pushed by the engine (provider breakers, connection cooldowns with terminal
// states, model lockouts) plus what the Cooldown manager does with it: select connections, clear
// one / a selection / a provider / everything, re-enable a locked model, reset breakers.
import { createStore } from 'zustand/vanilla';
import type { ResilienceSnapshot } from '../../shared/contract';
import type { HealthSnapshot, RemainingHold } from '../../shared/health';
import type { BreakerView, ClearCooldownsResult, CooldownEntry, ModelLockoutView } from '../../shared/model';
import { formatCount, formatRemaining } from '../lib/format';
import { reportError, reportLoadError, Revision, type StoreContext } from './context';

export type ClearTarget = { connectionIds: string[] } | { all: true; provider?: string };

export interface ResilienceState {
  breakers: BreakerView[];
  cooldowns: CooldownEntry[];
  lockouts: ModelLockoutView[];
  /** The engine's health model (null until the first snapshot). */
  health: HealthSnapshot | null;
  /** Engine time minus local time, from the last snapshot (for "lifts in" in toasts). */
  offsetMs: number;
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
  /** Re-enable one model on a connection: its lockout and its own queue pause. */
  clearLockout(l: Pick<ModelLockoutView, 'provider' | 'connectionId' | 'connectionName' | 'model'>): Promise<boolean>;
  resetBreakers(provider?: string): Promise<string[] | null>;
}

/** One sentence for a clear result, e.g. "Cleared 2 connections and 1 model lockout; 1 terminal state left as is". */
export function describeClear(r: ClearCooldownsResult, now?: number): string {
  const parts: string[] = [];
  if (r.cleared.length) parts.push(`Cleared ${formatCount(r.cleared.length, 'connection')}`);
  if (r.lockoutsCleared) parts.push(`${parts.length ? 'and ' : 'Cleared '}${formatCount(r.lockoutsCleared, 'model lockout')}`);
  if (r.pausesLifted) parts.push(`${parts.length ? 'and lifted ' : 'Lifted '}${formatCount(r.pausesLifted, 'queue pause')}`);
  let s = parts.length ? parts.join(' ') : 'Nothing to clear';
  if (r.skippedTerminal.length) {
    s += `; ${formatCount(r.skippedTerminal.length, 'terminal state')} left as is (terminal states are never cleared here)`;
  }
  return s + describeRemaining(r.remaining, now ?? 0);
}

/** "; still held: the openai breaker is open (lifts in 42s)" — what a clear could not lift, or ''. */
export function describeRemaining(remaining: readonly RemainingHold[] | undefined, now: number): string {
  if (!remaining || remaining.length === 0) return '';
  const parts = remaining.slice(0, 3).map((r) => {
    const when = r.until === null ? 'until someone acts' : `lifts in ${formatRemaining(Math.max(0, r.until - now))}`;
    const who = r.model ? `${r.model} on ${r.connectionName}` : r.connectionName;
    return `${who}: ${r.reason.replace(/[.;]\s*$/, '')} (${when})`;
  });
  const more = remaining.length > 3 ? ` and ${remaining.length - 3} more` : '';
  return `. Still held: ${parts.join('; ')}${more}`;
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
          health: s.health ?? null,
          offsetMs: s.now - ctx.now(),
          snapshotAt: s.now,
          loaded: true,
          selected: selected.length === st.selected.length ? st.selected : selected,
        };
      });

    const serverNow = () => ctx.now() + get().offsetMs;

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
      health: null,
      offsetMs: 0,
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
              const [breakers, cooldowns, models, health] = await Promise.all([
                ctx.bridge.listBreakers(),
                ctx.bridge.listCooldowns({}),
                ctx.bridge.listModelCooldowns(),
                ctx.bridge.getConnectionHealth(),
              ]);
              return { now: cooldowns.now, breakers, cooldowns, lockouts: models.lockouts, health } satisfies ResilienceSnapshot;
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
          const kind = r.remaining?.length ? 'info' : r.cleared.length || r.lockoutsCleared || r.pausesLifted ? 'success' : 'info';
          ctx.toasts.getState().push(kind, describeClear(r, serverNow()));
          await refresh();
          return r;
        });
      },
      clearLockout(l) {
        return whileBusy(`Could not re-enable ${l.model}`, false, async () => {
          const r = await ctx.bridge.clearModelCooldown({ provider: l.provider, connection: l.connectionId, model: l.model });
          const lifted = r.removed + (r.pausesLifted ?? 0);
          const rest = describeRemaining(r.remaining, serverNow());
          const text = lifted ? `Re-enabled ${l.model} on ${l.connectionName}` : `${l.model} was no longer held on ${l.connectionName}`;
          ctx.toasts.getState().push(rest ? 'info' : lifted ? 'success' : 'info', text + rest);
          await refresh();
          return lifted > 0;
        });
      },
      resetBreakers(provider) {
        return whileBusy<string[] | null>('Could not reset the breaker', null, async () => {
          const { providers, remaining } = await ctx.bridge.resetResilience(provider ? { provider } : {});
          const rest = describeRemaining(remaining, serverNow());
          ctx.toasts
            .getState()
            .push(rest ? 'info' : 'success', (provider ? `Reset the ${provider} breaker` : `Reset ${formatCount(providers.length, 'provider breaker')}`) + rest);
          await refresh();
          return providers;
        });
      },
    };
  });
}

export type ResilienceStore = ReturnType<typeof createResilienceStore>;
