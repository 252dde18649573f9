// proxy/admit.ts alone: one target's admission for one attempt. A request that waits for nothing
// is admitted in the caller's turn (a value, not a promise); every step that may wait (a queue, a
// probe claimed in the team, a lease barrier) still may, and a late exclusion or a barrier gives
// the slot back.
import { describe, expect, it, vi } from 'vitest';
import { admit, type AdmitDeps } from '../../../src/main/engine/proxy/admit';
import { AdmissionError, type AdmissionLease } from '../../../src/main/engine/admission/port';
import { ProxyError } from '../../../src/main/engine/proxy/errors';
import type { InboundCall } from '../../../src/main/engine/proxy/inbound';
import type { RequestRecord } from '../../../src/main/engine/proxy/requestRecord';
import type { Walk } from '../../../src/main/engine/proxy/unserved';
import type { Exclusion } from '../../../src/main/engine/resilience/port';
import type { Target } from '../../../src/main/engine/routing/target';
import { FakeClock } from '../../support/fakeClock';

const target = { conn: { id: 'c1', name: 'one' }, model: 'm' } as unknown as Target;
const call = {} as InboundCall;
const signal = new AbortController().signal;
const cooling: Exclusion = { reason: 'cooling_down', until: 1_000, detail: 'cooling' };

function lease(): AdmissionLease & { released: number } {
  const l = { released: 0, queuedMs: 0, signal, release: () => void l.released++ };
  return l as unknown as AdmissionLease & { released: number };
}

function rig(o: { now?: AdmissionLease | null; later?: () => Promise<AdmissionLease>; exclusions?: (Exclusion | null)[]; claim?: Exclusion | null | Promise<Exclusion | null>; barrier?: unknown } = {}) {
  const exclusions = [...(o.exclusions ?? [])];
  const deps = {
    clock: new FakeClock(),
    resilience: { exclusion: vi.fn(() => exclusions.shift() ?? null), beginAttempt: vi.fn(() => o.claim ?? null), onAbandon: vi.fn() },
    admission: { acquireNow: vi.fn(() => (o.now === undefined ? null : o.now)), acquire: vi.fn(o.later ?? (() => Promise.resolve(lease()))) },
    sessions: o.barrier === undefined ? undefined : { barrier: vi.fn(() => o.barrier) },
  } as unknown as AdmitDeps;
  const skips: unknown[] = [];
  const fails: unknown[] = [];
  const record = { skip: (_t: Target, ex: unknown) => void skips.push(ex), fail: (e: unknown) => void fails.push(e) } as unknown as RequestRecord;
  const walk = { exclusions: [], lastAdmission: null, streams: { client: null, continuation: null, reopened: new Set() } } as unknown as Walk;
  return { deps, record, walk, skips, fails };
}

describe('admit', () => {
  it('admits a target with a free slot in the same turn: a lease, not a promise', () => {
    const l = lease();
    const { deps, record, walk } = rig({ now: l });
    expect(admit(deps, call, target, signal, record, walk)).toBe(l);
    expect(deps.admission.acquire).not.toHaveBeenCalled();
  });

  it('waits through acquire() when no slot is free now, then checks the target again', async () => {
    const l = lease();
    const { deps, record, walk } = rig({ now: null, later: () => Promise.resolve(l) });
    const out = admit(deps, call, target, signal, record, walk);
    expect(out).toBeInstanceOf(Promise);
    expect(await out).toBe(l);
    expect(deps.resilience.exclusion).toHaveBeenCalledTimes(2);
  });

  it('skips an excluded target before asking for a slot', () => {
    const { deps, record, walk, skips } = rig({ exclusions: [cooling] });
    expect(admit(deps, call, target, signal, record, walk)).toBeNull();
    expect(deps.admission.acquireNow).not.toHaveBeenCalled();
    expect(skips).toEqual([cooling]);
    expect(walk.exclusions).toEqual([{ target, ex: cooling }]);
  });

  it('gives the slot back when the target started cooling while the request waited for it', async () => {
    const l = lease();
    const { deps, record, walk, skips } = rig({ now: null, later: () => Promise.resolve(l), exclusions: [null, cooling] });
    expect(await admit(deps, call, target, signal, record, walk)).toBeNull();
    expect(l.released).toBe(1);
    expect(skips).toEqual([cooling]);
  });

  it('records a refusal of admission as a skip with its code', async () => {
    const refusal = new AdmissionError('RATE_LIMIT_QUEUE_FULL', 429, 'queue full');
    const { deps, record, walk, skips } = rig({ now: null, later: () => Promise.reject(refusal) });
    expect(await admit(deps, call, target, signal, record, walk)).toBeNull();
    expect(walk.lastAdmission).toBe(refusal);
    expect(skips).toEqual([{ reason: 'admission_rejected', until: null, detail: 'RATE_LIMIT_QUEUE_FULL: queue full' }]);
  });

  it('waits for a probe claim that is a promise, and gives the slot back when another instance holds it', async () => {
    const l = lease();
    const held: Exclusion = { reason: 'circuit_open', until: null, detail: 'a half-open probe is in flight elsewhere' };
    const { deps, record, walk, skips } = rig({ now: l, claim: Promise.resolve(held) });
    const out = admit(deps, call, target, signal, record, walk);
    expect(out).toBeInstanceOf(Promise);
    expect(await out).toBeNull();
    expect(l.released).toBe(1);
    expect(skips).toEqual([held]);
  });

  it('answers the request when the lease barrier refuses it, and gives back the slot and the probe claim', async () => {
    const l = lease();
    const refuse = new ProxyError(409, 'lease_connection_not_allowed', 'the lease does not allow this connection');
    const { deps, record, walk, fails } = rig({ now: l, barrier: Promise.resolve({ refuse }) });
    expect(await admit(deps, call, target, signal, record, walk)).toBe('answered');
    expect(l.released).toBe(1);
    expect(deps.resilience.onAbandon).toHaveBeenCalledWith(target, expect.any(Number));
    expect(fails).toEqual([refuse]);
  });

  it('skips the target when a synchronous barrier bars it', () => {
    const l = lease();
    const skip: Exclusion = { reason: 'leased_elsewhere', until: null, detail: 'leased to another connection' };
    const { deps, record, walk, skips } = rig({ now: l, barrier: { skip } });
    expect(admit(deps, call, target, signal, record, walk)).toBeNull();
    expect(l.released).toBe(1);
    expect(skips).toEqual([skip]);
  });
});
