// Admission of one target for one attempt (pipeline.ts's walk calls it per target): eligibility,
// an admission slot, eligibility again, the half-open probe's claim, and the lease barrier
// (R-LS-07). Each step may be synchronous (a free slot, no probe to claim in the team, no lease
// presented) or a promise; when all are synchronous the whole admission runs in the caller's turn
// and returns a value, so a request that waits for nothing pays no microtask per step.
import type { AdmissionLease, AdmissionPort } from '../admission/port';
import { AdmissionError } from '../admission/port';
import type { Clock } from '../clock';
import type { Exclusion, ResiliencePort } from '../resilience/port';
import type { BarrierVerdict, SessionRouting } from '../routing/sessionRouting';
import type { Target } from '../routing/target';
import { abandonContinuation } from './delivery';
import type { InboundCall } from './inbound';
import type { RequestRecord } from './requestRecord';
import type { Walk } from './unserved';

export interface AdmitDeps {
  resilience: ResiliencePort;
  admission: AdmissionPort;
  clock: Clock;
  sessions?: SessionRouting;
}

export type Admitted = AdmissionLease | null | 'answered';

/**
 * Eligibility, then an admission slot, then eligibility again (the queue wait may have been long:
 * the target can have started cooling, or its breaker opened, meanwhile), and only then the claim
 * of a half-open probe, and the lease barrier. null when the target is skipped (recorded);
 * 'answered' when the barrier refused the request (answered). When the slot is free and nothing
 * needs waiting for, all of it runs in this turn (a value, not a promise: no microtask per step).
 */
export function admit(deps: AdmitDeps, call: InboundCall, target: Target, signal: AbortSignal, record: RequestRecord, walk: Walk): Admitted | Promise<Admitted> {
  const ex = deps.resilience.exclusion(target, deps.clock.now());
  if (ex) {
    record.skip(target, ex);
    walk.exclusions.push({ target, ex });
    return null;
  }
  const now = deps.admission.acquireNow?.(target, signal) ?? null;
  return now ? admitted(deps, call, target, now, record, walk) : admitAfterWaiting(deps, call, target, signal, record, walk);
}

async function admitAfterWaiting(deps: AdmitDeps, call: InboundCall, target: Target, signal: AbortSignal, record: RequestRecord, walk: Walk): Promise<Admitted> {
  let lease: AdmissionLease;
  try {
    lease = await deps.admission.acquire(target, signal);
  } catch (err) {
    if (err instanceof AdmissionError) {
      walk.lastAdmission = err;
      record.skip(target, { reason: 'admission_rejected', until: null, detail: `${err.code}: ${err.message}` });
      return null;
    }
    if (signal.aborted) return null;
    throw err;
  }
  return admitted(deps, call, target, lease, record, walk);
}

/** With the slot: eligibility again, the half-open claim, then the lease barrier. */
function admitted(deps: AdmitDeps, call: InboundCall, target: Target, lease: AdmissionLease, record: RequestRecord, walk: Walk): Admitted | Promise<Admitted> {
  const now = deps.clock.now();
  const late = deps.resilience.exclusion(target, now);
  if (late) return skipLate(target, lease, late, record, walk);
  const claim = deps.resilience.beginAttempt(target, now);
  if (claim instanceof Promise) return claim.then((c) => claimed(deps, call, target, lease, record, walk, now, c));
  return claimed(deps, call, target, lease, record, walk, now, claim);
}

function claimed(
  deps: AdmitDeps,
  call: InboundCall,
  target: Target,
  lease: AdmissionLease,
  record: RequestRecord,
  walk: Walk,
  now: number,
  late: Exclusion | null,
): Admitted | Promise<Admitted> {
  if (late) return skipLate(target, lease, late, record, walk);
  const barred = passBarrier(deps, call, target, lease, record, walk, now);
  return barred instanceof Promise ? barred.then((b) => leaseUnless(lease, b)) : leaseUnless(lease, barred);
}

const leaseUnless = (lease: AdmissionLease, barred: Barred): Admitted => (barred === null ? lease : barred === 'answered' ? 'answered' : null);

function skipLate(target: Target, lease: AdmissionLease, ex: Exclusion, record: RequestRecord, walk: Walk): null {
  lease.release();
  record.skip(target, ex);
  walk.exclusions.push({ target, ex });
  return null;
}

export type Barred = 'answered' | 'skipped' | null;

/**
 * R-LS-07: the final dispatch barrier binds a presented lease to this key, generation and
 * connection. null = pass; otherwise the slot and any probe claim are given back, and the request
 * is either answered (refused) or the target skipped (recorded).
 */
export function passBarrier(deps: AdmitDeps, call: InboundCall, target: Target, lease: AdmissionLease, record: RequestRecord, walk: Walk, now: number): Barred | Promise<Barred> {
  const pending = deps.sessions?.barrier(call, target, now) ?? null;
  if (pending instanceof Promise) return pending.then((gate) => settleBarrier(deps, target, lease, record, walk, now, gate));
  return settleBarrier(deps, target, lease, record, walk, now, pending);
}

function settleBarrier(deps: AdmitDeps, target: Target, lease: AdmissionLease, record: RequestRecord, walk: Walk, now: number, gate: BarrierVerdict | null): Barred {
  if (!gate) return null;
  lease.release();
  deps.resilience.onAbandon(target, now);
  if ('refuse' in gate) {
    // Refused while continuing a broken answer: the client's stream ends with the refusal as its error event.
    if (!abandonContinuation(walk, record, gate.refuse)) record.fail(gate.refuse);
    return 'answered';
  }
  record.skip(target, gate.skip);
  return 'skipped';
}
