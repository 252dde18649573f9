// The lifecycle of one exclusive lease, as a pure state machine: `next(state, event, now)`.
// A lease is held until it is released, revoked by the operator, or its expiry passes (read
// lazily: no timer ends it). Every event but acquire must present the client key that acquired
// it and the exact current generation (R-LS-06/07). Renew issues a new generation (the old one is
// stale from then on) and restarts the TTL; use is the final dispatch barrier: on the leased
// connection it passes, on another one it moves the lease there with the same generation when
// that connection is free (R-LS-09). Uniqueness across leases (one per owner, one per connection,
// R-LS-05) is the lease book's.

export interface Lease {
  id: string;
  /** SHA-256 (hex) of the owner value; the value itself is never stored. */
  ownerHash: string;
  clientKeyId: string;
  connectionId: string;
  generation: number;
  ttlMs: number;
  label: string | null;
  acquiredAt: number;
  renewedAt: number;
  expiresAt: number;
}

/** What any view of a lease shows (never its owner), with its connection's name and provider. */
export function leaseFields(l: Lease, conn: { name: string; provider: string } | undefined) {
  return {
    id: l.id,
    generation: l.generation,
    connectionId: l.connectionId,
    connectionName: conn?.name ?? null,
    provider: conn?.provider ?? null,
    label: l.label,
    ttlMs: l.ttlMs,
    acquiredAt: l.acquiredAt,
    renewedAt: l.renewedAt,
    expiresAt: l.expiresAt,
  };
}

export type LeaseState =
  | { kind: 'free' }
  | { kind: 'held'; lease: Lease }
  | { kind: 'ended'; lease: Lease; why: 'released' | 'expired' | 'revoked'; at: number };

export type LeaseEvent =
  | { type: 'acquire'; lease: Omit<Lease, 'acquiredAt' | 'renewedAt' | 'expiresAt'> }
  | { type: 'renew'; clientKeyId: string; generation: number; nextGeneration: number; ttlMs: number }
  | { type: 'use'; clientKeyId: string; generation: number; connectionId: string; connectionFree: boolean }
  | { type: 'release'; clientKeyId: string; generation: number }
  | { type: 'revoke' };

export type LeaseRefusal =
  | 'lease_not_found'
  | 'lease_owner_active'
  | 'lease_key_mismatch'
  | 'lease_generation_stale'
  | 'lease_connection_taken';

export interface LeaseStep {
  state: LeaseState;
  refused: LeaseRefusal | null;
  /** use: the lease moved to the presented connection. */
  moved: boolean;
}

/** The state as of `now`: a held lease whose expiry has passed has ended. */
export function leaseAt(state: LeaseState, now: number): LeaseState {
  if (state.kind === 'held' && state.lease.expiresAt <= now) return { kind: 'ended', lease: state.lease, why: 'expired', at: state.lease.expiresAt };
  return state;
}

const refuse = (state: LeaseState, refused: LeaseRefusal): LeaseStep => ({ state, refused, moved: false });
const go = (state: LeaseState, moved = false): LeaseStep => ({ state, refused: null, moved });

export function next(current: LeaseState, event: LeaseEvent, now: number): LeaseStep {
  const state = leaseAt(current, now);
  if (event.type === 'acquire') {
    if (state.kind === 'held') return refuse(state, 'lease_owner_active');
    return go({ kind: 'held', lease: { ...event.lease, acquiredAt: now, renewedAt: now, expiresAt: now + event.lease.ttlMs } });
  }
  if (state.kind !== 'held') return refuse(state, 'lease_not_found');
  if (event.type === 'revoke') return go({ kind: 'ended', lease: state.lease, why: 'revoked', at: now });
  const lease = state.lease;
  if (event.clientKeyId !== lease.clientKeyId) return refuse(state, 'lease_key_mismatch');
  if (event.generation !== lease.generation) return refuse(state, 'lease_generation_stale');
  switch (event.type) {
    case 'renew':
      return go({ kind: 'held', lease: { ...lease, generation: event.nextGeneration, ttlMs: event.ttlMs, renewedAt: now, expiresAt: now + event.ttlMs } });
    case 'release':
      return go({ kind: 'ended', lease, why: 'released', at: now });
    case 'use':
      if (event.connectionId === lease.connectionId) return go(state);
      if (!event.connectionFree) return refuse(state, 'lease_connection_taken');
      return go({ kind: 'held', lease: { ...lease, connectionId: event.connectionId } }, true);
  }
}
