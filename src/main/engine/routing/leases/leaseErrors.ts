// The typed answers of the lease barrier and the lease endpoint: a stable code, a status, and for
// contention (R-LS-11) a bounded Retry-After from the nearest expiry of the leases in the way.
import { ProxyError } from '../../proxy/errors';
import type { LeaseRefusal } from './leaseMachine';

/** Header spellings, Switchyard's first (R-LS-04 names OmniRoute's). Node lower-cases names. */
export const LEASE_OWNER_HEADERS = ['x-switchyard-lease-owner', 'x-omniroute-lease-owner'] as const;
export const LEASE_GENERATION_HEADERS = ['x-switchyard-lease-generation', 'x-omniroute-lease-generation'] as const;

/** Retry-After of a lease-capacity answer: the nearest expiry, within these bounds. */
export const CAPACITY_RETRY_MIN_MS = 1_000;
export const CAPACITY_RETRY_MAX_MS = 60_000;

export const LEASE_CAPACITY_STATUS = 'waiting-for-capacity';

export function refusalError(refused: Exclude<LeaseRefusal, 'lease_connection_taken'>): ProxyError {
  switch (refused) {
    case 'lease_not_found':
      return new ProxyError(404, 'lease_not_found', 'this lease owner holds no active lease (it expired or was released); acquire a new one');
    case 'lease_key_mismatch':
      return new ProxyError(403, 'lease_key_mismatch', 'this lease belongs to another client key; a lease is honoured only for the key that acquired it');
    case 'lease_generation_stale':
      // The current generation is not named: a holder with a stale one must not learn it here.
      return new ProxyError(409, 'lease_generation_stale', 'the lease generation is stale: the lease was renewed since; use the generation the last renew returned');
    case 'lease_owner_active':
      return new ProxyError(409, 'lease_owner_active', 'this owner already holds an active lease; renew or release it first');
  }
}

export const scopeMissing = () =>
  new ProxyError(403, 'lease_scope_missing', 'this client key may not take exclusive leases: give it the lease:exclusive scope in Switchyard');

export const noAllowedConnections = () =>
  new ProxyError(403, 'lease_no_allowed_connections', 'this client key has no allowed connections for leases: choose them in Switchyard');

/** 429 lease-capacity-unavailable (R-LS-11): every free candidate is held by someone else's lease. */
export function capacityError(nearestExpiry: number, now: number, what: string, diagnostics?: unknown): ProxyError {
  const wait = Math.min(CAPACITY_RETRY_MAX_MS, Math.max(CAPACITY_RETRY_MIN_MS, nearestExpiry - now));
  return new ProxyError(429, 'lease-capacity-unavailable', `${what}; retry in ${Math.ceil(wait / 1000)}s`, {
    retryAfterMs: wait,
    resetAt: nearestExpiry,
    fields: { status: LEASE_CAPACITY_STATUS },
    ...(diagnostics !== undefined ? { diagnostics } : {}),
  });
}
