// Team mode (issue 26): Bottleneck's Redis clustering, where admission keeps what the team shares
// (a cap's slots, a queue's spacing). One Bottleneck.IORedisConnection per engine, built on a
// duplicate of the team link's command client: the same address, TLS and password, and the link's
// rules (no offline queue, every command bounded by the link's timeout), so a Bottleneck call fails
// fast instead of waiting on a Redis that is gone. One clustered limiter per id (ids are under the
// team's prefix), made on first use, with an `error` listener, and dropped after a few idle minutes.
// Admission talks to the small ClusterLimiters port below, so unit tests can stand in for Redis.
import Bottleneck from 'bottleneck';
import type { CancelTimer, Clock } from '../clock';
import type { Logger } from '../logger';
import type { RedisLink } from '../team/redisLink';

export interface LimiterSettings {
  /** Jobs running at once across the team (null: no cap). */
  maxConcurrent: number | null;
  /** Spacing between two jobs across the team (0: none). */
  minTime: number;
}

export interface LimiterWatch {
  /** A Redis call of this limiter failed (the link has been told). */
  error?(err: unknown): void;
  /** The limiter found no room for its next job (it now waits for a slot to free anywhere in the team). */
  noRoom?(): void;
}

/** Bottleneck's job states (null: unknown or done). */
export type ClusterJobStatus = 'RECEIVED' | 'QUEUED' | 'RUNNING' | 'EXECUTING' | 'DONE' | null;

export interface ClusterLimiter {
  readonly id: string;
  /**
   * Runs `task` when the team has room; its promise ends the job and frees the slot. `expiration`:
   * the job's slot comes back to the team by then even if this instance never says so (a crash).
   */
  schedule(job: { id: string; expiration: number }, task: () => Promise<void>): Promise<unknown>;
  jobStatus(jobId: string): ClusterJobStatus;
  /** The team's settings for this limiter: written to Redis when they differ from what this instance last wrote. */
  configure(settings: LimiterSettings): void;
  watch(w: LimiterWatch): () => void;
}

export interface ClusterLimiters {
  /** Whether Redis may be asked now (the link and the limiters' own clients are connected). */
  readonly up: boolean;
  /** Longest a Bottleneck call may go unanswered before admission gives up on it. */
  readonly boundMs: number;
  /** The limiter with this id (made on first use). */
  limiter(id: string, settings: LimiterSettings): ClusterLimiter;
  /** The limiter with this id, when one was made. */
  existing(id: string): ClusterLimiter | undefined;
  ids(): Iterable<string>;
  /** A Bottleneck call failed or went unanswered: the link is told (it decides whether it is down). */
  failed(err: unknown): void;
  /** Called when the link leaves 'connected' (waiters stop waiting on Redis). */
  onDown(fn: () => void): () => void;
  close(): Promise<void>;
}

/** The longest a held slot stays counted without its holder (a crashed instance's slots come back by then). */
export const MAX_SLOT_EXPIRATION_MS = 60 * 60_000;
/** Redis forgets an unused limiter's keys this long after its last activity (longer than any job may run). */
const KEYS_TTL_MS = MAX_SLOT_EXPIRATION_MS + 5 * 60_000;
/** A limiter nobody used for this long is dropped here (Redis keeps its state until KEYS_TTL_MS). */
const IDLE_MS = 5 * 60_000;
const SWEEP_MS = 60_000;

type IORedisClient = RedisLink['client'];

/** Bottleneck's connection as it is at run time (its typings call `ready` a method; it is a promise). */
interface ConnectionInternals {
  terminated: boolean;
  client: IORedisClient;
  subscriber: IORedisClient;
  limiters: Record<string, unknown>;
  ready: Promise<unknown>;
}

/** Bottleneck's own script errors, which it recovers from by name (re-registering after Redis lost its state). */
const BOTTLENECK_ERROR = /^ERR ((?:SETTINGS_KEY_NOT_FOUND|UNKNOWN_CLIENT|OVERWEIGHT)\b.*)$/s;

type ScriptCallback = (err: Error | null, replies: unknown) => void;

/**
 * Bottleneck's connection, with two changes. Redis 7 prefixes a script's own error with "ERR ",
 * which hides the errors Bottleneck recovers from (a restarted Redis that lost the limiter's
 * settings or clients), so the prefix is taken off again. And dropping a limiter unsubscribes
 * without leaving a rejected promise behind when Redis is unreachable (Bottleneck's own drops it).
 */
