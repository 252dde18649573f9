// Session pins across the team (issue 26): a session that reaches another instance is routed the
// way it was routed here. The pin is keyed so that the same client key and session mean the same
// pin everywhere: the key's team id (a keyed hash of its SHA-256, never the key), the combo's name
// (not its local id) and the session; it names its connection by the connection's team id.
//
// Routing never waits for this: lookups stay in SessionAffinity's map, and what a request does to
// a pin is told here afterwards and decided in Redis in the background, by a Lua script: created
// only if the session has no pin yet ("first success wins" across the team), moved only if it is
// still where the request saw it, slid at most once a minute per pin (as SQLite is), dropped when
// forgotten or its target goes. When the team answers with another pin (someone else's first
// success, or a move made meanwhile), that pin replaces the one here. Every change is announced on
// the pins channel with a revision, and applied by the other instances.
//
// While Redis is away, pins work here alone; the changes are kept (the newest per pin) and merged
// when it returns: for one pin the later placement wins, between two pins of one session the
// earlier created, and the sliding expiry is the later of both.
import { createHash } from 'node:crypto';
import type { Clock } from '../../clock';
import type { PinRecord } from '../../store/sessionPinsRepo';
import { FOREIGN, type SessionTeamIds, type SessionTeamLink, type TeamPart } from '../sessionTeam';
import type { PinPlace } from './pinSelection';
import type { PinTeamHook, SessionAffinity } from './sessionAffinity';

/** A pin as the team stores it. */
export interface TeamPin {
  id: string;
  /** The client key's team id. */
  key: string;
  /** '' or the combo's name. */
  scope: string;
  session: string;
  source: PinRecord['source'];
  /** The connection's team id. */
  conn: string;
  /** A combo target's key, its connection part by team id. */
  targetKey: string | null;
  targetIndex: number | null;
  model: string | null;
  createdAt: number;
  pinnedAt: number;
  lastUsedAt: number;
  rev?: number;
}

interface Announcement {
  by: string;
  d: string;
  rev: number;
  pin?: TeamPin;
  /** For an ended pin: whose it was. */
  key?: string;
  scope?: string;
  session?: string;
  id?: string;
}

// ARGV: the pin's key, the revision counter's key, channel, instance id, operation, its arguments.
// Answers: { status, the pin as the team holds it (JSON) or '' }.
const PIN_SCRIPT = `
local K, REV, CH, BY, OP = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local cur = redis.call('GET', K)
local C = cur and cjson.decode(cur)
-- A JSON null decodes to cjson.null, not nil.
local function str(v)
  if v == nil or v == cjson.null then return '' end
  return v
end
local function save(p, ttl)
  p.rev = redis.call('INCR', REV)
  local raw = cjson.encode(p)
  redis.call('SET', K, raw, 'PX', math.max(1, math.floor(tonumber(ttl))))
  redis.call('PUBLISH', CH, cjson.encode({ by = BY, d = K, rev = p.rev, pin = p }))
  return raw
end

if OP == 'create' then
  if C then return { 'exists', cur } end
  return { 'ok', save(cjson.decode(ARGV[6]), ARGV[7]) }
end

if OP == 'move' then
  -- ARGV[8], ARGV[9]: the place the request saw (connection, target key or '').
  local P = cjson.decode(ARGV[6])
  if C then
    if C.conn ~= ARGV[8] or str(C.targetKey) ~= ARGV[9] then return { 'exists', cur } end
    P.id = C.id
    P.createdAt = C.createdAt
  end
  return { 'ok', save(P, ARGV[7]) }
end

if OP == 'touch' then
  -- ARGV[6] pin id, ARGV[7] last use, ARGV[8] model, ARGV[9] ttl
  if not C or C.id ~= ARGV[6] then return { 'gone', cur or '' } end
  if tonumber(ARGV[7]) <= tonumber(C.lastUsedAt) then return { 'ok', cur } end
  C.lastUsedAt = tonumber(ARGV[7])
  if ARGV[8] ~= '' then C.model = ARGV[8] end
  return { 'ok', save(C, ARGV[9]) }
end

if OP == 'drop' then
  if not C or (ARGV[6] ~= '' and C.id ~= ARGV[6]) then return { 'gone', cur or '' } end
  redis.call('DEL', K)
  local rev = redis.call('INCR', REV)
  redis.call('PUBLISH', CH, cjson.encode({ by = BY, d = K, rev = rev, key = C.key, scope = C.scope, session = C.session, id = C.id }))
  return { 'ok', '' }
end

if OP == 'merge' then
  -- ARGV[6] the pin as kept here while Redis was away, ARGV[7] its remaining time.
  local L = cjson.decode(ARGV[6])
  if not C then return { 'ok', save(L, ARGV[7]) } end
  local W = C
  if C.id == L.id then
    if tonumber(L.pinnedAt) > tonumber(C.pinnedAt) then W = L end
  elseif tonumber(L.createdAt) < tonumber(C.createdAt) or (tonumber(L.createdAt) == tonumber(C.createdAt) and L.id < C.id) then
    W = L
  end
  local last = math.max(tonumber(L.lastUsedAt), tonumber(C.lastUsedAt))
  if W == C and last == tonumber(C.lastUsedAt) then return { 'ok', cur } end
  W.lastUsedAt = last
  local ttl = math.max(tonumber(ARGV[7]), redis.call('PTTL', K))
  return { 'ok', save(W, ttl) }
end

return redis.error_reply('unknown pin operation')
`;

