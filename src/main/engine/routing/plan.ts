// A request's route: the targets that may serve the requested model, in the order to try them,
// and the connections that would have served it but are disabled. Model resolution decides who
// may serve; the selector decides who goes first.
import type { WireProtocol } from '../../../shared/model';
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

export function planRoute(deps: PlanDeps, wire: WireProtocol, model: string): RoutePlan {
  const resolution = resolveTargets(deps.connections(), model, wire);
  if (resolution.targets.length === 0) return { order: [], disabled: resolution.disabled, hint: resolution.hint };
  const s = deps.strategy();
  const order = deps.selector.order(`${wire}|${model}`, resolution.targets, s.name, s.latencyWeight);
  return { order, disabled: resolution.disabled, hint: null };
}
