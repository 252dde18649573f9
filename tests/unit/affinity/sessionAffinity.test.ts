// Pin selection and the pin's life, on a fake clock: created by the first success, followed
// while eligible (moved to the front, nothing else reordered), bypassed when excluded, moved to
// whichever target served, kept when it cannot serve the request, sliding TTL, 0 = off, written
// through on change and at most once a minute on use, and read back after a restart.
import { describe, expect, it } from 'vitest';
import { PIN_TOUCH_FLUSH_MS } from '../../../src/main/engine/routing/affinity/sessionAffinity';
import { selectPinned } from '../../../src/main/engine/routing/affinity/pinSelection';
import type { Target } from '../../../src/main/engine/routing/target';
import { affinityRig, call, plan, target } from './support';

const S = { 'x-session-id': 's-1' };

/** Routes one request of the session, then reports `served` (by connection index) as having served it. */
function request(r: ReturnType<typeof affinityRig>, served: number | null, order = [0, 1, 2], headers = S) {
  const c = call(headers);
  const p = plan(order.map((i) => target(r.conns[i]!)));
  const trace = r.affinity.route(c, p, r.clock.now());
  if (served !== null) r.affinity.served(c, p.order.find((t) => t.conn === r.conns[served])!);
  return { trace, order: p.order.map((t) => r.conns.indexOf(t.conn)) };
}

describe('selectPinned (pure)', () => {
  const r = affinityRig();
  const ts: Target[] = r.conns.map((c) => target(c));

  it('moves an eligible pinned target to the front and keeps the rest in order', () => {
    const order = [...ts];
    expect(selectPinned(order, { connectionId: ts[2]!.conn.id, targetKey: null }, { exclusion: () => null, absent: () => null })).toEqual({ pin: 'followed', reason: null });
    expect(order).toEqual([ts[2], ts[0], ts[1]]);
  });

  it('leaves the order alone when the pinned target is excluded, or absent', () => {
    const order = [...ts];
    const sel = selectPinned(order, { connectionId: ts[1]!.conn.id, targetKey: null }, { exclusion: () => ({ reason: 'cooling_down', until: 5, detail: null }), absent: () => null });
    expect(sel).toEqual({ pin: 'bypassed', reason: 'cooling_down' });
    expect(order).toEqual(ts);
    expect(selectPinned(order, { connectionId: 'gone', targetKey: null }, { exclusion: () => null, absent: () => 'no_connection' })).toEqual({ pin: 'bypassed', reason: 'no_connection' });
    expect(selectPinned(order, { connectionId: 'other-model', targetKey: null }, { exclusion: () => null, absent: () => null })).toEqual({ pin: 'not_candidate', reason: null });
    expect(order).toEqual(ts);
  });

  it('matches a combo pin by target key and connection', () => {
    const combo = (i: number, key: string): Target => ({ ...ts[0]!, model: key, combo: { id: 'k', name: 'k', index: i, key } });
    const order = [combo(0, 'a/x#'), combo(1, 'b/y#')];
    expect(selectPinned(order, { connectionId: ts[0]!.conn.id, targetKey: 'b/y#' }, { exclusion: () => null, absent: () => null }).pin).toBe('followed');
    expect(order.map((t) => t.combo!.index)).toEqual([1, 0]);
  });
});

