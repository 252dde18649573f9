// POST /api/v1/session-leases on the proxy port (R-LS-02): acquire, renew and release an
// exclusive connection lease with any HTTP client, authenticated by the client key like any proxy
// call. Fields, TTL bounds and errors are listed in docs/decisions/topic-session-affinity-and-leases.md.
// Everything is validated before anything is written; the owner value is returned once
// (by acquire) and only its SHA-256 is kept.
import { z } from 'zod';
import { isTerminalStatus } from '../../../../shared/model';
import type { Clock } from '../../clock';
import type { Logger } from '../../logger';
import { ProxyError } from '../../proxy/errors';
import type { Exclusion } from '../../resilience/port';
import type { ClientKeyRecord } from '../../store/clientKeysRepo';
import type { ConnectionRecord } from '../../store/connectionsRepo';
import type { Target } from '../target';
import type { LeaseBook, LeaseLedger } from './leaseBook';
import { parseGeneration } from './leaseClaim';
import { capacityError, LEASE_GENERATION_HEADERS, noAllowedConnections, refusalError, scopeMissing } from './leaseErrors';
import { leaseFields, type Lease } from './leaseMachine';
import { hashLeaseOwner, isLeaseOwner, newLeaseOwner } from './leaseOwner';
import { hasLeaseScope } from './leaseRouting';

export const LEASE_TTL_DEFAULT_MS = 5 * 60_000;
export const LEASE_TTL_MIN_MS = 10_000;
export const LEASE_TTL_MAX_MS = 60 * 60_000;
export const LEASE_ACTIONS = ['acquire', 'renew', 'release'] as const;

const ttlMs = z.number().int().min(LEASE_TTL_MIN_MS).max(LEASE_TTL_MAX_MS).optional();
const owner = z.string().max(200);
const generation = z.union([z.number(), z.string().max(40)]);
const SCHEMAS = {
  acquire: z
    .object({
      action: z.literal('acquire'),
      ttlMs,
      connectionId: z.string().min(1).max(200).optional(),
      owner: owner.optional(),
      label: z.string().trim().max(100).optional(),
    })
    .strict(),
  renew: z.object({ action: z.literal('renew'), owner, generation, ttlMs }).strict(),
  release: z.object({ action: z.literal('release'), owner, generation }).strict(),
} as const;

export interface LeaseEndpointDeps {
  book: LeaseBook;
  /** Who decides acquire, renew and release (default: the book; in team mode, the team). */
  ledger?: LeaseLedger;
  connection(id: string): ConnectionRecord | undefined;
  exclusion(target: Target, now: number): Exclusion | null;
  clock: Clock;
  log: Logger;
}

const invalid = (param: string, message: string) => new ProxyError(400, 'invalid_request', `${param}: ${message}`, { param });

export class LeaseEndpoint {
  private readonly ledger: LeaseLedger;

  constructor(private readonly d: LeaseEndpointDeps) {
    this.ledger = d.ledger ?? d.book;
  }

  /** Answers one lease call; rejects with a ProxyError for every refusal (nothing written then). */
  async handle(key: ClientKeyRecord, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const now = this.d.clock.now();
    if (!hasLeaseScope(key)) throw scopeMissing();
    if (key.allowedConnections.length === 0) throw noAllowedConnections();
    const action = body.action;
    if (typeof action !== 'string' || !(LEASE_ACTIONS as readonly string[]).includes(action)) {
      throw invalid('action', `must be one of ${LEASE_ACTIONS.join(', ')}`);
    }
    switch (action as (typeof LEASE_ACTIONS)[number]) {
      case 'acquire':
        return this.acquire(key, parseSync('acquire', body), now);
      case 'renew':
        return this.renew(key, parseSync('renew', body), now);
      case 'release':
        return this.release(key, parseSync('release', body), now);
    }
  }

