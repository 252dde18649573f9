// Exclusive leases in routing. A request that presents a lease (owner + generation headers) is
// checked before anything else happens (R-LS-06: a stale generation never reaches a provider),
// then its plan is narrowed to the key's lease pool (allowedConnections) without the connections
// other leases hold, with the leased connection first. When the pool still has eligible
// connections but each of them is someone else's, the answer is 429 lease-capacity-unavailable
// (R-LS-11); when nothing in it is eligible at all, the walk answers as routing always does
// (R-LS-12). Right before each dispatch the barrier (R-LS-07) checks the lease again — this key,
// this generation — against the connection about to be called, moving the lease there (same
// generation) when the leased one was not eligible and this one is free (R-LS-08/09).
// Leases are independent of admission (R-LS-13): nothing here takes or gives back a permit.
// In team mode (issue 26) the barrier asks the team (a promise), and a lease this instance's copy
// cannot vouch for (unknown owner, another generation) is read from the team before routing.
import type { LeaseTrace } from '../../../../shared/model';
import type { ClientKeyRecord } from '../../store/clientKeysRepo';
import type { ProxyError } from '../../proxy/errors';
import type { InboundCall } from '../../proxy/inbound';
import type { Exclusion } from '../../resilience/port';
import type { RoutePlan } from '../plan';
import type { Target } from '../target';
import type { LeaseBook, LeaseLedger, LeaseOutcome } from './leaseBook';
import { leaseClaimOf, type LeaseClaim } from './leaseClaim';
import { capacityError, noAllowedConnections, refusalError, scopeMissing } from './leaseErrors';
import type { Lease } from './leaseMachine';

export interface LeaseRoutingDeps {
  book: LeaseBook;
  /** Who decides the barrier's `use` (default: the book; in team mode, the team). */
  ledger?: LeaseLedger;
  clientKey(id: string | null): ClientKeyRecord | undefined;
  exclusion(target: Target, now: number): Exclusion | null;
  connectionName(id: string): string | null;
}

/** What routing records about a request (the request log's skips). */
export interface SkipNotes {
  skip(target: Target, ex: Exclusion): void;
}

export type BarrierVerdict = { skip: Exclusion } | { refuse: ProxyError };

export type LeaseRouted = { trace: LeaseTrace; refused: ProxyError | null } | null;

interface RequestLease {
  claim: LeaseClaim;
  trace: LeaseTrace;
}

export const hasLeaseScope = (k: ClientKeyRecord | undefined): boolean => !!k && k.scopes.includes('lease:exclusive');

export class LeaseRouting {
  private readonly requests = new WeakMap<InboundCall, RequestLease>();
  private readonly ledger: LeaseLedger;

  constructor(private readonly d: LeaseRoutingDeps) {
    this.ledger = d.ledger ?? d.book;
  }

  /** The lease trace of a request that presented one. */
  traceOf(call: InboundCall): LeaseTrace | null {
    return this.requests.get(call)?.trace ?? null;
  }

  /**
   * Right after planning. null with no trace: the request presents no lease. Otherwise the
   * request's lease trace is returned and the plan narrowed, or the refusal to answer with.
   */
  route(call: InboundCall, plan: RoutePlan, notes: SkipNotes, now: number): LeaseRouted | Promise<LeaseRouted> {
    const claim = leaseClaimOf(call.req.headers);
    if (claim === null) return null;
    if ('ownerHash' in claim && this.ledger.refresh) {
      // Team mode: this copy may be behind the team (acquired or renewed on another instance a
      // moment ago); when it cannot vouch for the lease, it is read from the team first.
      const key = this.d.clientKey(call.clientKeyId);
      const lease = this.d.book.ofOwner(claim.ownerHash, now);
      if (hasLeaseScope(key) && (!lease || lease.generation !== claim.generation || lease.clientKeyId !== key!.id)) {
        const read = this.ledger.refresh(claim.ownerHash);
        if (read) return read.then(() => this.decide(call, claim, plan, notes, now));
      }
    }
    return this.decide(call, claim, plan, notes, now);
  }