/** Kept while Redis is away: the newest state of each changed pin (null: dropped). */
const MAX_KEPT = 20_000;
/** Revisions remembered (one per pin seen). */
const MAX_REVS = 40_000;

export interface TeamPinsOptions {
  affinity: SessionAffinity;
  link: SessionTeamLink;
  ids: SessionTeamIds;
  clock: Clock;
  /** sessionAffinityTtlMs. */
  ttlMs(): number;
}

export class TeamPins implements PinTeamHook, TeamPart {
  readonly channel: string;
  private readonly prefix: string;
  private readonly revKey: string;
  private readonly run: (...args: string[]) => Promise<unknown>;
  private readonly revs = new Map<string, number>();
  /** By pin key: the pin as it is here, or null and the id of the pin dropped. */
  private readonly kept = new Map<string, { pin: PinRecord | null; id: string }>();
  /** Too much changed while Redis was away to keep each: every pin is merged on return. */
  private overflow = false;
  private announced: Set<string> | null = null;

  constructor(private readonly o: TeamPinsOptions) {
    this.prefix = `${o.link.prefix}pin/`;
    this.channel = `${this.prefix}changes`;
    this.revKey = `${this.prefix}rev`;
    this.run = o.link.script('switchyardPin', PIN_SCRIPT);
    o.affinity.setTeam(this);
  }

  /** The pin's key in Redis: a digest of the client key's team id, the scope's name and the session. */
  private digest(key: string, scope: string, session: string): string {
    return `${this.prefix}p:${createHash('sha256').update(`${key}\u0000${scope}\u0000${session}`).digest('base64url').slice(0, 32)}`;
  }

  private toTeam(p: PinRecord): { d: string; pin: TeamPin } | null {
    const key = this.o.ids.keyOf(p.clientKeyId);
    const scope = this.o.ids.scopeOf(p.scope);
    if (key === null || scope === null) return null;
    const pin: TeamPin = {
      id: p.id,
      key,
      scope,
      session: p.session,
      source: p.source,
      conn: this.o.ids.connOf(p.connectionId),
      targetKey: this.teamTargetKey(p.targetKey),
      targetIndex: p.targetIndex,
      model: p.model,
      createdAt: p.createdAt,
      pinnedAt: p.pinnedAt,
      lastUsedAt: p.lastUsedAt,
    };
    return { d: this.digest(key, scope, p.session), pin };
  }