  private async acquire(key: ClientKeyRecord, input: z.output<typeof SCHEMAS.acquire>, now: number): Promise<Record<string, unknown>> {
    if (input.owner !== undefined && !isLeaseOwner(input.owner)) throw invalid('owner', 'must be vlo_ followed by 43 base64url characters');
    if (input.connectionId !== undefined && !key.allowedConnections.includes(input.connectionId)) {
      throw new ProxyError(403, 'lease_connection_not_allowed', "connectionId: that connection is not in this key's allowed connections", {
        param: 'connectionId',
      });
    }
    const ownerValue = input.owner ?? newLeaseOwner();
    const ownerHash = hashLeaseOwner(ownerValue);
    const team = this.ledger.refresh !== undefined;
    if (this.d.book.ofOwner(ownerHash, now)) {
      // Team mode: this copy may still hold a lease the team has ended; the team decides below.
      if (!team) throw refusalError('lease_owner_active');
    }
    const pool = (input.connectionId !== undefined ? [input.connectionId] : key.allowedConnections)
      .map((id) => this.d.connection(id))
      .filter((c): c is ConnectionRecord => !!c && c.enabled && !isTerminalStatus(c.health.testStatus));
    if (pool.length === 0) {
      throw new ProxyError(404, 'no_executable_targets', "none of this key's allowed connections exists, is enabled and is usable; fix or re-enable one in Switchyard");
    }
    const free = pool.filter((c) => this.d.book.holderOf(c.id, now) === null);
    if (free.length === 0 && !team) throw this.capacity(pool, now);
    // A connection that may be called now first; a cooling one is still better than none (a
    // lease is durable, a cooldown is not, and routing moves the lease when it must, R-LS-09).
    const callable = (c: ConnectionRecord) => this.d.exclusion({ conn: c, model: '', requestedModel: '' }, now) === null;
    const candidates = [...free.filter(callable), ...free.filter((c) => !callable(c))];
    // Team mode: another instance may have taken a connection this copy thinks free (or freed one
    // it thinks held): the team answers, and a taken connection sends the request to the next one.
    if (team) candidates.push(...pool.filter((c) => !free.includes(c)));
    for (const pick of candidates) {
      const r = await this.ledger.acquire({ ownerHash, clientKeyId: key.id, connectionId: pick.id, ttlMs: input.ttlMs ?? LEASE_TTL_DEFAULT_MS, label: input.label || null }, now);
      if (!r.ok) {
        if (r.refused === 'lease_connection_taken') continue;
        throw refusalError(r.refused);
      }
      this.d.log.info('lease.acquired', { leaseId: r.lease.id, connectionId: r.lease.connectionId, clientKeyId: key.id, generation: r.lease.generation });
      return {
        object: 'session_lease',
        action: 'acquire',
        lease: { ...this.view(r.lease), owner: ownerValue },
        headers: { 'X-Switchyard-Lease-Owner': ownerValue, 'X-Switchyard-Lease-Generation': String(r.lease.generation) },
      };
    }
    throw this.capacity(pool, now);
  }

  /** 429 lease-capacity-unavailable, with the nearest expiry of the leases in the way. */
  private capacity(pool: ConnectionRecord[], now: number): ProxyError {
    const expiries = pool.map((c) => this.d.book.holderOf(c.id, now)?.expiresAt).filter((x): x is number => x !== undefined);
    if (expiries.length === 0) return capacityError(now + 1_000, now, 'the connection was just leased by another session');
    return capacityError(Math.min(...expiries), now, "every connection in this key's lease pool is held by another session's exclusive lease");
  }

  private async renew(key: ClientKeyRecord, input: z.output<typeof SCHEMAS.renew>, now: number): Promise<Record<string, unknown>> {
    const { ownerHash, gen } = this.presented(input);
    const r = await this.ledger.renew(ownerHash, key.id, gen, input.ttlMs ?? (this.d.book.ofOwner(ownerHash, now)?.ttlMs ?? LEASE_TTL_DEFAULT_MS), now);
    if (!r.ok) throw refusalError(r.refused === 'lease_connection_taken' ? 'lease_not_found' : r.refused);
    this.d.log.info('lease.renewed', { leaseId: r.lease.id, clientKeyId: key.id, generation: r.lease.generation });
    return {
      object: 'session_lease',
      action: 'renew',
      lease: this.view(r.lease),
      headers: { 'X-Switchyard-Lease-Generation': String(r.lease.generation) },
    };
  }

  private async release(key: ClientKeyRecord, input: z.output<typeof SCHEMAS.release>, now: number): Promise<Record<string, unknown>> {
    const { ownerHash, gen } = this.presented(input);
    const r = await this.ledger.release(ownerHash, key.id, gen, now);
    if (!r.ok) throw refusalError(r.refused === 'lease_connection_taken' ? 'lease_not_found' : r.refused);
    this.d.log.info('lease.released', { leaseId: r.lease.id, clientKeyId: key.id });
    return { object: 'session_lease', action: 'release', released: true, lease: this.view(r.lease) };
  }

  private presented(input: { owner: string; generation: number | string }): { ownerHash: string; gen: number } {
    if (!isLeaseOwner(input.owner)) throw invalid('owner', 'must be vlo_ followed by 43 base64url characters');
    const gen = parseGeneration(input.generation);
    if (gen === null) throw invalid('generation', `must be the lease's generation, a positive whole number (as in ${LEASE_GENERATION_HEADERS[0]})`);
    return { ownerHash: hashLeaseOwner(input.owner), gen };
  }

  private view(l: Lease) {
    return leaseFields(l, this.d.connection(l.connectionId));
  }
}

function parseSync<A extends keyof typeof SCHEMAS>(action: A, body: Record<string, unknown>): z.output<(typeof SCHEMAS)[A]> {
  const r = SCHEMAS[action].safeParse(body);
  if (r.success) return r.data as z.output<(typeof SCHEMAS)[A]>;
  const issue = r.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const k = (issue as { keys?: string[] }).keys?.[0] ?? '(body)';
    throw invalid(k, `unknown field for ${action}`);
  }
  throw invalid(issue.path.map(String).join('.') || '(body)', issue.message);
}
