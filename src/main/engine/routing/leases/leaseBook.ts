// Every active lease, in memory and in SQLite (R-LS-05): found by owner hash, by connection and
// by id; one per owner and one per connection. Each change goes through the pure lease machine
// (leaseMachine.ts) and is written through before it is answered, so a restart keeps every
// lease. Expiry is read lazily: an expired lease is forgotten (row deleted) the first time it is
// looked at, which is also what frees its owner and its connection.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock';
import type { LeasesRepo } from '../../store/leasesRepo';
import { leaseAt, next, type Lease, type LeaseRefusal } from './leaseMachine';

export type LeaseOutcome = { ok: true; lease: Lease; moved: boolean } | { ok: false; refused: LeaseRefusal; lease: Lease | null };

export class LeaseBook {
  private readonly byOwner = new Map<string, Lease>();
  private readonly byConnection = new Map<string, Lease>();
  private readonly byId = new Map<string, Lease>();
  private readonly listeners = new Set<() => void>();

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
  acquire(
    args: { ownerHash: string; clientKeyId: string; connectionId: string; ttlMs: number; label: string | null },
    now: number,
  ): LeaseOutcome {
    const current = this.ofOwner(args.ownerHash, now);
    if (current) return { ok: false, refused: 'lease_owner_active', lease: current };
    if (this.holderOf(args.connectionId, now)) return { ok: false, refused: 'lease_connection_taken', lease: null };
    const lease = this.repo.transaction(() => {
      const step = next(
        { kind: 'free' },
        { type: 'acquire', lease: { id: randomUUID(), ...args, generation: this.repo.nextGeneration() } },
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
    return true;
  }

  /** Ends every lease of a revoked key or on a deleted connection. */
  revokeWhere(match: (l: Lease) => boolean): number {
    let n = 0;
    for (const l of [...this.byId.values()]) {
      if (!match(l)) continue;
      this.end(l);
      n++;
    }
    return n;
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
