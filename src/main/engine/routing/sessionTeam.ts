// Session pins and exclusive leases in team mode (issue 26): what both share. Each workstation has
// its own client keys, connections and combos, under its own local ids, so what the team stores
// names them in ways every instance can resolve (SessionTeamIds): a client key by a keyed hash of
// its SHA-256 (the same key pasted on two workstations is the same key; the key itself never
// leaves the process), a connection by its team id (team/identity.ts), a combo by its name.
//
// Both keep their records in Redis under the team's prefix, change them with Lua scripts (so a
// decision and its announcement are one step) and announce every change on a channel of their own;
// every announcement carries a revision from one counter, so an older answer never overwrites a
// newer one here. SessionsTeam runs their reconcile each time the link (re)connects: first what
// changed here while Redis was away, then, when Redis lost its data (its epoch changed), what this
// instance knows, then everything Redis holds.
import { createHmac, randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import type { Logger } from '../logger';
import type { Team } from '../team';
import type { TeamIdentity } from '../team/identity';

/** A connection this instance does not have (its team id follows): shown, never routed to. */
export const FOREIGN = 'team:';

export const isForeign = (id: string): boolean => id.startsWith(FOREIGN);

/** A client key's team id: a keyed hash of its SHA-256, equal on every workstation holding the same key. */
export function clientKeyTeamId(keyHash: string, teamName: string): string {
  const h = createHmac('sha256', `switchyard-team:${teamName}:client-key`);
  h.update(keyHash);
  return `k_${h.digest('base64url').slice(0, 22)}`;
}

export interface SessionTeamIdsDeps {
  teamName: string;
  instanceId: string;
  teamIds: Pick<TeamIdentity, 'ofId' | 'localIds'>;
  clientKeys: { get(id: string | null): { id: string; keyHash: string } | undefined; ids(): string[] };
  combos: { get(idOrName: string): { id: string; name: string } | undefined };
}

/** Local ids to the team's names and back. */
export class SessionTeamIds {
  private readonly keys = new Map<string, string>();

  constructor(private readonly d: SessionTeamIdsDeps) {}

  /** The team id of a local client key (null: no key, or unknown). */
  keyOf(localId: string): string | null {
    if (localId === '') return null;
    if (isForeign(localId)) return localId.slice(FOREIGN.length);
    const cached = this.keys.get(localId);
    if (cached) return cached;
    const k = this.d.clientKeys.get(localId);
    if (!k) return null;
    const id = clientKeyTeamId(k.keyHash, this.d.teamName);
    this.keys.set(localId, id);
    return id;
  }

  /** The local client key with this team id (null: this workstation does not hold that key). */
  localKey(teamKey: string): string | null {
    for (const [local, team] of this.keys) if (team === teamKey && this.d.clientKeys.get(local)) return local;
    for (const id of this.d.clientKeys.ids()) if (this.keyOf(id) === teamKey) return id;
    return null;
  }

  /** A client key as a lease names it here: the local id, or the team's for a key this workstation lacks. */
  keyHere(teamKey: string): string {
    return this.localKey(teamKey) ?? `${FOREIGN}${teamKey}`;
  }

  /** The team's name for a local connection; one without a team id (a local model server) is this instance's own. */
  connOf(localId: string): string {
    if (isForeign(localId)) return localId.slice(FOREIGN.length);
    return this.d.teamIds.ofId(localId) ?? `l_${this.d.instanceId}_${localId}`;
  }

  /** The local connection for the team's name (null: this workstation does not have it). */
  localConn(teamConn: string): string | null {
    const own = `l_${this.d.instanceId}_`;
    if (teamConn.startsWith(own)) return teamConn.slice(own.length);
    return this.d.teamIds.localIds(teamConn)[0] ?? null;
  }

  /** A connection as this instance names it: the local id, or the team's for one it lacks. */
  connHere(teamConn: string, prefer?: string): string {
    if (prefer !== undefined && this.connOf(prefer) === teamConn) return prefer;
    return this.localConn(teamConn) ?? `${FOREIGN}${teamConn}`;
  }

  /** A pin's scope for the team: '' (plain) or the combo's name; null when the combo is gone. */
  scopeOf(comboId: string): string | null {
    if (comboId === '') return '';
    return this.d.combos.get(comboId)?.name ?? null;
  }

  /** The local combo id for the team's scope (null: no combo of that name here). */
  localScope(name: string): string | null {
    if (name === '') return '';
    return this.d.combos.get(name)?.id ?? null;
  }
}

/** A part of the sessions' team state: its channel, and its reconcile. */
export interface TeamPart {
  readonly channel: string;
  receive(message: string): void;
  /** `lost`: Redis lost its data since this instance last agreed with it. false: not done (retried on the next connect). */
  reconcile(lost: boolean): Promise<boolean>;
}

/** The link as the sessions' team state uses it: bounded commands that fail to `undefined`. */
export class SessionTeamLink {
  private readonly defined = new WeakSet<Redis>();

  constructor(readonly team: Team) {}

  get up(): boolean {
    return this.team.link?.up ?? false;
  }

  get prefix(): string {
    return this.team.prefix;
  }

  get instanceId(): string {
    return this.team.instanceId;
  }

  /**
   * Runs a command (each is bounded by the link's timeout); undefined when the link is down or the
   * command failed (the link is told, and decides whether it is down).
   */
  async run<T>(fn: (c: Redis) => Promise<T>): Promise<T | undefined> {
    const link = this.team.link;
    if (!link?.up) return undefined;
    try {
      return await fn(link.client);
    } catch (err) {
      link.failed(err);
      return undefined;
    }
  }

  /** A Lua script as a command (EVALSHA, loaded on first use), with every key given in ARGV. */
  script(name: string, lua: string): (...args: string[]) => Promise<unknown> {
    return (...args) =>
      this.run((c) => {
        if (!this.defined.has(c)) {
          c.defineCommand(name, { numberOfKeys: 0, lua });
          this.defined.add(c);
        }
        return (c as unknown as Record<string, (...a: string[]) => Promise<unknown>>)[name]!(...args);
      }) as Promise<unknown>;
  }

  /** Every value under a key pattern (SCAN, then MGET in batches); undefined when the link failed. */
  async values(match: string): Promise<string[] | undefined> {
    const out: string[] = [];
    let cursor = '0';
    do {
      const page = await this.run((c) => c.scan(cursor, 'MATCH', match, 'COUNT', 500));
      if (!page) return undefined;
      cursor = page[0];
      if (page[1].length === 0) continue;
      const values = await this.run((c) => c.mget(...page[1]));
      if (!values) return undefined;
      for (const v of values) if (v) out.push(v);
    } while (cursor !== '0');
    return out;
  }
}

export interface SessionsTeamOptions {
  link: SessionTeamLink;
  parts: TeamPart[];
  /** The epoch of the Redis this instance last agreed with (kept in SQLite). */
  epoch: { get(): string | undefined; set(v: string): void };
  log: Logger;
}

/** Follows the link: subscribes the parts' channels and reconciles them on each (re)connect, one at a time. */
export class SessionsTeam {
  private running: Promise<void> | null = null;
  private again = false;
  /** The engine is stopping: no reconcile starts, and one in progress writes nothing more. */
  private closed = false;
  private subscribed = false;
  private readonly channels: Map<string, TeamPart>;

  constructor(private readonly o: SessionsTeamOptions) {
    this.channels = new Map(o.parts.map((p) => [p.channel, p]));
  }

  start(): void {
    const link = this.o.link.team.link;
    if (!link) return;
    link.sub.on('message', (channel: string, message: string) => {
      const part = this.channels.get(channel);
      if (part) part.receive(message);
    });
    link.onStatus((s) => {
      if (s.state === 'connected') this.sync();
    });
    if (link.up) this.sync();
  }

  /** Resolves when the reconcile in progress (if any) has finished (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Before the store closes: no reconcile may touch it afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
  }

  private sync(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.reconcile();
        } catch (err) {
          // A reconcile cut short (Redis gone again, the engine stopping) is taken up at the next connect.
          if (!this.closed) this.o.log.warn('team.sessionsReconcileFailed', { err });
        }
      } while (this.again && this.o.link.up && !this.closed);
    })().finally(() => {
      this.running = null;
    });
  }

  private async reconcile(): Promise<void> {
    const link = this.o.link.team.link!;
    try {
      if (!this.subscribed) {
        await link.sub.subscribe(...this.channels.keys());
        this.subscribed = true;
      }
    } catch (err) {
      link.failed(err);
      return;
    }
    const key = `${this.o.link.prefix}sessions/epoch`;
    const fresh = randomBytes(9).toString('base64url');
    const epoch = await this.o.link.run(async (c) => ((await c.set(key, fresh, 'NX')) === 'OK' ? fresh : await c.get(key)));
    if (!epoch) return;
    if (this.closed) return;
    const lost = this.o.epoch.get() !== epoch;
    for (const part of this.o.parts) if (this.closed || !(await part.reconcile(lost))) return;
    if (this.closed) return;
    this.o.epoch.set(epoch);
    this.o.log.info('team.sessionsReconciled', { redisLostData: lost });
  }
}