describe('SessionAffinity', () => {
  it('the first success creates the pin; later requests put it first', () => {
    const r = affinityRig();
    expect(request(r, 1).trace).toMatchObject({ pin: 'none', result: 'created', session: 's-1', source: 'x-session-id' });
    expect(r.pinRows()).toEqual([expect.objectContaining({ connection_id: r.conns[1]!.id, session_id: 's-1', client_key_id: 'key-1', scope: '' })]);
    const second = request(r, 1);
    expect(second.order).toEqual([1, 0, 2]);
    expect(second.trace).toMatchObject({ pin: 'followed', result: 'kept', pinnedConnectionName: 'B' });
  });

  it('an excluded pinned connection is bypassed: the order is untouched and the pin moves to whoever served', () => {
    const r = affinityRig();
    request(r, 1);
    r.excluded.set(r.conns[1]!.id, { reason: 'model_lockout', until: r.clock.now() + 5_000, detail: null });
    const bypassed = request(r, 0);
    expect(bypassed.order).toEqual([0, 1, 2]);
    expect(bypassed.trace).toMatchObject({ pin: 'bypassed', reason: 'model_lockout', result: 'moved' });
    r.excluded.clear();
    expect(request(r, 0).order).toEqual([0, 1, 2]);
    expect(request(r, 0, [2, 1, 0]).order).toEqual([0, 2, 1]);
  });

  it('a pinned connection that failed on this request hands the pin to the one that served', () => {
    const r = affinityRig();
    request(r, 2);
    const failover = request(r, 0);
    expect(failover.order).toEqual([2, 0, 1]);
    expect(failover.trace).toMatchObject({ pin: 'followed', result: 'moved' });
    expect(request(r, null).order).toEqual([0, 1, 2]);
  });

  it('a continuation of the same request (a second ready response) moves the pin to the target that finished the answer', () => {
    const r = affinityRig();
    request(r, 2);
    const c = call(S);
    const p = plan([0, 1, 2].map((i) => target(r.conns[i]!)));
    const trace = r.affinity.route(c, p, r.clock.now())!;
    const at = (i: number) => p.order.find((t) => t.conn === r.conns[i])!;
    r.affinity.served(c, at(2)); // the pinned target's stream reached the client, then broke
    expect(trace.result).toBe('kept');
    r.affinity.served(c, at(0)); // the continuation finished it
    expect(trace.result).toBe('moved');
    expect(r.pinRows()).toEqual([expect.objectContaining({ connection_id: r.conns[0]!.id })]);
    r.affinity.served(c, at(1)); // and a third one, after a second break
    expect(request(r, null).order).toEqual([1, 0, 2]);
  });

  it('a continuation does not take a pin another request of the session moved meanwhile', () => {
    const r = affinityRig();
    request(r, 2);
    const c = call(S);
    const p = plan([0, 1, 2].map((i) => target(r.conns[i]!)));
    r.affinity.route(c, p, r.clock.now());
    r.affinity.served(c, p.order.find((t) => t.conn === r.conns[2])!);
    // Another request of the session fails over off the pin and is served by 1 (the pin moves there).
    expect(request(r, 1).trace?.result).toBe('moved');
    expect(request(r, null).order[0]).toBe(1);
    r.affinity.served(c, p.order.find((t) => t.conn === r.conns[0])!);
    expect(request(r, null).order[0]).toBe(1);
  });

  it('a pin whose connection cannot serve this request is kept (another model of the session)', () => {
    const r = affinityRig();
    request(r, 2);
    const other = request(r, 0, [0, 1]);
    expect(other.trace).toMatchObject({ pin: 'not_candidate', result: 'kept' });
    expect(request(r, null).order).toEqual([2, 0, 1]);
  });

  it('a disabled or deleted pinned connection is bypassed, so the pin moves', () => {
    const r = affinityRig();
    request(r, 2);
    const c = call(S);
    const p = plan([target(r.conns[0]!), target(r.conns[1]!)], { disabled: [r.conns[2]!] });
    expect(r.affinity.route(c, p, r.clock.now())).toMatchObject({ pin: 'bypassed', reason: 'disabled' });
    r.affinity.served(c, p.order[0]!);
    expect(request(r, null).order).toEqual([0, 1, 2]);
  });

  it('the TTL slides with use; an idle session past it starts over; 0 turns affinity off', () => {
    const r = affinityRig();
    request(r, 1);
    for (let i = 0; i < 5; i++) {
      r.clock.advance(50_000);
      expect(request(r, 1).trace?.pin).toBe('followed');
    }
    r.clock.advance(60_000);
    expect(request(r, 0).trace).toMatchObject({ pin: 'none', result: 'created' });
    r.ttl.ms = 0;
    expect(request(r, 2).trace).toBeNull();
    r.ttl.ms = 60_000;
    expect(request(r, null).order).toEqual([0, 1, 2]);
  });

  it('writes a pin when it changes, and its sliding expiry at most once a minute', () => {
    const r = affinityRig();
    request(r, 1);
    const created = r.clock.now();
    r.clock.advance(30_000);
    request(r, 1);
    expect(r.pinRows()[0]!.last_used_at).toBe(created);
    r.clock.advance(PIN_TOUCH_FLUSH_MS - 30_000);
    request(r, 1);
    expect(r.pinRows()[0]!.last_used_at).toBe(r.clock.now());
    r.clock.advance(1_000);
    r.excluded.set(r.conns[1]!.id, { reason: 'cooling_down', until: null, detail: null });
    request(r, 0);
    expect(r.pinRows()[0]).toMatchObject({ connection_id: r.conns[0]!.id, pinned_at: r.clock.now() });
  });

  it('a restart reads the pins back; expired ones are dropped; flush() stores the last use', () => {
    const r = affinityRig();
    request(r, 2);
    request(r, 1, [0, 1, 2], { 'x-session-id': 's-2' });
    r.clock.advance(20_000);
    request(r, 2);
    r.affinity.flush();
    const again = r.restart();
    const c = call(S);
    const p = plan(r.conns.map((x) => target(x)));
    expect(again.route(c, p, r.clock.now())).toMatchObject({ pin: 'followed', pinnedConnectionId: r.conns[2]!.id });
    r.clock.advance(45_000);
    const later = r.restart();
    expect(later.list(r.clock.now()).map((x) => x.session)).toEqual(['s-1']);
    expect(r.pinRows()).toHaveLength(1);
  });

  it('pins are per client key and per combo', () => {
    const r = affinityRig();
    request(r, 2);
    const other = call(S, 'key-2');
    const p = plan(r.conns.map((x) => target(x)));
    expect(r.affinity.route(other, p, r.clock.now())).toMatchObject({ pin: 'none' });
    const comboPlan = plan(r.conns.map((x) => target(x)), {
      combo: { id: 'combo-1', name: 'pool', strategy: 'priority', via: 'name', pattern: null, options: {}, unusable: [] },
    });
    expect(r.affinity.route(call(S), comboPlan, r.clock.now())).toMatchObject({ pin: 'none', comboId: 'combo-1' });
  });

  it('forget and forgetWhere remove pins from memory and the store', () => {
    const r = affinityRig();
    request(r, 2);
    request(r, 1, [0, 1, 2], { 'x-session-id': 's-2' });
    const [a, b] = r.affinity.list(r.clock.now());
    expect(r.affinity.forget(a!.id)).toBe(true);
    expect(r.affinity.forget(a!.id)).toBe(false);
    expect(r.affinity.forgetWhere((p) => p.connectionId === b!.connectionId)).toBe(1);
    expect(r.pinRows()).toHaveLength(0);
  });
});
