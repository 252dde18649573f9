// Every active lease, in memory and in SQLite (R-LS-05): found by owner hash, by connection and
// by id; one per owner and one per connection. Each change goes through the pure lease machine
// (leaseMachine.ts) and is written through before it is answered, so a restart keeps every
// lease. Expiry is read lazily: an expired lease is forgotten (row deleted) the first time it is
// looked at, which is also what frees its owner and its connection.
//
// In team mode (issue 26) this book is the instance's copy of the team's leases: the team layer
// (teamLeases.ts) decides each change in Redis and writes the answer here with `adopt` / `drop`,
// and the book falls back to deciding alone while Redis is away. Its `LeaseLedger` methods are the
// single-process ones; the team layer offers the same methods, answered by the team.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock';
import type { LeasesRepo } from '../../store/leasesRepo';
import { leaseAt, next, type Lease, type LeaseRefusal } from './leaseMachine';

export type LeaseOutcome = { ok: true; lease: Lease; moved: boolean } | { ok: false; refused: LeaseRefusal; lease: Lease | null };

export interface AcquireArgs {
  /** The lease's id (default: a new one); team mode gives the id it asked the team for. */
  id?: string;
  ownerHash: string;
  clientKeyId: string;
  connectionId: string;
  ttlMs: number;
  label: string | null;
}

type Maybe<T> = T | Promise<T>;

/**
 * Who decides a lease change: the book alone (one process), or the team (teamLeases.ts), whose
 * answers are promises. The endpoint and the dispatch barrier talk to this, never to Redis.
 */
export interface LeaseLedger {
  acquire(args: AcquireArgs, now: number): Maybe<LeaseOutcome>;
  renew(ownerHash: string, clientKeyId: string, generation: number, ttlMs: number, now: number): Maybe<LeaseOutcome>;
  release(ownerHash: string, clientKeyId: string, generation: number, now: number): Maybe<LeaseOutcome>;
  use(ownerHash: string, clientKeyId: string, generation: number, connectionId: string, now: number): Maybe<LeaseOutcome>;
  /**
   * Team mode: reads the owner's lease from the team into the book (when the copy here cannot
   * answer a request: unknown owner, another generation); null when there is nothing to ask.
   */
  refresh?(ownerHash: string): Promise<void> | null;
}

/** Team mode: a lease the operator (or a cascade) ended here, for the team to end too. */
export type RevokedHook = (lease: Lease, now: number) => void;

export class LeaseBook implements LeaseLedger {
  private readonly byOwner = new Map<string, Lease>();
  private readonly byConnection = new Map<string, Lease>();
  private readonly byId = new Map<string, Lease>();
  private readonly listeners = new Set<() => void>();
  private revokedHook: RevokedHook | null = null;

