// The lease book over the real store (in memory) and a fake clock: one active lease per owner and
// per connection, generations from one counter (never issued twice), write-through and read back
// on a restart, lazy expiry that frees owner and connection, and the owner value never stored.
import { describe, expect, it } from 'vitest';
import { LeaseBook } from '../../../src/main/engine/routing/leases/leaseBook';
import { hashLeaseOwner, isLeaseOwner, newLeaseOwner } from '../../../src/main/engine/routing/leases/leaseOwner';
import { openStore } from '../../../src/main/engine/store/db';
import { LeasesRepo } from '../../../src/main/engine/store/leasesRepo';
import { FakeClock } from '../../support/fakeClock';

function rig() {
  const clock = new FakeClock();
  const db = openStore({ path: ':memory:', now: () => clock.now() });
  const make = () => new LeaseBook(new LeasesRepo(db, () => clock.now()), clock);
  return { clock, db, book: make(), restart: make };
}

const args = (ownerHash: string, connectionId: string, clientKeyId = 'k1') => ({ ownerHash, clientKeyId, connectionId, ttlMs: 10_000, label: null });

describe('lease owners', () => {
  it('are vlo_ + 43 base64url characters, fresh each time, and hashed with SHA-256', () => {
    const a = newLeaseOwner();
    expect(a).toMatch(/^vlo_[A-Za-z0-9_-]{43}$/);
    expect(isLeaseOwner(a)).toBe(true);
    expect(newLeaseOwner()).not.toBe(a);
    expect(hashLeaseOwner(a)).toMatch(/^[0-9a-f]{64}$/);
    for (const bad of ['vlo_', `vlo_${'a'.repeat(42)}`, `vlo_${'a'.repeat(44)}`, `vlo_${'a'.repeat(42)}=`, `vlx_${'a'.repeat(43)}`, 7]) expect(isLeaseOwner(bad)).toBe(false);
  });
});

describe('LeaseBook', () => {
  it('one active lease per owner and per connection', () => {
    const { book, clock } = rig();
    const first = book.acquire(args('o1', 'c1'), clock.now());
    expect(first.ok).toBe(true);
    expect(book.acquire(args('o1', 'c2'), clock.now())).toMatchObject({ ok: false, refused: 'lease_owner_active' });
    expect(book.acquire(args('o2', 'c1'), clock.now())).toMatchObject({ ok: false, refused: 'lease_connection_taken' });
    expect(book.acquire(args('o2', 'c2'), clock.now()).ok).toBe(true);
    expect(book.list(clock.now()).map((l) => l.connectionId).sort()).toEqual(['c1', 'c2']);
  });

  it('generations come from one counter: a renew or a new lease never repeats one', () => {
    const { book, clock } = rig();
    const a = book.acquire(args('o1', 'c1'), clock.now());
    const b = book.acquire(args('o2', 'c2'), clock.now());
    if (!a.ok || !b.ok) throw new Error('acquire failed');
    expect([a.lease.generation, b.lease.generation]).toEqual([1, 2]);
    const renewed = book.renew('o1', 'k1', 1, 10_000, clock.now());
    expect(renewed).toMatchObject({ ok: true, lease: { generation: 3 } });
    // A refused renew uses up no generation.
    expect(book.renew('o1', 'k1', 1, 10_000, clock.now())).toMatchObject({ ok: false, refused: 'lease_generation_stale' });
    expect(book.release('o1', 'k1', 3, clock.now()).ok).toBe(true);
    expect(book.acquire(args('o1', 'c1'), clock.now())).toMatchObject({ ok: true, lease: { generation: 4 } });
  });

  it('expiry frees the owner and the connection, and deletes the row', () => {
    const { book, clock, db } = rig();
    book.acquire(args('o1', 'c1'), clock.now());
    clock.advance(10_000);
    expect(book.holderOf('c1', clock.now())).toBeNull();
    expect(db.prepare('SELECT COUNT(*) AS n FROM session_leases').get()).toEqual({ n: 0 });
    expect(book.acquire(args('o2', 'c1'), clock.now()).ok).toBe(true);
    expect(book.acquire(args('o1', 'c3'), clock.now()).ok).toBe(true);
  });

  it('use moves the lease to a free connection and never onto a taken one', () => {
    const { book, clock } = rig();
    book.acquire(args('o1', 'c1'), clock.now());
    book.acquire(args('o2', 'c2', 'k2'), clock.now());
    expect(book.use('o1', 'k1', 1, 'c2', clock.now())).toMatchObject({ ok: false, refused: 'lease_connection_taken' });
    expect(book.use('o1', 'k1', 1, 'c3', clock.now())).toMatchObject({ ok: true, moved: true, lease: { connectionId: 'c3', generation: 1 } });
    expect(book.holderOf('c1', clock.now())).toBeNull();
    expect(book.holderOf('c3', clock.now())?.ownerHash).toBe('o1');
    expect(book.use('o1', 'k2', 1, 'c3', clock.now())).toMatchObject({ ok: false, refused: 'lease_key_mismatch' });
  });

  it('a restart reads every active lease back, with its generation', () => {
    const { book, clock, restart } = rig();
    book.acquire(args('o1', 'c1'), clock.now());
    book.renew('o1', 'k1', 1, 20_000, clock.now());
    book.acquire(args('o2', 'c2'), clock.now());
    book.revoke(book.holderOf('c2', clock.now())!.id, clock.now());
    const again = restart();
    expect(again.list(clock.now())).toEqual([expect.objectContaining({ ownerHash: 'o1', connectionId: 'c1', generation: 2, expiresAt: clock.now() + 20_000 })]);
    expect(again.acquire(args('o3', 'c1'), clock.now())).toMatchObject({ ok: false, refused: 'lease_connection_taken' });
    expect(again.acquire(args('o3', 'c2'), clock.now())).toMatchObject({ ok: true, lease: { generation: 4 } });
  });
});
