// The team's shared state (issue 26): named tables of small records (a connection's health, a
// provider's breaker, a model lockout, a session pin ...) that every instance keeps locally and
// Redis keeps for the team. The engine's layers stay what they are: they read their own state on
// the request path, synchronously, with no round trip. What changes is that a layer that changes a
// shared record publishes it (`table.publish`), and that records other instances published reach
// it through `apply` (without being published again).
//
// Versions, not clocks, decide: each record carries a version from a hybrid logical clock (the
// engine clock in microseconds, never behind the highest version this instance has seen, so clock
// skew between workstations cannot make an older write win), and the last writer by version wins,
// in Redis too: one Lua script writes a record only if it is newer than what Redis holds, and
// publishes it in the same step. A deleted record leaves a tombstone for a minute, so a late copy
// of the record cannot bring it back.
//
// Redis is a dependency that fails: while the link is down, publishes are kept (the newest per
// record) and written when it returns; then every table is read back and what is newer there is
// applied here (reconcile). Nothing here ever waits on Redis on the request path: `publish` returns
// at once, and `settled()` (which a failure path may await before answering) is bounded by the
// link's command timeout.
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { RedisLink } from './redisLink';

/** A record as it travels: the table, the record's key, its version, who wrote it, the value (null: deleted). */
export interface Envelope<V = unknown> {
  t: string;
  k: string;
  ver: number;
  by: string;
  v: V | null;
}

export interface SharedTable<V> {
  readonly name: string;
  /**
   * This instance changed the record: the team gets it. `ttlMs`: how long the record matters (a
   * cooldown's remaining time, a lease's); Redis forgets it then. null `value`: the record is gone.
   */
  publish(key: string, value: V | null, ttlMs?: number | null): void;
}

/** What a table does with a record another instance published (or that reconciling found newer). */
export type ApplyFn<V> = (key: string, value: V | null, from: string) => void;

const TOMBSTONE_MS = 60_000;

// KEYS[1] the record's key, KEYS[2] the channel; ARGV: envelope JSON, version, ttl ms (0: none),
// author. Writes and publishes only when the record is newer than the stored one (the same version
// from two instances: the greater author wins, on every instance alike); returns 1 if written.
const WRITE_IF_NEWER = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, old = pcall(cjson.decode, cur)
  if ok and old and tonumber(old.ver) then
    local ov, nv = tonumber(old.ver), tonumber(ARGV[2])
    if ov > nv or (ov == nv and tostring(old.by) >= ARGV[4]) then return 0 end
  end
