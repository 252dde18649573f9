// A request's route: the targets that may serve the requested model, in the order to try them,
// and what could not be used. Resolution order of the request's `model`: a combo (its exact name,
// `combo/<name>`, or a model-pattern mapping), then `provider/model`, then a bare model. A combo
// route is expanded and ranked by its strategy (combos/comboRouter.ts); otherwise model
// resolution decides who may serve and the selector who goes first.
import type { ComboOptions, ComboStrategy } from '../../../shared/model';
import type { ApiShape } from '../streams/shape';
import type { ConnectionRecord } from '../store/connectionsRepo';
import type { ComboRouter, RequestShape, UnusableTarget } from './combos/comboRouter';
import { resolveTargets } from './resolve';
import { wireOfShape } from './upstreamShape';
import type { SelectionStrategy, TargetSelector } from './selector';
import type { Target } from './target';

/** The combo behind a plan: what the walk, the wait policy and the request log need of it. */
export interface ComboPlan {
  id: string;
  name: string;
  strategy: ComboStrategy;
  via: 'name' | 'prefix' | 'mapping';
  pattern: string | null;
  options: ComboOptions;
  /** Combo targets without a usable connection, with why. */
  unusable: UnusableTarget[];
}

export interface RoutePlan {
  /** Every target, in the order to try them. Empty when nothing serves the model. */
  order: Target[];
  disabled: ConnectionRecord[];
  /** Why nothing matched, for the error message. */
  hint: string | null;
  /** Set when a combo routes the request. */
  combo: ComboPlan | null;
}

export interface PlanDeps {
  connections(): readonly ConnectionRecord[];
  selector: TargetSelector;
  strategy(): { name: SelectionStrategy; latencyWeight: number };
  combos?: ComboRouter;
}

/**
 * `inbound` is the request's API shape (routing/upstreamShape.ts `inboundShapeOf`). A combo's
 * targets may speak either protocol: translation (proxy/translation.ts) carries the request.
 */
export function planRoute(deps: PlanDeps, inbound: ApiShape, model: string, request?: RequestShape): RoutePlan {
  const wire = wireOfShape(inbound);
  const combo = deps.combos?.plan(wire, model, request ?? { json: {}, bodyBytes: 0 });
  if (combo) {
    const c = combo.match.combo;
    return {
      order: combo.order,
      disabled: [],
      hint: combo.order.length ? null : `combo "${c.name}" has no target that can serve this request`,
      combo: { id: c.id, name: c.name, strategy: c.strategy, via: combo.match.via, pattern: combo.match.pattern, options: c.options, unusable: combo.unusable },
    };
  }
  const resolution = resolveTargets(deps.connections(), model, inbound);
  if (resolution.targets.length === 0) return { order: [], disabled: resolution.disabled, hint: resolution.hint, combo: null };
  const s = deps.strategy();
  const order = deps.selector.order(`${inbound}|${model}`, resolution.targets, s.name, s.latencyWeight);
  return { order, disabled: resolution.disabled, hint: null, combo: null };
}
