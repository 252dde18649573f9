// The lease state machine, pure, on a fake clock: acquire, renew (a new generation, the TTL
// restarted), the generation and key checks, lazy expiry at the exact instant, use as the final
// barrier (passes on the leased connection, moves to a free one, refuses a taken one), release
// and the operator's revoke.
import { describe, expect, it } from 'vitest';
import { leaseAt, next, type Lease, type LeaseState } from '../../../src/main/engine/routing/leases/leaseMachine';
import { FakeClock } from '../../support/fakeClock';

const base = { id: 'l1', ownerHash: 'h', clientKeyId: 'k1', connectionId: 'c1', generation: 7, ttlMs: 30_000, label: null };

function held(clock: FakeClock): { state: LeaseState; lease: Lease } {
  const step = next({ kind: 'free' }, { type: 'acquire', lease: base }, clock.now());
  if (step.state.kind !== 'held') throw new Error('not held');
  return { state: step.state, lease: step.state.lease };
}

describe('lease machine', () => {
  it('acquire holds the lease for its TTL; a held lease cannot be acquired again', () => {
    const clock = new FakeClock();
    const { state, lease } = held(clock);
    expect(lease).toMatchObject({ generation: 7, acquiredAt: clock.now(), renewedAt: clock.now(), expiresAt: clock.now() + 30_000 });
    expect(next(state, { type: 'acquire', lease: base }, clock.now())).toMatchObject({ refused: 'lease_owner_active', state });
  });

  it('expires lazily at the exact instant, and then nothing but acquire works', () => {
    const clock = new FakeClock();
    const { state } = held(clock);
    clock.advance(29_999);
    expect(leaseAt(state, clock.now()).kind).toBe('held');
    clock.advance(1);
    expect(leaseAt(state, clock.now())).toMatchObject({ kind: 'ended', why: 'expired' });
    expect(next(state, { type: 'renew', clientKeyId: 'k1', generation: 7, nextGeneration: 8, ttlMs: 30_000 }, clock.now()).refused).toBe('lease_not_found');
    expect(next(state, { type: 'use', clientKeyId: 'k1', generation: 7, connectionId: 'c1', connectionFree: true }, clock.now()).refused).toBe('lease_not_found');
    expect(next(state, { type: 'acquire', lease: { ...base, generation: 9 } }, clock.now()).state).toMatchObject({ kind: 'held', lease: { generation: 9 } });
  });

  it('renew issues the new generation and restarts the TTL; the old generation is stale', () => {
    const clock = new FakeClock();
    const { state } = held(clock);
    clock.advance(20_000);
    const renewed = next(state, { type: 'renew', clientKeyId: 'k1', generation: 7, nextGeneration: 12, ttlMs: 60_000 }, clock.now());
    expect(renewed.state).toMatchObject({ kind: 'held', lease: { generation: 12, renewedAt: clock.now(), expiresAt: clock.now() + 60_000, ttlMs: 60_000 } });
    clock.advance(30_000);
    expect(leaseAt(renewed.state, clock.now()).kind).toBe('held');
    expect(next(renewed.state, { type: 'use', clientKeyId: 'k1', generation: 7, connectionId: 'c1', connectionFree: true }, clock.now()).refused).toBe('lease_generation_stale');
    expect(next(renewed.state, { type: 'renew', clientKeyId: 'k1', generation: 7, nextGeneration: 13, ttlMs: 1 }, clock.now())).toMatchObject({ refused: 'lease_generation_stale', state: renewed.state });
  });

  it('every event checks the client key before the generation', () => {
    const clock = new FakeClock();
    const { state } = held(clock);
    for (const e of [
      { type: 'renew' as const, clientKeyId: 'k2', generation: 1, nextGeneration: 2, ttlMs: 1 },
      { type: 'release' as const, clientKeyId: 'k2', generation: 7 },
      { type: 'use' as const, clientKeyId: 'k2', generation: 7, connectionId: 'c1', connectionFree: true },
    ]) {
      expect(next(state, e, clock.now())).toMatchObject({ refused: 'lease_key_mismatch', state });
    }
  });

  it('use passes on the leased connection, moves the same generation to a free one, refuses a taken one', () => {
    const clock = new FakeClock();
    const { state } = held(clock);
    expect(next(state, { type: 'use', clientKeyId: 'k1', generation: 7, connectionId: 'c1', connectionFree: false }, clock.now())).toEqual({ state, refused: null, moved: false });
    const moved = next(state, { type: 'use', clientKeyId: 'k1', generation: 7, connectionId: 'c2', connectionFree: true }, clock.now());
    expect(moved).toMatchObject({ refused: null, moved: true, state: { kind: 'held', lease: { connectionId: 'c2', generation: 7 } } });
    expect(next(state, { type: 'use', clientKeyId: 'k1', generation: 7, connectionId: 'c3', connectionFree: false }, clock.now())).toMatchObject({ refused: 'lease_connection_taken', state });
  });

  it('release ends the lease with the current generation only; revoke ends it whatever it presents', () => {
    const clock = new FakeClock();
    const { state } = held(clock);
    expect(next(state, { type: 'release', clientKeyId: 'k1', generation: 6 }, clock.now()).refused).toBe('lease_generation_stale');
    const released = next(state, { type: 'release', clientKeyId: 'k1', generation: 7 }, clock.now());
    expect(released.state).toMatchObject({ kind: 'ended', why: 'released', at: clock.now() });
    expect(next(released.state, { type: 'release', clientKeyId: 'k1', generation: 7 }, clock.now()).refused).toBe('lease_not_found');
    expect(next(state, { type: 'revoke' }, clock.now()).state).toMatchObject({ kind: 'ended', why: 'revoked' });
    expect(next({ kind: 'free' }, { type: 'revoke' }, clock.now()).refused).toBe('lease_not_found');
  });
});
