// The lease an inference request presents (R-LS-04): the owner and the exact generation, each in
// the Switchyard or the OmniRoute spelling. Both or neither; a malformed value is a 400 naming the
// header, and the value itself never appears in the answer or any log.
import type { IncomingHttpHeaders } from 'node:http';
import { ProxyError } from '../../proxy/errors';
import { LEASE_GENERATION_HEADERS, LEASE_OWNER_HEADERS } from './leaseErrors';
import { hashLeaseOwner, isLeaseOwner } from './leaseOwner';

export interface LeaseClaim {
  ownerHash: string;
  generation: number;
}

const first = (headers: IncomingHttpHeaders, names: readonly string[]): [string, string] | null => {
  for (const n of names) {
    const v = headers[n];
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s === 'string') return [n, s.trim()];
  }
  return null;
};

const GENERATION = /^[1-9][0-9]{0,14}$/;

export const parseGeneration = (v: unknown): number | null =>
  typeof v === 'number' ? (Number.isSafeInteger(v) && v > 0 ? v : null) : typeof v === 'string' && GENERATION.test(v) ? Number(v) : null;

/** null: the request presents no lease. */
export function leaseClaimOf(headers: IncomingHttpHeaders): LeaseClaim | ProxyError | null {
  const owner = first(headers, LEASE_OWNER_HEADERS);
  const gen = first(headers, LEASE_GENERATION_HEADERS);
  if (!owner && !gen) return null;
  if (!owner) return new ProxyError(400, 'invalid_request', `${gen![0]} needs ${LEASE_OWNER_HEADERS[0]} beside it`, { param: LEASE_OWNER_HEADERS[0] });
  if (!isLeaseOwner(owner[1])) {
    return new ProxyError(400, 'invalid_request', `${owner[0]} must be vlo_ followed by 43 base64url characters`, { param: owner[0] });
  }
  if (!gen) return new ProxyError(400, 'invalid_request', `${owner[0]} needs ${LEASE_GENERATION_HEADERS[0]} beside it`, { param: LEASE_GENERATION_HEADERS[0] });
  const generation = parseGeneration(gen[1]);
  if (generation === null) return new ProxyError(400, 'invalid_request', `${gen[0]} must be the lease's generation, a positive whole number`, { param: gen[0] });
  return { ownerHash: hashLeaseOwner(owner[1]), generation };
}