class TeamConnection extends Bottleneck.IORedisConnection {
  __scriptFn__(name: string): (...args: unknown[]) => unknown {
    const self = this as unknown as ConnectionInternals;
    const fn = (self.client as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!.bind(self.client);
    return (...args: unknown[]) => {
      const cb = args.pop() as ScriptCallback;
      return fn(...args, (err: Error | null, replies: unknown) => {
        const m = err ? BOTTLENECK_ERROR.exec(err.message) : null;
        if (err && m) err.message = m[1]!;
        cb(err, replies);
      });
    };
  }

  __removeLimiter__(instance: Bottleneck): void {
    const self = this as unknown as ConnectionInternals;
    const channels = [instance.channel(), (instance as unknown as { channel_client(): string }).channel_client()];
    for (const channel of channels) {
      if (!self.terminated) self.subscriber.unsubscribe(channel).catch(() => {});
      delete self.limiters[channel];
    }
  }
}

/** Bottleneck's limiter as it is at run time: how it starts a job that got its slot. */
interface LimiterInternals {
  _run(index: string, job: BottleneckJob, wait: number): unknown;
  _clearGlobalState(index: string): boolean;
  _free(index: string, job: BottleneckJob, ...rest: unknown[]): unknown;
  _scheduled: Record<string, unknown>;
  _limiter: unknown;
}
interface BottleneckJob {
  options: { id: string; expiration?: number | null };
  doRun(): void;
  doExecute(chained: unknown, clearGlobalState: () => boolean, run: unknown, free: unknown): Promise<unknown>;
  doExpire(clearGlobalState: () => boolean, run: unknown, free: unknown): unknown;
}

/**
 * Bottleneck starts a job that has its slot with `setTimeout(start, wait)`, also when the wait is
 * 0, and Node runs a 0 ms timer no sooner than 1 ms later: a clustered job spent 1.2 of its 2 ms
 * at c=1 in that timer (bench/team.ts). A job with no wait starts on `setImmediate` instead, after
 * the I/O of this turn; its expiration timer and the rest are Bottleneck's own. A job that was
 * dropped or freed before its turn (no longer RUNNING, or no longer scheduled) is not started.
 */
export function startJobsWithoutTimer(limiter: Bottleneck): void {
  const b = limiter as unknown as LimiterInternals;
  const timed = b._run.bind(limiter);
  b._run = (index, job, wait) => {
    if (wait > 0) return timed(index, job, wait);
    job.doRun();
    const clearGlobalState = b._clearGlobalState.bind(limiter, index);
    const run = b._run.bind(limiter, index, job);
    const free = b._free.bind(limiter, index, job);
    const expiration = job.options.expiration;
    const entry = {
      timeout: undefined,
      // Bottleneck's own expiration timer, as it sets it (Bottleneck keeps real time, not the Clock).
      // eslint-disable-next-line no-restricted-syntax
      expiration: expiration != null ? setTimeout(() => job.doExpire(clearGlobalState, run, free), expiration) : undefined,
      job,
    };
    b._scheduled[index] = entry;
    setImmediate(() => {
      if (b._scheduled[index] !== entry || limiter.jobStatus(job.options.id) !== 'RUNNING') return;
      // Its own failures are the job's (it settles the job); only a state it no longer has could throw.
      job.doExecute(b._limiter, clearGlobalState, run, free).catch(() => {});
    });
    return entry;
  };
}

class Entry implements ClusterLimiter {
  active = 0;
  lastUsed: number;
  settings: LimiterSettings;
  readonly watchers = new Set<LimiterWatch>();

  constructor(
    readonly id: string,
    readonly bottleneck: Bottleneck,
    settings: LimiterSettings,
    private readonly clock: Clock,
    private readonly onError: (entry: Entry, err: unknown) => void,
  ) {
    this.settings = settings;
    this.lastUsed = clock.now();
    bottleneck.on('error', (err: unknown) => onError(this, err));
    bottleneck.on('debug', (message: string, info: { success?: boolean } | undefined) => {
      if (info?.success === false && message.startsWith('Drained ')) for (const w of this.watchers) w.noRoom?.();
    });
  }

  schedule(job: { id: string; expiration: number }, task: () => Promise<void>): Promise<unknown> {
    this.active++;
    this.lastUsed = this.clock.now();
    const done = () => {
      this.active--;
      this.lastUsed = this.clock.now();
    };
    const p = this.bottleneck.schedule({ id: job.id, expiration: job.expiration }, task);
    p.then(done, done);
    return p;
  }

  jobStatus(jobId: string): ClusterJobStatus {
    return (this.bottleneck.jobStatus(jobId) as ClusterJobStatus) ?? null;
  }

  configure(s: LimiterSettings): void {
    if (s.maxConcurrent === this.settings.maxConcurrent && s.minTime === this.settings.minTime) return;
    this.settings = { ...s };
    this.write();
  }

  /** Writes this instance's settings to Redis (the last writer's settings are the team's). */
  write(): void {
    // Typed as synchronous, but it returns a promise in this version.
    Promise.resolve(this.bottleneck.updateSettings({ maxConcurrent: this.settings.maxConcurrent, minTime: this.settings.minTime })).catch((err: unknown) =>
      this.onError(this, err),
    );
  }