end
local ttl = tonumber(ARGV[3])
if ttl and ttl > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl) else redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('PUBLISH', KEYS[2], ARGV[1])
return 1
`;

export interface ReplicatorOptions {
  link: RedisLink;
  /** Key prefix of this team, e.g. "sy:acme:" */
  prefix: string;
  instanceId: string;
  clock: Clock;
  log: Logger;
}

export class Replicator {
  private readonly tables = new Map<string, ApplyFn<unknown>>();
  /** The version (and author) of each record this instance holds (written or applied), by "table\0key". */
  private readonly versions = new Map<string, { ver: number; by: string }>();
  /** The highest version seen anywhere: versions written here are above it. */
  private high = 0;
  /** Publishes not yet in Redis (the link was down, or the write failed): the newest per record. */
  private readonly dirty = new Map<string, { env: Envelope; ttlMs: number }>();
  /** Writes in flight, for settled(). */
  private inflight = new Set<Promise<unknown>>();
  private readonly channel: string;
  private subscribed = false;
  private reconciling: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly o: ReplicatorOptions) {
    this.channel = `${o.prefix}state`;
    o.link.sub.on('message', (channel: string, message: string) => {
      if (channel === this.channel) this.receive(message);
    });
    o.link.onStatus((s) => {
      if (s.state === 'connected') void this.resync();
    });
  }

  /** A table of shared records; `apply` receives what other instances publish. */
  table<V>(name: string, apply: ApplyFn<V>): SharedTable<V> {
    if (name.includes(':')) throw new Error(`a shared table's name has no colon: ${name}`);
    this.tables.set(name, apply as ApplyFn<unknown>);
    return { name, publish: (key, value, ttlMs) => this.publish(name, key, value, ttlMs ?? null) };
  }

  /** Starts following the team: subscribes, writes what is pending and reads back what is newer. */
  async start(): Promise<void> {
    if (this.o.link.up) await this.resync();
  }

  /** Resolves once every write handed over so far has been answered (or the link's time bound passed). */
  async settled(): Promise<void> {
    if (this.inflight.size === 0) return;
    await Promise.race([Promise.allSettled([...this.inflight]), new Promise<void>((r) => this.o.clock.setTimer(r, this.o.link.commandTimeoutMs))]);
  }

  /** The version this instance holds for a record (0: none). */
  versionOf(table: string, key: string): number {
    return this.versions.get(`${table}\u0000${key}`)?.ver ?? 0;
  }

  get pending(): number {
    return this.dirty.size;
  }

  private nextVersion(): number {
    this.high = Math.max(this.o.clock.now() * 1000, this.high + 1);
    return this.high;
  }

  private redisKey(table: string, key: string): string {
    return `${this.o.prefix}${table}:${key}`;
  }

  private publish(table: string, key: string, value: unknown, ttlMs: number | null): void {
    if (this.closed) return;
    const env: Envelope = { t: table, k: key, ver: this.nextVersion(), by: this.o.instanceId, v: value };
    this.versions.set(`${table}\u0000${key}`, { ver: env.ver, by: env.by });
    const ttl = value === null ? TOMBSTONE_MS : ttlMs !== null && ttlMs > 0 ? Math.ceil(ttlMs) : 0;
    if (!this.o.link.up || this.reconciling) {
      this.dirty.set(`${table}\u0000${key}`, { env, ttlMs: ttl });
      return;
    }
    this.write(env, ttl);
  }

  private write(env: Envelope, ttlMs: number): void {
    const p = this.o.link.client
      .eval(WRITE_IF_NEWER, 2, this.redisKey(env.t, env.k), this.channel, JSON.stringify(env), String(env.ver), String(ttlMs), env.by)
      .catch((err: unknown) => {
        // Kept for the next reconcile; the link decides whether this means it is down.
        const id = `${env.t}\u0000${env.k}`;
        const kept = this.dirty.get(id);
        if (!kept || kept.env.ver < env.ver) this.dirty.set(id, { env, ttlMs });
        this.o.link.failed(err);
      })
      .finally(() => this.inflight.delete(p));
    this.inflight.add(p);
  }

  private receive(message: string): void {
    let env: Envelope;
    try {
      env = JSON.parse(message) as Envelope;
    } catch {
      return;
    }
    if (env.by === this.o.instanceId) return;
    this.offer(env);
  }

  /** A record from the team: applied when newer than the one held here. */
  private offer(env: Envelope): void {
    if (typeof env.ver !== 'number' || typeof env.t !== 'string' || typeof env.k !== 'string') return;
    this.high = Math.max(this.high, env.ver);
    const id = `${env.t}\u0000${env.k}`;
    const held = this.versions.get(id);
    if (held && (held.ver > env.ver || (held.ver === env.ver && held.by >= env.by))) return;
    const apply = this.tables.get(env.t);
    if (!apply) return;
    this.versions.set(id, { ver: env.ver, by: String(env.by) });
    // A remote record newer than one waiting to be written here supersedes it.
    const kept = this.dirty.get(id);
    if (kept && (kept.env.ver < env.ver || (kept.env.ver === env.ver && kept.env.by < env.by))) this.dirty.delete(id);
    try {
      apply(env.k, env.v, env.by);
    } catch (err) {
      this.o.log.warn('team.applyFailed', { table: env.t, err });
    }
  }

  /** After (re)connecting: subscribe, write what waited, read every table back. */
  private resync(): Promise<void> {
    if (this.reconciling) return this.reconciling;
    this.reconciling = (async () => {
      try {
        if (!this.subscribed) {
          await this.o.link.sub.subscribe(this.channel);
          this.subscribed = true;
        }
        for (const [id, { env, ttlMs }] of [...this.dirty]) {
          this.dirty.delete(id);
          this.write(env, ttlMs);
        }
        await this.settled();
        for (const table of this.tables.keys()) await this.pull(table);
        this.o.log.info('team.reconciled', { tables: this.tables.size });
      } catch (err) {
        this.o.link.failed(err);
      } finally {
        this.reconciling = null;
      }
      // Publishes made while reconciling waited in `dirty`.
      if (this.o.link.up && this.dirty.size > 0) {
        for (const [id, { env, ttlMs }] of [...this.dirty]) {
          this.dirty.delete(id);
          this.write(env, ttlMs);
        }
      }
    })();
    return this.reconciling;
  }

  /** Every record of a table in Redis, applied here when newer. */
  private async pull(table: string): Promise<void> {
    const match = `${this.redisKey(table, '')}*`;
    let cursor = '0';
    do {
      const [next, keys] = await this.o.link.client.scan(cursor, 'MATCH', match, 'COUNT', 500);
      cursor = next;
      if (keys.length === 0) continue;
      const values = await this.o.link.client.mget(...keys);
      for (const v of values) {
        if (!v) continue;
        try {
          this.offer(JSON.parse(v) as Envelope);
        } catch {
          // a record written by something else under our prefix: ignored
        }
      }
    } while (cursor !== '0');
  }

  close(): void {
    this.closed = true;
  }
}