  private decide(call: InboundCall, claim: LeaseClaim | ProxyError, plan: RoutePlan, notes: SkipNotes, now: number): LeaseRouted {
    const trace: LeaseTrace = { leaseId: null, generation: null, connectionId: null, connectionName: null, result: 'refused', code: null };
    const refuse = (e: ProxyError) => {
      trace.code = e.code;
      return { trace, refused: e };
    };
    if (!('ownerHash' in claim)) return refuse(claim);
    trace.generation = claim.generation;
    const key = this.d.clientKey(call.clientKeyId);
    if (!hasLeaseScope(key)) return refuse(scopeMissing());
    if (key!.allowedConnections.length === 0) return refuse(noAllowedConnections());
    const lease = this.d.book.ofOwner(claim.ownerHash, now);
    if (!lease) return refuse(refusalError('lease_not_found'));
    trace.leaseId = lease.id;
    trace.connectionId = lease.connectionId;
    trace.connectionName = this.d.connectionName(lease.connectionId);
    if (lease.clientKeyId !== key!.id) return refuse(refusalError('lease_key_mismatch'));
    if (lease.generation !== claim.generation) return refuse(refusalError('lease_generation_stale'));

    const allowed = new Set(key!.allowedConnections);
    const own: Target[] = [];
    const free: Target[] = [];
    const taken: { t: Target; holder: Lease }[] = [];
    for (const t of plan.order) {
      if (!allowed.has(t.conn.id)) {
        notes.skip(t, { reason: 'outside_lease_pool', until: null, detail: `${t.conn.name} is not in this key's allowed connections` });
        continue;
      }
      const holder: Lease | null = t.conn.id === lease.connectionId ? lease : this.d.book.holderOf(t.conn.id, now);
      if (holder === lease) own.push(t);
      else if (holder) taken.push({ t, holder });
      else free.push(t);
    }
    const eligible = (t: Target) => this.d.exclusion(t, now) === null;
    const takenEligible = taken.filter((x) => eligible(x.t));
    if (takenEligible.length > 0 && ![...own, ...free].some(eligible)) {
      for (const x of taken) notes.skip(x.t, leasedElsewhere(x.holder));
      const nearest = Math.min(...takenEligible.map((x) => x.holder.expiresAt));
      return refuse(
        capacityError(nearest, now, "every eligible connection in this key's lease pool is held by another session's exclusive lease", {
          leased: takenEligible.map((x) => ({ connectionId: x.t.conn.id, connectionName: x.t.conn.name, expiresAt: new Date(x.holder.expiresAt).toISOString() })),
        }),
      );
    }
    for (const x of taken) notes.skip(x.t, leasedElsewhere(x.holder));
    plan.order.splice(0, plan.order.length, ...own, ...free);
    if (plan.order.length === 0) plan.hint = "no connection in this key's lease pool (allowed connections) serves it";
    trace.result = 'unserved';
    this.requests.set(call, { claim, trace });
    return { trace, refused: null };
  }

  /** The final dispatch barrier for a target that passed its eligibility checks; null = go (a promise in team mode). */
  barrier(call: InboundCall, target: Target, now: number): BarrierVerdict | null | Promise<BarrierVerdict | null> {
    const rl = this.requests.get(call);
    if (!rl) return null;
    const key = this.d.clientKey(call.clientKeyId);
    const fail = (e: ProxyError): BarrierVerdict => {
      rl.trace.result = 'refused';
      rl.trace.code = e.code;
      return { refuse: e };
    };
    if (!hasLeaseScope(key) || key!.revokedAt !== null) return fail(scopeMissing());
    if (!key!.allowedConnections.includes(target.conn.id)) {
      return { skip: { reason: 'outside_lease_pool', until: null, detail: `${target.conn.name} is not in this key's allowed connections` } };
    }
    const r = this.ledger.use(rl.claim.ownerHash, key!.id, rl.claim.generation, target.conn.id, now);
    return r instanceof Promise ? r.then((x) => this.verdict(rl, target, x, fail, now)) : this.verdict(rl, target, r, fail, now);
  }

  private verdict(rl: RequestLease, target: Target, r: LeaseOutcome, fail: (e: ProxyError) => BarrierVerdict, now: number): BarrierVerdict | null {
    if (r.ok) {
      if (r.moved) rl.trace.movedToConnectionId = target.conn.id;
      return null;
    }
    if (r.refused === 'lease_connection_taken') {
      const holder = this.d.book.holderOf(target.conn.id, now);
      return { skip: holder ? leasedElsewhere(holder) : { reason: 'leased_elsewhere', until: null, detail: null } };
    }
    return fail(refusalError(r.refused));
  }

  /** A response from `target` is ready: the lease served on its own connection, or moved there. */
  served(call: InboundCall, target: Target): void {
    const rl = this.requests.get(call);
    if (!rl) return;
    rl.trace.result = target.conn.id === rl.trace.connectionId ? 'held' : 'moved';
    rl.trace.movedToConnectionId = rl.trace.result === 'moved' ? target.conn.id : null;
  }

  /** Whether the request runs under a lease (every attempt it makes does). */
  leased(call: InboundCall): boolean {
    return this.requests.has(call);
  }
}

const leasedElsewhere = (holder: Lease): Exclusion => ({
  reason: 'leased_elsewhere',
  until: holder.expiresAt,
  detail: "held by another session's exclusive lease",
});
