// Session affinity (SPEC §2c): a session's requests go to the connection (for a combo: the combo
// target) that served the session last, for as long as it is eligible. The pin is a preference,
// never a gate: right after planning, an eligible pinned target moves to the front of the order
// and nothing else changes; an ineligible one is left where the strategy put it, the request
// fails over normally, and the pin moves to whichever target served. A pin is created on the
// session's first success and lives `sessionAffinityTtlMs` after its last use (sliding; 0 turns
// affinity off). Pins are scoped by client key, and by combo (a combo's pins name its targets).
//
// Hot path: one header scan and one Map lookup. Pins are written through to SQLite when they are
// created or move; the sliding expiry is written at most once a minute per pin (and at shutdown),
// so a restart may end a pin up to a minute early, never late. Listeners hear 'pins' when a pin is
// created, moves or ends, and 'slide' when only a pin's last use moved (every request of a pinned
// session: a listener must be cheap, e.g. touch a coalesced push).
//
// Team mode (issue 26): the pins are the team's (teamPins.ts). This map stays the instance's copy,
// read locally on the request path; a created, moved, slid (at the same throttle as SQLite) or
// forgotten pin is told to the team in the background, and the team's answers and other
// instances' changes come back through `adopt` / `remove`. A pin whose connection this instance
// does not have (FOREIGN) is left alone here: not followed, never moved.
import { randomUUID } from 'node:crypto';
import type { AffinityTrace } from '../../../../shared/model';
import type { Clock } from '../../clock';
import { topLevelOf, type InboundCall } from '../../proxy/inbound';
import type { Exclusion } from '../../resilience/port';
import type { PinRecord, SessionPinsRepo } from '../../store/sessionPinsRepo';
import type { RoutePlan } from '../plan';
import { isForeign } from '../sessionTeam';
import type { Target } from '../target';
import { samePlace, selectPinned, type PinPlace } from './pinSelection';
import { sessionKeyOf, type SessionKey } from './sessionKey';

/** The sliding expiry reaches SQLite at most this often per pin. */
export const PIN_TOUCH_FLUSH_MS = 60_000;
/** Pins held in memory; beyond it the least recently used go first. */
export const MAX_PINS = 10_000;

export interface AffinityDeps {
  repo: SessionPinsRepo;
  clock: Clock;
  /** sessionAffinityTtlMs, read per request (0 = off). */
  ttlMs(): number;
  exclusion(target: Target, now: number): Exclusion | null;
  connectionName(id: string): string | null;
}

interface LivePin extends PinRecord {
  /** When lastUsedAt was last written. */
  flushedAt: number;
}

interface RequestState {
  key: string;
  scope: string;
  clientKeyId: string;
  session: SessionKey;
  /** The pin's place when the request was routed (null: no pin yet). */
  seen: PinPlace | null;
  trace: AffinityTrace;
  /**
   * Set once a response of this request was ready: where that success left the pin, when it was
   * there (null: it was left elsewhere). A later ready response of the same request (a
   * continuation of a broken answer) moves the pin on from there.
   */
  served?: PinPlace | null;
}

/** What changed: the set of pins (created, moved, ended), or only a pin's sliding expiry. */
export type PinChange = 'pins' | 'slide';

/** Team mode: what this instance did to a pin, for the team (each call returns at once). */
export interface PinTeamHook {
  /** A first success created it. */
  created(pin: PinRecord, ttlMs: number): void;
  /** A success elsewhere moved it from `from` (the place this request saw). */
  moved(pin: PinRecord, from: PinPlace, ttlMs: number): void;
  /** Its sliding expiry reached the store (at most once a minute). */
  touched(pin: PinRecord, ttlMs: number): void;
  /** Forgotten by the operator, or its connection or combo went. */
  dropped(pin: PinRecord): void;
}

const mapKey = (clientKeyId: string, scope: string, session: string) => `${clientKeyId}\u0001${scope}\u0001${session}`;

export class SessionAffinity {
  private readonly pins = new Map<string, LivePin>();
  private readonly keyById = new Map<string, string>();
  private readonly requests = new WeakMap<InboundCall, RequestState>();
  private readonly listeners = new Set<(change: PinChange) => void>();
  private team: PinTeamHook | null = null;