  private toLocal(t: TeamPin): PinRecord | null {
    const clientKeyId = this.o.ids.localKey(t.key);
    const scope = this.o.ids.localScope(t.scope);
    // A key this workstation does not hold, or a combo it does not have: no request here can use it.
    if (clientKeyId === null || scope === null) return null;
    return {
      id: t.id,
      clientKeyId,
      scope,
      session: t.session,
      source: t.source,
      connectionId: this.o.ids.connHere(t.conn),
      targetKey: this.localTargetKey(t.targetKey),
      targetIndex: typeof t.targetIndex === 'number' ? t.targetIndex : null,
      model: typeof t.model === 'string' ? t.model : null,
      createdAt: Number(t.createdAt),
      pinnedAt: Number(t.pinnedAt),
      lastUsedAt: Number(t.lastUsedAt),
    };
  }

  /** provider/model#connection: the connection part by team id (empty for a provider's pool). */
  private teamTargetKey(k: string | null): string | null {
    if (k === null) return null;
    const i = k.lastIndexOf('#');
    const conn = k.slice(i + 1);
    return conn === '' ? k : `${k.slice(0, i)}#${this.o.ids.connOf(conn)}`;
  }

  private localTargetKey(k: string | null): string | null {
    if (typeof k !== 'string') return null;
    const i = k.lastIndexOf('#');
    const conn = k.slice(i + 1);
    return conn === '' || i < 0 ? k : `${k.slice(0, i)}#${this.o.ids.localConn(conn) ?? `${FOREIGN}${conn}`}`;
  }

  private op(d: string, op: string, ...args: string[]): Promise<[string, string] | undefined> {
    return this.run(d, this.revKey, this.channel, this.o.link.instanceId, op, ...args) as Promise<[string, string] | undefined>;
  }

  /** The team's pin for this session into the affinity map (unless a newer revision was applied). */
  private take(d: string, from: string | TeamPin): void {
    let t: TeamPin;
    try {
      t = typeof from === 'string' ? (JSON.parse(from) as TeamPin) : from;
    } catch {
      return;
    }
    if (!t || typeof t.id !== 'string') return;
    const rev = Number(t.rev ?? 0);
    if (rev < (this.revs.get(d) ?? 0)) return;
    this.noteRev(d, rev);
    const rec = this.toLocal(t);
    if (rec) this.o.affinity.adopt(rec);
  }

  private noteRev(d: string, rev: number): void {
    // Bounded: forgetting old revisions only lets an announcement that is late by minutes apply again.
    if (this.revs.size >= MAX_REVS && !this.revs.has(d)) this.revs.clear();
    this.revs.set(d, rev);
  }

  /** Runs a change in the background; while Redis is away it is kept for the merge. */
  private send(p: PinRecord, op: string, args: (t: { d: string; pin: TeamPin }) => string[], onAnswer: (r: [string, string], d: string) => void): void {
    const t = this.toTeam(p);
    if (!t) return;
    if (!this.o.link.up) return this.keep(t.d, p, p.id);
    void this.op(t.d, op, ...args(t)).then((r) => {
      if (r) onAnswer(r, t.d);
      else this.keep(t.d, p, p.id);
    });
  }

  private keep(d: string, pin: PinRecord | null, id: string): void {
    if (this.overflow) return;
    this.kept.set(d, { pin: pin && { ...pin }, id });
    if (this.kept.size > MAX_KEPT) {
      this.kept.clear();
      this.overflow = true;
    }
  }

  created(pin: PinRecord, ttlMs: number): void {
    this.send(
      pin,
      'create',
      (t) => [JSON.stringify(t.pin), String(ttlMs)],
      // 'exists': another instance's first success came first, and that pin is the session's.
      ([, raw], d) => this.take(d, raw),
    );
  }

  moved(pin: PinRecord, from: PinPlace, ttlMs: number): void {
    const fromConn = this.o.ids.connOf(from.connectionId);
    const fromKey = this.teamTargetKey(from.targetKey) ?? '';
    this.send(
      pin,
      'move',
      (t) => [JSON.stringify(t.pin), String(ttlMs), fromConn, fromKey],
      // 'exists': moved or re-created meanwhile elsewhere; that placement stands.
      ([, raw], d) => this.take(d, raw),
    );
  }