  watch(w: LimiterWatch): () => void {
    this.watchers.add(w);
    return () => this.watchers.delete(w);
  }
}

export interface BottleneckLimitersOptions {
  link: RedisLink;
  clock: Clock;
  log?: Logger;
}

/** The real ClusterLimiters: Bottleneck limiters clustered on the team's Redis. */
export class BottleneckLimiters implements ClusterLimiters {
  private readonly entries = new Map<string, Entry>();
  private connection: TeamConnection | null = null;
  private readonly downListeners = new Set<() => void>();
  private sweep: CancelTimer | null = null;
  private readonly offStatus: () => void;
  private closed = false;
  readonly boundMs: number;

  constructor(private readonly o: BottleneckLimitersOptions) {
    // Four command timeouts: Bottleneck's calls on one limiter are made one after another.
    this.boundMs = 4 * o.link.commandTimeoutMs;
    if (o.link.up) this.connect();
    this.offStatus = o.link.onStatus((s) => {
      if (s.state === 'connected') this.connect();
      else for (const fn of [...this.downListeners]) fn();
    });
  }

  get up(): boolean {
    const c = this.connection as unknown as ConnectionInternals | null;
    return !this.closed && this.o.link.up && c !== null && c.client.status === 'ready' && c.subscriber.status === 'ready';
  }

  limiter(id: string, settings: LimiterSettings): ClusterLimiter {
    const hit = this.entries.get(id);
    if (hit) return hit;
    const bottleneck = new Bottleneck({
      id,
      datastore: 'ioredis',
      connection: this.connect(),
      maxConcurrent: settings.maxConcurrent,
      minTime: settings.minTime,
      timeout: KEYS_TTL_MS,
    });
    startJobsWithoutTimer(bottleneck);
    const entry = new Entry(id, bottleneck, { ...settings }, this.o.clock, (e, err) => this.limiterFailed(e, err));
    this.entries.set(id, entry);
    // A limiter whose start failed can never run a job: dropped, the next use makes a new one.
    Promise.resolve(bottleneck.ready()).catch((err: unknown) => {
      if (this.entries.get(id) === entry) this.entries.delete(id);
      this.limiterFailed(entry, err);
    });
    // Redis keeps the first limiter's settings; this instance's configuration is written over them.
    entry.write();
    this.armSweep();
    return entry;
  }

  existing(id: string): ClusterLimiter | undefined {
    return this.entries.get(id);
  }

  ids(): Iterable<string> {
    return this.entries.keys();
  }

  failed(err: unknown): void {
    // While the link (or these clients) is down it knows already; its words for that stay the user's.
    if (this.up) this.o.link.failed(err);
  }

  onDown(fn: () => void): () => void {
    this.downListeners.add(fn);
    return () => this.downListeners.delete(fn);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.offStatus();
    this.sweep?.();
    this.sweep = null;
    for (const fn of [...this.downListeners]) fn();
    this.entries.clear();
    // Stops every limiter's heartbeat and closes both clients without waiting on Redis.
    await this.connection?.disconnect(false).catch(() => {});
  }

  /** The shared connection (made once, when the link first connects). */
  private connect(): TeamConnection {
    if (this.connection) return this.connection;
    const client = this.o.link.client.duplicate({ lazyConnect: false, connectionName: 'switchyard-limits' });
    const connection = new TeamConnection({ client, Redis: this.o.link.client.constructor } as Bottleneck.IORedisConnectionOptions);
    // Connectivity errors: the link has its own view of Redis; a failing call is what counts here.
    connection.on('error', (err: unknown) => this.o.log?.debug('admission.teamConnectionError', { message: String((err as Error)?.message ?? err) }));
    (connection as unknown as ConnectionInternals).ready.catch(() => {});
    this.connection = connection;
    return connection;
  }

  private limiterFailed(entry: Entry, err: unknown): void {
    if (this.closed) return;
    this.o.log?.debug('admission.teamLimiterError', { limiter: entry.id, message: String((err as Error)?.message ?? err) });
    this.failed(err);
    for (const w of [...entry.watchers]) w.error?.(err);
  }

  private armSweep(): void {
    if (this.sweep || this.closed) return;
    this.sweep = this.o.clock.setTimer(() => {
      this.sweep = null;
      this.dropIdle();
      if (this.entries.size > 0) this.armSweep();
    }, SWEEP_MS);
  }

  private dropIdle(): void {
    // Unsubscribing needs Redis; an idle limiter simply stays until it is reachable.
    if (!this.up) return;
    const now = this.o.clock.now();
    for (const [id, e] of this.entries) {
      if (e.active > 0 || now - e.lastUsed < IDLE_MS) continue;
      this.entries.delete(id);
      void Promise.resolve(e.bottleneck.disconnect(false)).catch(() => {});
    }
  }
}
