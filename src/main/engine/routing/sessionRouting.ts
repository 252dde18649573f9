// The pipeline's one port for session affinity and exclusive leases: right after planning, a
// request that presents a lease is checked and its plan narrowed to its lease (leases/), and any
// other request with a session id gets its pinned target first (affinity/). A lease decides
// alone: affinity neither reorders nor re-pins a leased request. Right before each dispatch, the
// lease barrier; around each attempt, an interceptor that marks why the target was tried first
// and tells both modules which target served.
import type { AffinityTrace, LeaseTrace } from '../../../shared/model';
import type { AttemptContext, AttemptInterceptor, AttemptOutcome, Dispatch } from '../proxy/attempt';
import type { ProxyError } from '../proxy/errors';
import type { InboundCall } from '../proxy/inbound';
import type { SessionAffinity } from './affinity/sessionAffinity';
import type { BarrierVerdict, LeaseRouted, LeaseRouting, SkipNotes } from './leases/leaseRouting';
import type { RoutePlan } from './plan';
import type { Target } from './target';

/** What the request record takes from session routing. */
export interface RouteNotes extends SkipNotes {
  affinity: AffinityTrace | null;
  lease: LeaseTrace | null;
}

export type { BarrierVerdict };

export class SessionRouting {
  constructor(
    readonly affinity: SessionAffinity,
    readonly leases: LeaseRouting,
  ) {}

  /**
   * Reorders or narrows `plan.order` in place; a non-null answer is the request's refusal. A
   * promise only for a leased request in team mode whose lease is read from the team first.
   */
  route(call: InboundCall, plan: RoutePlan, notes: RouteNotes, now: number): ProxyError | null | Promise<ProxyError | null> {
    const leased = this.leases.route(call, plan, notes, now);
    if (leased instanceof Promise) return leased.then((l) => this.routed(l, call, plan, notes, now));
    return this.routed(leased, call, plan, notes, now);
  }

  private routed(leased: LeaseRouted, call: InboundCall, plan: RoutePlan, notes: RouteNotes, now: number): ProxyError | null {
    if (leased) {
      notes.lease = leased.trace;
      return leased.refused;
    }
    notes.affinity = this.affinity.route(call, plan, now);
    return null;
  }

  /**
   * The final dispatch barrier (R-LS-07) for a target about to be called; null = go. In team mode a
   * leased request's barrier is checked against the team's lease book (a promise).
   */
  barrier(call: InboundCall, target: Target, now: number): BarrierVerdict | null | Promise<BarrierVerdict | null> {
    return this.leases.barrier(call, target, now);
  }

  interceptor(): AttemptInterceptor {
    return (next) => {
      const routed: Dispatch = (ctx) => this.note(ctx, next);
      // A request with neither a session nor a lease has nothing to record: straight through.
      return (ctx) => (this.leases.leased(ctx.call) || this.affinity.tracks(ctx.call) ? routed(ctx) : next(ctx));
    };
  }

  private async note(ctx: AttemptContext, next: Dispatch): Promise<AttemptOutcome> {
    const leased = this.leases.leased(ctx.call);
    if (leased) ctx.entry.via = 'lease';
    else if (this.affinity.followsPin(ctx.call, ctx.target)) ctx.entry.via = 'pin';
    const outcome = await next(ctx);
    if (outcome.kind === 'ready') {
      if (leased) this.leases.served(ctx.call, ctx.target);
      else this.affinity.served(ctx.call, ctx.target);
    }
    return outcome;
  }
}