  touched(pin: PinRecord, ttlMs: number): void {
    this.send(
      pin,
      'touch',
      () => [pin.id, String(pin.lastUsedAt), pin.model ?? '', String(ttlMs)],
      ([status, raw], d) => {
        if (status === 'ok') return this.take(d, raw);
        // Ended on the team (forgotten elsewhere, or expired there): it ends here too, and the
        // session's next success creates it again.
        if (raw) this.take(d, raw);
        else this.o.affinity.remove(pin.clientKeyId, pin.scope, pin.session, pin.id);
      },
    );
  }

  dropped(pin: PinRecord): void {
    const t = this.toTeam(pin);
    if (!t) return;
    if (!this.o.link.up) return this.keep(t.d, null, pin.id);
    void this.op(t.d, 'drop', pin.id).then((r) => {
      if (!r) this.keep(t.d, null, pin.id);
    });
  }

  receive(message: string): void {
    let a: Announcement;
    try {
      a = JSON.parse(message) as Announcement;
    } catch {
      return;
    }
    if (a.by === this.o.link.instanceId || typeof a.d !== 'string') return;
    const rev = Number(a.rev ?? 0);
    if (rev <= (this.revs.get(a.d) ?? 0)) return;
    this.announced?.add(a.d);
    if (a.pin && typeof a.pin === 'object') return this.take(a.d, { ...a.pin, rev });
    this.noteRev(a.d, rev);
    if (typeof a.key !== 'string' || typeof a.session !== 'string') return;
    const clientKeyId = this.o.ids.localKey(a.key);
    const scope = this.o.ids.localScope(a.scope ?? '');
    if (clientKeyId !== null && scope !== null) this.o.affinity.remove(clientKeyId, scope, a.session, a.id);
  }

  async reconcile(lost: boolean): Promise<boolean> {
    const ttl = this.o.ttlMs();
    this.announced = new Set();
    try {
      const now = this.o.clock.now();
      const all = lost || this.overflow;
      const merge: [string, PinRecord | null, string][] = [...this.kept].map(([d, k]) => [d, k.pin, k.id]);
      if (all) {
        for (const p of this.o.affinity.list(now)) {
          const t = this.toTeam(p);
          if (t && !this.kept.has(t.d)) merge.push([t.d, p, p.id]);
        }
      }
      // Sent together (ioredis pipelines what is in flight), a batch at a time.
      for (let i = 0; i < merge.length; i += 100) {
        const batch = merge.slice(i, i + 100);
        const answers = await Promise.all(
          batch.map(([d, p, id]) => {
            if (p === null) return this.op(d, 'drop', id);
            const t = this.toTeam(p);
            const left = ttl - (now - p.lastUsedAt);
            if (!t || left <= 0) return Promise.resolve<[string, string]>(['ok', '']);
            return this.op(d, 'merge', JSON.stringify(t.pin), String(left));
          }),
        );
        if (answers.some((r) => r === undefined)) return false;
        batch.forEach(([d], j) => {
          this.kept.delete(d);
          const r = answers[j]!;
          if (r[1]) this.take(d, r[1]);
        });
      }
      this.overflow = false;
      const values = await this.o.link.values(`${this.prefix}p:*`);
      if (!values) return false;
      const held = new Set<string>();
      for (const raw of values) {
        let t: TeamPin;
        try {
          t = JSON.parse(raw) as TeamPin;
        } catch {
          continue;
        }
        if (typeof t.key !== 'string' || typeof t.session !== 'string') continue;
        const d = this.digest(t.key, t.scope ?? '', t.session);
        held.add(d);
        if (!this.announced.has(d)) this.take(d, t);
      }
      // Pins this copy holds that the team does not: they ended there while this instance was away.
      for (const p of this.o.affinity.list(this.o.clock.now())) {
        const t = this.toTeam(p);
        if (t && !held.has(t.d) && !this.announced.has(t.d)) this.o.affinity.remove(p.clientKeyId, p.scope, p.session, p.id);
      }
      return true;
    } finally {
      this.announced = null;
    }
  }
}
