// The team's link to Redis (issue 26): two ioredis clients (commands, and the pub/sub subscriber),
// their state as the dashboard shows it, and one rule for every command: it fails fast instead of
// waiting. Commands are never queued while the link is down (`enableOfflineQueue: false`) and each
// has a small time bound (`commandTimeout`), so a slow or unreachable Redis costs a request at most
// that bound, once, before the link is marked degraded and the engine works on local state; ioredis
// reconnects in the background with a growing delay, and `onStatus` tells the team layer when to
// reconcile. TLS (`rediss://`) and authentication (user and password in the URL) are ioredis's own.
import Redis, { type RedisOptions } from 'ioredis';
import type { Clock } from '../clock';
import type { Logger } from '../logger';

export { checkRedisUrl, maskRedisUrl } from './redisUrl';

export type TeamLinkState = 'connecting' | 'connected' | 'degraded' | 'closed';

export interface TeamLinkStatus {
  state: TeamLinkState;
  /** When the link entered this state (epoch ms). */
  since: number;
  /** Why it is degraded, in words (never the URL or its password). */
  lastError: string | null;
}

export interface RedisLinkOptions {
  url: string;
  clock: Clock;
  log: Logger;
  /** Longest any command may take before it counts as failed (default 250 ms). */
  commandTimeoutMs?: number;
  /** Longest a connection attempt may take (default 2 s). */
  connectTimeoutMs?: number;
  /** For rediss:// servers whose certificate a private authority signed: that authority's PEM. */
  tlsCa?: string | Buffer | null;
}

export const DEFAULT_COMMAND_TIMEOUT_MS = 250;
/** How often a link degraded by a slow answer (its sockets still open) asks Redis whether it answers again. */
export const RECOVERY_PING_MS = 1_000;

export class RedisLink {
  /** Commands (and the Lua scripts). */
  readonly client: Redis;
  /** Pub/sub only (a subscribed client can run nothing else). */
  readonly sub: Redis;
  private status: TeamLinkStatus;
  private readonly listeners = new Set<(s: TeamLinkStatus) => void>();
  readonly commandTimeoutMs: number;
  /** A timed-out command on open sockets: a PING every RECOVERY_PING_MS says when Redis answers again. */
  private cancelRecovery: (() => void) | null = null;

  constructor(private readonly o: RedisLinkOptions) {
    this.commandTimeoutMs = o.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    const options: RedisOptions = {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: this.commandTimeoutMs,
      connectTimeout: o.connectTimeoutMs ?? 2_000,
      // Reconnect forever, waiting a little longer each time (at most 2 s).
      retryStrategy: (times) => Math.min(100 * times, 2_000),
      enableReadyCheck: true,
      // The link's state is shown by the dashboard; ioredis's own error events would only repeat it.
      showFriendlyErrorStack: false,
    };
    // rediss:// turns TLS on (ioredis); a private certificate authority is added to the trusted ones.
    if (o.tlsCa && o.url.startsWith('rediss:')) options.tls = { ca: o.tlsCa };
    this.client = new Redis(o.url, { ...options, connectionName: 'switchyard' });
    this.sub = new Redis(o.url, { ...options, connectionName: 'switchyard-sub', commandTimeout: undefined });
    this.status = { state: 'connecting', since: o.clock.now(), lastError: null };
    for (const c of [this.client, this.sub]) {
      c.on('ready', () => this.check());
      c.on('close', () => this.check());
      c.on('end', () => this.check());
      c.on('error', (err: Error) => this.failed(err));
    }
  }

  /** Starts connecting; resolves once both clients are ready, or when `waitMs` has passed (then degraded). */
  async connect(waitMs = 2_000): Promise<TeamLinkStatus> {
    const ready = Promise.allSettled([this.client.connect(), this.sub.connect()]);
    await Promise.race([ready, new Promise<void>((r) => this.o.clock.setTimer(r, waitMs))]);
    this.check();
    if (this.status.state === 'connecting') this.set('degraded', 'Redis did not answer in time');
    return this.status;
  }

  get state(): TeamLinkState {
    return this.status.state;
  }

  get up(): boolean {
    return this.status.state === 'connected';
  }

  view(): TeamLinkStatus {
    return { ...this.status };
  }

  onStatus(fn: (s: TeamLinkStatus) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** A command failed (timeout, refused, reset): the link is degraded until both clients are ready again. */
  failed(err: unknown): void {
    if (this.status.state === 'closed') return;
    const message = describe(err);
    if (this.client.status === 'ready' && this.sub.status === 'ready' && !isTimeout(err)) {
      // A command error on a healthy link (a script error, a wrong type): not the link's fault.
      this.o.log.warn('team.commandFailed', { message });
      return;
    }
    this.set('degraded', message);
  }

  private check(): void {
    if (this.status.state === 'closed') return;
    if (this.client.status === 'ready' && this.sub.status === 'ready') this.set('connected', null);
    else if (this.status.state === 'connected') this.set('degraded', 'the connection to Redis closed');
  }

  /**
   * Degraded while both sockets stay open (a command ran past its time bound): no reconnect will
   * come to say it is over, so a PING asks, every RECOVERY_PING_MS, until one is answered in time.
   */
  private recoverWhenAnswered(): void {
    if (this.cancelRecovery) return;
    this.cancelRecovery = this.o.clock.setTimer(() => {
      this.cancelRecovery = null;
      if (this.status.state !== 'degraded') return;
      if (this.client.status !== 'ready' || this.sub.status !== 'ready') return; // a reconnect will say it
      this.client.ping().then(
        () => this.check(),
        () => this.recoverWhenAnswered(),
      );
    }, RECOVERY_PING_MS);
  }

  private set(state: TeamLinkState, lastError: string | null): void {
    if (state === 'degraded') this.recoverWhenAnswered();
    if (this.status.state === state && (state !== 'degraded' || this.status.lastError === lastError)) return;
    const was = this.status.state;
    this.status = { state, since: state === was ? this.status.since : this.o.clock.now(), lastError: state === 'connected' ? null : lastError };
    if (state !== was) this.o.log.info('team.link', { state, reason: lastError });
    for (const fn of [...this.listeners]) {
      try {
        fn(this.view());
      } catch (err) {
        this.o.log.warn('team.listenerFailed', { err });
      }
    }
  }

  async close(): Promise<void> {
    this.set('closed', null);
    this.cancelRecovery?.();
    this.cancelRecovery = null;
    this.client.disconnect();
    this.sub.disconnect();
  }
}

function isTimeout(err: unknown): boolean {
  return /timed? ?out/i.test(String((err as Error | null)?.message ?? err));
}

/** An error in words, without the address (which may hold a password). */
function describe(err: unknown): string {
  const e = err as { code?: string; message?: string } | null;
  switch (e?.code) {
    case 'ECONNREFUSED':
      return 'Redis refused the connection';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return "Redis's host name could not be resolved";
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection to Redis was reset';
    case 'ETIMEDOUT':
      return 'Redis did not answer in time';
    default:
      break;
  }
  const m = String(e?.message ?? err);
  if (isTimeout(err)) return 'Redis did not answer in time';
  if (/NOAUTH|WRONGPASS|invalid password|AUTH/i.test(m)) return 'Redis refused the credentials (check the user and password in the address)';
  if (/self.signed|certificate|SSL|TLS/i.test(m)) return "Redis's TLS certificate was rejected";
  return m.replace(/rediss?:\/\/\S+/g, 'redis://…').slice(0, 200);
}