  constructor(private readonly d: AffinityDeps) {
    const now = d.clock.now();
    const ttl = d.ttlMs();
    for (const p of d.repo.all()) {
      if (ttl > 0 && p.lastUsedAt + ttl <= now) d.repo.delete(p.id);
      else this.put({ ...p, flushedAt: p.lastUsedAt });
    }
  }

  /** Team mode: the team layer hears of every pin change made here. */
  setTeam(hook: PinTeamHook): void {
    this.team = hook;
  }

  onChange(fn: (change: PinChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(change: PinChange): void {
    for (const fn of this.listeners) fn(change);
  }

  private alive(p: PinRecord, now: number, ttl: number): boolean {
    return ttl > 0 && now - p.lastUsedAt < ttl;
  }

  private put(p: LivePin): void {
    const key = mapKey(p.clientKeyId, p.scope, p.session);
    this.pins.delete(key);
    this.pins.set(key, p); // Map order ≈ least recently used first
    this.keyById.set(p.id, key);
  }

  /** `tell`: the team drops it too (a forget, a gone target; not an expiry, which Redis sees itself). */
  private drop(p: LivePin, tell = false): void {
    const key = mapKey(p.clientKeyId, p.scope, p.session);
    if (this.pins.get(key) === p) this.pins.delete(key);
    this.keyById.delete(p.id);
    this.d.repo.delete(p.id);
    this.changed('pins');
    if (tell) this.team?.dropped(p);
  }

  /**
   * Right after planning (and after the breaker's probe order): puts the session's eligible
   * pinned target first. Returns the request's affinity trace, or null when the request has no
   * session or affinity is off.
   */
  route(call: InboundCall, plan: RoutePlan, now: number): AffinityTrace | null {
    const ttl = this.d.ttlMs();
    if (ttl <= 0) return null;
    const session = sessionKeyOf(call.req.headers, (k) => topLevelOf(call, k));
    if (!session) return null;
    const scope = plan.combo?.id ?? '';
    const clientKeyId = call.clientKeyId ?? '';
    const key = mapKey(clientKeyId, scope, session.id);
    let pin = this.pins.get(key) ?? null;
    if (pin && !this.alive(pin, now, ttl)) {
      this.drop(pin);
      pin = null;
    }
    const trace: AffinityTrace = {
      session: session.id,
      source: session.source,
      comboId: plan.combo?.id ?? null,
      pinnedConnectionId: pin?.connectionId ?? null,
      pinnedConnectionName: pin ? this.d.connectionName(pin.connectionId) : null,
      pin: 'none',
      reason: null,
      result: 'kept',
    };
    if (pin) {
      const sel = selectPinned(plan.order, pin, {
        exclusion: (t) => this.d.exclusion(t, now),
        absent: (p) => absentReason(p, plan, (id) => this.d.connectionName(id) !== null),
      });
      trace.pin = sel.pin;
      trace.reason = sel.reason;
    }
    this.requests.set(call, {
      key,
      scope,
      clientKeyId,
      session,
      seen: pin ? { connectionId: pin.connectionId, targetKey: pin.targetKey } : null,
      trace,
    });
    return trace;
  }

  /** This request carries a session the affinity follows (cheap: one map read). */
  tracks(call: InboundCall): boolean {
    return this.requests.has(call);
  }

  /** Whether this attempt goes to the target the session's pin put first. */
  followsPin(call: InboundCall, target: Target): boolean {
    const st = this.requests.get(call);
    return !!st && st.trace.pin === 'followed' && st.seen !== null && samePlace(st.seen, target);
  }

  /**
   * A response from `target` is ready: the first success creates the pin, a success elsewhere
   * than a pin this request saw moves it there, a success on the pinned target slides its expiry.
   * A later ready response of the same request (a continuation of its broken answer) moves the pin
   * this request placed on to the target that finishes the answer.
   */
  served(call: InboundCall, target: Target): void {
    const st = this.requests.get(call);
    if (!st) return;
    const now = this.d.clock.now();
    const ttl = this.d.ttlMs();
    if (ttl <= 0) return;
    let pin = this.pins.get(st.key) ?? null;
    if (pin && !this.alive(pin, now, ttl)) {
      this.drop(pin);
      pin = null;
    }
    if (st.served !== undefined) return this.continued(st, pin, target, now);
    this.settle(st, pin, target, now, ttl);
    const after = this.pins.get(st.key);
    st.served = after && samePlace(after, target) ? this.placeOf(target, st) : null;
  }

  /** The pin's place for `target` in this request's scope. */
  private placeOf(target: Target, st: RequestState): PinPlace {
    const p = this.place(st, target);
    return { connectionId: p.connectionId, targetKey: p.targetKey };
  }

  /**
   * A continuation's target finished the answer another target's broken stream began: the pin
   * this request placed follows it (unless another request of the session moved it meanwhile).
   */
  private continued(st: RequestState, pin: LivePin | null, target: Target, now: number): void {
    if (!pin) return;
    const left = st.served;
    const untouched = left !== null && left !== undefined && pin.connectionId === left.connectionId && pin.targetKey === left.targetKey;
    if (!untouched || samePlace(pin, target)) return this.touch(pin, target, now);
    this.movePin(pin, st, target, now);
    st.served = this.placeOf(target, st);
  }

  private movePin(pin: LivePin, st: RequestState, target: Target, now: number): void {
    const from: PinPlace = { connectionId: pin.connectionId, targetKey: pin.targetKey };
    Object.assign(pin, this.place(st, target), { source: st.session.source, pinnedAt: now, lastUsedAt: now, flushedAt: now });
    this.put(pin);
    this.d.repo.save(pin);
    st.trace.result = 'moved';
    this.changed('pins');
    this.team?.moved(pin, from, this.d.ttlMs());
  }

  /** The first ready response of the request: create, move or slide the pin. */
  private settle(st: RequestState, pin: LivePin | null, target: Target, now: number, ttl: number): void {
    if (pin) {
      const unchanged = st.seen !== null && pin.connectionId === st.seen.connectionId && pin.targetKey === st.seen.targetKey;
      // Another request of the session moved or created it meanwhile, or this request could not
      // have used it: the pin stays where it is.
      if (samePlace(pin, target) || st.trace.pin === 'not_candidate' || !unchanged) return this.touch(pin, target, now);
      return this.movePin(pin, st, target, now);
    }
    this.makeRoom(now, ttl);
    const created: LivePin = {
      id: randomUUID(),
      clientKeyId: st.clientKeyId,
      scope: st.scope,
      session: st.session.id,
      source: st.session.source,
      ...this.place(st, target),
      createdAt: now,
      pinnedAt: now,
      lastUsedAt: now,
      flushedAt: now,
    };
    this.put(created);
    this.d.repo.save(created);
    st.trace.result = 'created';
    this.changed('pins');
    this.team?.created(created, ttl);
  }

  private place(st: RequestState, target: Target): Pick<PinRecord, 'connectionId' | 'targetKey' | 'targetIndex' | 'model'> {
    const combo = st.scope !== '' ? target.combo : undefined;
    return { connectionId: target.conn.id, targetKey: combo?.key ?? null, targetIndex: combo?.index ?? null, model: target.model };
  }

  private touch(pin: LivePin, target: Target, now: number): void {
    pin.lastUsedAt = now;
    if (samePlace(pin, target)) pin.model = target.model;
    this.changed('slide');
    if (now - pin.flushedAt >= PIN_TOUCH_FLUSH_MS) {
      pin.flushedAt = now;
      this.d.repo.touch(pin.id, now, pin.model);
      this.put(pin); // eviction order: least recently used to the minute
      this.team?.touched(pin, this.d.ttlMs());
    }
  }

  /** Keeps the map bounded: expired pins go first, then the least recently used. */
  private makeRoom(now: number, ttl: number): void {
    if (this.pins.size < MAX_PINS) return;
    for (const p of [...this.pins.values()]) if (!this.alive(p, now, ttl)) this.drop(p);
    for (const p of this.pins.values()) {
      if (this.pins.size < MAX_PINS) break;
      this.drop(p);
    }
  }

  /** Live pins (expired ones are forgotten on the way), least recently used first. */
  list(now: number): (PinRecord & { expiresAt: number })[] {
    const ttl = this.d.ttlMs();
    const out: (PinRecord & { expiresAt: number })[] = [];
    for (const p of [...this.pins.values()]) {
      if (ttl > 0 && !this.alive(p, now, ttl)) {
        this.drop(p);
        continue;
      }
      const { flushedAt: _f, ...rec } = p;
      out.push({ ...rec, expiresAt: p.lastUsedAt + ttl });
    }
    return out;
  }

  /** Forgets one pin (the dashboard's Forget); its session's next request is routed as new. */
  forget(id: string): boolean {
    const key = this.keyById.get(id);
    const p = key ? this.pins.get(key) : undefined;
    if (!p) return false;
    this.drop(p, true);
    return true;
  }

  /** Forgets the pins to a deleted connection, or of a deleted combo. */
  forgetWhere(match: (p: PinRecord) => boolean): number {
    let n = 0;
    for (const p of [...this.pins.values()]) {
      if (!match(p)) continue;
      this.drop(p, true);
      n++;
    }
    return n;
  }

  /** The pin of a session here, if any (expired ones included: the caller decides). */
  find(clientKeyId: string, scope: string, session: string): PinRecord | null {
    return this.pins.get(mapKey(clientKeyId, scope, session)) ?? null;
  }

  /**
   * Team mode: the team holds this pin (its answer to a change made here, or another instance's
   * change). It replaces this session's pin here; nothing is told back to the team.
   */
  adopt(rec: PinRecord): void {
    const key = mapKey(rec.clientKeyId, rec.scope, rec.session);
    const cur = this.pins.get(key);
    if (cur && samePin(cur, rec)) {
      if (rec.lastUsedAt <= cur.lastUsedAt) return;
      // Only its sliding expiry moved (another instance's use).
      cur.lastUsedAt = rec.lastUsedAt;
      cur.model = rec.model;
      cur.flushedAt = rec.lastUsedAt;
      this.d.repo.touch(cur.id, cur.lastUsedAt, cur.model);
      this.put(cur);
      this.changed('slide');
      return;
    }
    if (cur) this.keyById.delete(cur.id);
    const live: LivePin = { ...rec, flushedAt: rec.lastUsedAt };
    if (!cur) this.makeRoom(this.d.clock.now(), this.d.ttlMs());
    this.put(live);
    this.d.repo.save(live);
    this.changed('pins');
  }

  /** Team mode: the team holds no pin for this session any more. */
  remove(clientKeyId: string, scope: string, session: string, id?: string): void {
    const p = this.pins.get(mapKey(clientKeyId, scope, session));
    if (p && (id === undefined || p.id === id)) this.drop(p);
  }

  /** Writes every sliding expiry not yet stored (at shutdown). */
  flush(): void {
    for (const p of this.pins.values()) {
      if (p.lastUsedAt === p.flushedAt) continue;
      p.flushedAt = p.lastUsedAt;
      this.d.repo.touch(p.id, p.lastUsedAt, p.model);
    }
  }
}

/**
 * Why a pinned place that belongs to this route is missing from its order, or null when the
 * pinned connection simply does not serve this request (plain routing, another model).
 */
function absentReason(pin: PinPlace, plan: RoutePlan, exists: (id: string) => boolean): string | null {
  // Team mode: a connection this instance does not have; the pin is the other instances' to move.
  if (isForeign(pin.connectionId)) return null;
  if (plan.combo) {
    const u = plan.combo.unusable.find((x) => x.conn?.id === pin.connectionId);
    return u ? u.reason : 'not_in_combo';
  }
  if (plan.disabled.some((c) => c.id === pin.connectionId)) return 'disabled';
  if (!exists(pin.connectionId)) return 'no_connection';
  return null;
}

const samePin = (a: PinRecord, b: PinRecord): boolean =>
  a.id === b.id && a.connectionId === b.connectionId && a.targetKey === b.targetKey && a.pinnedAt === b.pinnedAt;
