// Lease owners (R-LS-03): an opaque bearer value, `vlo_` + 43 base64url characters (32 random
// bytes). Only its SHA-256 is ever stored or compared; the value itself is returned once, by the
// acquire that issued it, and is never logged.
import { createHash, randomBytes } from 'node:crypto';

export const LEASE_OWNER_PATTERN = /^vlo_[A-Za-z0-9_-]{43}$/;

export const newLeaseOwner = (): string => `vlo_${randomBytes(32).toString('base64url')}`;

export const isLeaseOwner = (v: unknown): v is string => typeof v === 'string' && LEASE_OWNER_PATTERN.test(v);

export const hashLeaseOwner = (owner: string): string => createHash('sha256').update(owner).digest('hex');
