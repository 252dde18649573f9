// What every store gets: the Bridge, the toasts, a local clock (injected so tests control it), a
// hook that reports an unauthorized answer (the token was revoked or mistyped), and the record of
// failed reads a page shows in place of its spinner.
import type { Bridge } from '../../shared/contract';
import { describeError, type UserError } from '../lib/errors';
import type { LoadStatusStore, Topic } from './loadStatus';
import type { ToastStore } from './toastStore';

export interface StoreContext {
  bridge: Bridge;
  toasts: ToastStore;
  loads: LoadStatusStore;
  now: () => number;
  onUnauthorized: () => void;
}

/** Shows a failed call as a toast (prefixed with what was being done) and returns it described. */
export function reportError(ctx: StoreContext, err: unknown, doing?: string): UserError {
  const e = describeError(err);
  if (e.unauthorized) ctx.onUnauthorized();
  ctx.toasts.getState().push('error', doing ? `${doing}: ${e.message}` : e.message);
  return e;
}

/** A topic's read failed: a toast as for any failure, and the error kept for the page to show in place. */
export function reportLoadError(ctx: StoreContext, topic: Topic, err: unknown, doing: string): UserError {
  const e = reportError(ctx, err, doing);
  ctx.loads.getState().fail(topic, e.message);
  return e;
}

/**
 * Pushes and first loads race: a snapshot fetched before a push arrived must not overwrite the
 * push. Each push bumps the topic's revision; a load applies only if no push came in meanwhile.
 */
export class Revision {
  private n = 0;
  bump(): void {
    this.n++;
  }
  /** Runs `load`, then `apply` only when nothing newer arrived while it was in flight. */
  async guard<T>(load: () => Promise<T>, apply: (v: T) => void): Promise<void> {
    const at = this.n;
    const v = await load();
    if (this.n === at) apply(v);
  }
}

/** Runs a call whose error the caller shows in place; an unauthorized answer still signs out. */
export async function rethrow<T>(ctx: StoreContext, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (describeError(err).unauthorized) ctx.onUnauthorized();
    throw err;
  }
}

/** The `pending` map with one id marked (or unmarked) as having an action in flight. */
export function withPending(pending: Record<string, boolean>, id: string, on: boolean): { pending: Record<string, boolean> } {
  const next = { ...pending };
  if (on) next[id] = true;
  else delete next[id];
  return { pending: next };
}

type PendingMap = { pending: Record<string, boolean> };

/**
 * The per-id actions of a store with a `pending` map: `setPending` marks an id, and `run` does one
 * action with its id marked (so that row's controls wait). `run` gives true when the action went
 * through; on a failure it first runs `undo` (an optimistic change rolled back), then shows the
 * failure as a toast prefixed with `doing`, and gives false. `after` runs once the id is free again
 * (a re-read), whatever the outcome.
 */
export function pendingActions(ctx: StoreContext, set: (fn: (s: PendingMap) => PendingMap) => void) {
  const setPending = (id: string, on: boolean) => set((s) => withPending(s.pending, id, on));
  const run = async (id: string, doing: string, call: () => Promise<void>, o: { undo?: () => void; after?: () => Promise<void> } = {}): Promise<boolean> => {
    setPending(id, true);
    try {
      await call();
      return true;
    } catch (err) {
      o.undo?.();
      reportError(ctx, err, doing);
      return false;
    } finally {
      setPending(id, false);
      await o.after?.();
    }
  };
  return { setPending, run };
}