  constructor(
    private readonly repo: LeasesRepo,
    private readonly clock: Clock,
  ) {
    const now = clock.now();
    for (const l of repo.all()) {
      if (l.expiresAt <= now) repo.delete(l.id);
      else this.index(l);
    }
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Team mode: told of every lease ended by revoke / revokeWhere (not of the team's own changes). */
  onRevoked(fn: RevokedHook): void {
    this.revokedHook = fn;
  }

  private changed(): void {
    for (const fn of [...this.listeners]) fn();
  }

  private index(l: Lease): void {
    this.byOwner.set(l.ownerHash, l);
    this.byConnection.set(l.connectionId, l);
    this.byId.set(l.id, l);
  }

  private unindex(l: Lease): void {
    if (this.byOwner.get(l.ownerHash) === l) this.byOwner.delete(l.ownerHash);
    if (this.byConnection.get(l.connectionId) === l) this.byConnection.delete(l.connectionId);
    if (this.byId.get(l.id) === l) this.byId.delete(l.id);
  }

  /** The lease if it is still held at `now`; an expired one is forgotten here. */
  private live(l: Lease | undefined, now: number): Lease | null {
    if (!l) return null;
    if (leaseAt({ kind: 'held', lease: l }, now).kind === 'held') return l;
    this.unindex(l);
    this.repo.delete(l.id);
    this.changed();
    return null;
  }

  /** The active lease of an owner. */
  ofOwner(ownerHash: string, now: number): Lease | null {
    return this.live(this.byOwner.get(ownerHash), now);
  }

  /** The active lease holding a connection. */
  holderOf(connectionId: string, now: number): Lease | null {
    return this.live(this.byConnection.get(connectionId), now);
  }

  get(id: string, now: number): Lease | null {
    return this.live(this.byId.get(id), now);
  }

  list(now: number): Lease[] {
    return [...this.byId.values()].filter((l) => this.live(l, now) !== null);
  }

  /** A new lease for `ownerHash` on `connectionId` (the caller picked a free one). */
  acquire(args: AcquireArgs, now: number): LeaseOutcome {
    const current = this.ofOwner(args.ownerHash, now);
    if (current) return { ok: false, refused: 'lease_owner_active', lease: current };
    if (this.holderOf(args.connectionId, now)) return { ok: false, refused: 'lease_connection_taken', lease: null };
    const lease = this.repo.transaction(() => {
      const step = next(
        { kind: 'free' },
        { type: 'acquire', lease: { ...args, id: args.id ?? randomUUID(), generation: this.repo.nextGeneration() } },
        now,
      );
      if (step.state.kind !== 'held') throw new Error('acquire did not produce a held lease');
      this.repo.save(step.state.lease);
      return step.state.lease;
    });
    this.index(lease);
    this.changed();
    return { ok: true, lease, moved: false };
  }

  renew(ownerHash: string, clientKeyId: string, generation: number, ttlMs: number, now: number): LeaseOutcome {
    const current = this.ofOwner(ownerHash, now);
    if (!current) return { ok: false, refused: 'lease_not_found', lease: null };
    // Decide first, then take a generation from the counter only for a renew that passes.
    const step = next({ kind: 'held', lease: current }, { type: 'renew', clientKeyId, generation, nextGeneration: generation, ttlMs }, now);
    if (step.refused || step.state.kind !== 'held') return { ok: false, refused: step.refused ?? 'lease_not_found', lease: current };
    const renewed = step.state.lease;
    const lease = this.repo.transaction(() => {
      const l = { ...renewed, generation: this.repo.nextGeneration() };
      this.repo.save(l);
      return l;
    });
    this.replace(current, lease);
    return { ok: true, lease, moved: false };
  }

  release(ownerHash: string, clientKeyId: string, generation: number, now: number): LeaseOutcome {
    const current = this.ofOwner(ownerHash, now);
    if (!current) return { ok: false, refused: 'lease_not_found', lease: null };
    const step = next({ kind: 'held', lease: current }, { type: 'release', clientKeyId, generation }, now);
    if (step.refused) return { ok: false, refused: step.refused, lease: current };
    this.end(current);
    return { ok: true, lease: current, moved: false };
  }

  /**
   * The final dispatch barrier (R-LS-07): the owner's lease, presented by this key with this
   * generation, for a request about to go to `connectionId`. On another connection than the
   * leased one, the lease moves there (same generation) when no other lease holds it.
   */
  use(ownerHash: string, clientKeyId: string, generation: number, connectionId: string, now: number): LeaseOutcome {
    const current = this.ofOwner(ownerHash, now);
    if (!current) return { ok: false, refused: 'lease_not_found', lease: null };
    const holder = current.connectionId === connectionId ? current : this.holderOf(connectionId, now);
    const step = next(
      { kind: 'held', lease: current },
      { type: 'use', clientKeyId, generation, connectionId, connectionFree: holder === null || holder === current },
      now,
    );
    if (step.refused || step.state.kind !== 'held') return { ok: false, refused: step.refused ?? 'lease_not_found', lease: current };
    if (!step.moved) return { ok: true, lease: current, moved: false };
    this.repo.save(step.state.lease);
    this.replace(current, step.state.lease);
    return { ok: true, lease: step.state.lease, moved: true };
  }

  /** The operator's release (dashboard). */
  revoke(id: string, now: number): boolean {
    const current = this.get(id, now);
    if (!current) return false;
    next({ kind: 'held', lease: current }, { type: 'revoke' }, now);
    this.end(current);
    this.revokedHook?.(current, now);
    return true;
  }

  /** Ends every lease of a revoked key or on a deleted connection. */
  revokeWhere(match: (l: Lease) => boolean): number {
    let n = 0;
    for (const l of [...this.byId.values()]) {
      if (!match(l)) continue;
      this.end(l);
      this.revokedHook?.(l, this.clock.now());
      n++;
    }
    return n;
  }

  /**
   * Team mode: the team holds this lease (a script's answer, another instance's change). It
   * replaces the owner's lease here and whatever this copy had on its connection; the generation
   * counter is raised past it, so a lease granted here alone never reuses a team generation.
   */
  adopt(l: Lease): void {
    const prev = this.byOwner.get(l.ownerHash);
    if (prev && sameLease(prev, l)) return;
    this.repo.transaction(() => {
      if (prev) {
        this.unindex(prev);
        if (prev.id !== l.id) this.repo.delete(prev.id);
      }
      const other = this.byConnection.get(l.connectionId);
      if (other && other.ownerHash !== l.ownerHash) {
        this.unindex(other);
        this.repo.delete(other.id);
      }
      const sameId = this.byId.get(l.id);
      if (sameId && sameId.ownerHash !== l.ownerHash) {
        this.unindex(sameId);
        this.repo.delete(sameId.id);
      }
      this.repo.save(l);
      this.repo.raiseGeneration(l.generation);
    });
    this.index(l);
    this.changed();
  }

  /** Team mode: the team holds no lease for this owner (released, revoked or lost a conflict elsewhere). */
  drop(ownerHash: string): Lease | null {
    const l = this.byOwner.get(ownerHash);
    if (!l) return null;
    this.end(l);
    return l;
  }

  private end(l: Lease): void {
    this.repo.delete(l.id);
    this.unindex(l);
    this.changed();
  }

  private replace(old: Lease, updated: Lease): void {
    this.unindex(old);
    this.index(updated);
    this.changed();
  }
}

const sameLease = (a: Lease, b: Lease): boolean =>
  a.id === b.id &&
  a.generation === b.generation &&
  a.connectionId === b.connectionId &&
  a.clientKeyId === b.clientKeyId &&
  a.expiresAt === b.expiresAt &&
  a.renewedAt === b.renewedAt;
