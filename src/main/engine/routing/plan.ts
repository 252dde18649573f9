// A request's route: the targets that may serve the requested model, in the order to try them,
// and the connections that would have served it but are disabled. Model resolution decides who
// may serve; the selector decides who goes first.
import type { ApiShape } from '../streams/shape';
import type { ConnectionRecord } from '../store/connectionsRepo';
import { resolveTargets } from './resolve';
import type { SelectionStrategy, TargetSelector } from './selector';
import type { Target } from './target';

export interface RoutePlan {
  /** Every target, in the order to try them. Empty when nothing serves the model. */
  order: Target[];
  disabled: ConnectionRecord[];
  /** Why nothing matched, for the error message. */
  hint: string | null;
}

export interface PlanDeps {
  connections(): readonly ConnectionRecord[];
  selector: TargetSelector;
  strategy(): { name: SelectionStrategy; latencyWeight: number };
}

/** `inbound` is the request's API shape (routing/upstreamShape.ts `inboundShapeOf`). */
export function planRoute(deps: PlanDeps, inbound: ApiShape, model: string): RoutePlan {
  const resolution = resolveTargets(deps.connections(), model, inbound);
  if (resolution.targets.length === 0) return { order: [], disabled: resolution.disabled, hint: resolution.hint };
  const s = deps.strategy();
  const order = deps.selector.order(`${inbound}|${model}`, resolution.targets, s.name, s.latencyWeight);
  return { order, disabled: resolution.disabled, hint: null };
}
