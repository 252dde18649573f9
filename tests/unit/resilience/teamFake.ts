// An in-memory team for unit tests of team mode (issue 26): the semantics of team/replicator.ts
// and team/claims.ts (records versioned by a hybrid logical clock, newest version wins in the
// store, a record reaches the other members only if the store took it, publishes kept while the
// store is "down" and written on `up()`, which also reads every table back; claims SET NX PX,
// 'local' while down), on a fake clock, delivered only when the test calls `flush()`, so a test
// can hold records "in transit" and decide what each instance knew when.
import type { Clock } from '../../../src/main/engine/clock';
import type { ClaimResult, SharedTable, Team, TeamStatus } from '../../../src/main/engine/team';
import type { ApplyFn, Envelope } from '../../../src/main/engine/team/replicator';

export class FakeTeamHub {
  private readonly members: FakeTeam[] = [];
  /** What "Redis" holds: the newest envelope per table and key. */
  readonly store = new Map<string, Envelope>();
  private readonly queue: Envelope[] = [];
  readonly claims = new Map<string, { owner: string; until: number }>();
  /** Every envelope a member handed over (written or not). */
  readonly published: Envelope[] = [];
  down = false;

  constructor(readonly clock: Clock) {}

  join(instanceId: string): FakeTeam {
    const t = new FakeTeam(this, instanceId);
    this.members.push(t);
    return t;
  }

  /** @internal a member's write: kept by the store if newer, then queued for the others. */
  write(env: Envelope): boolean {
    const id = `${env.t}\u0000${env.k}`;
    const cur = this.store.get(id);
    if (cur && cur.ver >= env.ver) return false;
    this.store.set(id, env);
    this.queue.push(env);
    return true;
  }

  /** Delivers what is in transit (and what that causes) until nothing is left. */
  flush(): void {
    for (let guard = 0; this.queue.length > 0 && guard < 10_000; guard++) {
      const env = this.queue.shift()!;
      for (const m of this.members) if (m.instanceId !== env.by) m.offer(env);
    }
  }

  /** "Redis" comes back: every member writes what it kept and reads every table back. */
  up(): void {
    this.down = false;
    for (const m of this.members) m.resync();
    for (const m of this.members) for (const env of this.store.values()) m.offer(env);
    this.flush();
  }

  claim(name: string, owner: string, ttlMs: number): ClaimResult {
    if (this.down) return 'local';
    const now = this.clock.now();
    const cur = this.claims.get(name);
    if (cur && cur.until > now && cur.owner !== owner) return 'held';
    this.claims.set(name, { owner, until: now + ttlMs });
    return 'granted';
  }

  release(name: string, owner: string): void {
    if (this.down) return;
    if (this.claims.get(name)?.owner === owner) this.claims.delete(name);
  }
}

export class FakeTeam implements Team {
  readonly enabled = true;
  readonly name = 'unit';
  readonly prefix = 'sy:unit:';
  readonly link = null;
  private readonly tables = new Map<string, ApplyFn<unknown>>();
  private readonly versions = new Map<string, number>();
  private readonly dirty = new Map<string, Envelope>();
  private high = 0;

  constructor(
    private readonly hub: FakeTeamHub,
    readonly instanceId: string,
  ) {}

  table<V>(name: string, apply: ApplyFn<V>): SharedTable<V> {
    this.tables.set(name, apply as ApplyFn<unknown>);
    return { name, publish: (key, value) => this.publish(name, key, value) };
  }

  private publish(t: string, k: string, v: unknown): void {
    this.high = Math.max(this.hub.clock.now() * 1000, this.high + 1);
    const env: Envelope = { t, k, ver: this.high, by: this.instanceId, v: structuredClone(v) };
    this.versions.set(`${t}\u0000${k}`, env.ver);
    this.hub.published.push(env);
    if (this.hub.down) this.dirty.set(`${t}\u0000${k}`, env);
    else this.hub.write(env);
  }

  /** @internal a record from the team: applied when newer than the one held here. */
  offer(env: Envelope): void {
    this.high = Math.max(this.high, env.ver);
    const id = `${env.t}\u0000${env.k}`;
    if ((this.versions.get(id) ?? 0) >= env.ver) return;
    const apply = this.tables.get(env.t);
    if (!apply) return;
    this.versions.set(id, env.ver);
    const kept = this.dirty.get(id);
    if (kept && kept.ver < env.ver) this.dirty.delete(id);
    apply(env.k, structuredClone(env.v), env.by);
  }

  /** @internal */
  resync(): void {
    for (const [id, env] of [...this.dirty]) {
      this.dirty.delete(id);
      this.hub.write(env);
    }
  }

  get pending(): number {
    return this.dirty.size;
  }

  claim(name: string, owner: string, ttlMs: number): Promise<ClaimResult> {
    return Promise.resolve(this.hub.claim(name, owner, ttlMs));
  }

  release(name: string, owner: string): Promise<void> {
    this.hub.release(name, owner);
    return Promise.resolve();
  }

  settled = async () => {};

  status(): TeamStatus {
    return {
      state: this.hub.down ? 'degraded' : 'connected',
      since: 0,
      lastError: null,
      address: null,
      team: this.name,
      instanceId: this.instanceId,
      pending: this.dirty.size,
    };
  }

  onStatus = () => () => {};
  start = async () => {};
  close = async () => {};
}
