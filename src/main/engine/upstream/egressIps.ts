// Each connection's egress IP (SPEC §7c): an IP-echo URL (setting `egress.probeUrl`, off when
// empty) asked through the connection's own route (its outbound proxy, if any), cached for
// 5 minutes. An attempt interceptor records the fresh IP on the attempt's request-log entry and
// refreshes a stale one in the background (never on the request's path). The last known IP of a
// connection is the newer of its cached probe and the request log within 24 h (R-EGR-03): that is
// what the egress-bucketed lockout compares.
import { isIP } from 'node:net';
import type { Clock } from '../clock';
import type { ConnectionRecord, ConnectionRegistry } from '../connections/registry';
import type { Logger } from '../logger';
import type { AttemptInterceptor } from '../proxy/attempt';
import { EGRESS_HISTORY_WINDOW_MS, type EgressHistory } from '../resilience/egressLockout';
import { readBodyText, toTransportError, type UpstreamClient } from './client';

/** How long a probed IP counts as the connection's current egress IP. */
export const EGRESS_CACHE_TTL_MS = 5 * 60_000;
/** After a failed probe, the next one waits this long. */
const FAILED_PROBE_RETRY_MS = 60_000;
const PROBE_TIMEOUT_MS = 15_000;

export interface EgressProbeResult {
  connectionId: string;
  ip: string | null;
  probedAt: number;
  /** Why no IP was found (probe off, unreachable, not an IP); null on success. */
  error: string | null;
}

interface Cached {
  ip: string | null;
  at: number;
  error: string | null;
}

/** The caller's IP from an IP-echo answer: plain text ("203.0.113.7"), or JSON {ip | origin | query | address}. */
export function parseEgressIp(text: string): string | null {
  const t = text.trim();
  let candidate: unknown = t;
  if (t.startsWith('{')) {
    try {
      const j = JSON.parse(t) as Record<string, unknown>;
      candidate = j.ip ?? j.origin ?? j.query ?? j.address ?? '';
    } catch {
      return null;
    }
  }
  if (typeof candidate !== 'string') return null;
  const first = candidate.split(/[,\s]/)[0]?.trim() ?? '';
  return isIP(first) ? first : null;
}

export interface EgressDeps {
  upstream: UpstreamClient;
  registry: ConnectionRegistry;
  clock: Clock;
  /** The IP-echo URL ('' = probing off). */
  probeUrl: () => string;
  /** The request log's last egress IPs of these connections since a time. */
  history: (connectionIds: readonly string[], since: number) => Map<string, { ip: string; at: number }>;
  log?: Logger;
}

export class EgressIps implements EgressHistory {
  private readonly cache = new Map<string, Cached>();
  private readonly inflight = new Map<string, Promise<EgressProbeResult>>();
  private readonly learnt = new Set<(connectionId: string, ip: string) => void>();

  constructor(private readonly d: EgressDeps) {}

  /** Told when a probe finds a connection's egress IP (team mode: an IP's lockout may hold it). */
  onLearnt(fn: (connectionId: string, ip: string) => void): () => void {
    this.learnt.add(fn);
    return () => this.learnt.delete(fn);
  }

  /** The IP probed within the last 5 minutes, or null. */
  fresh(connectionId: string, now: number): string | null {
    const e = this.cache.get(connectionId);
    return e && e.ip && now - e.at < EGRESS_CACHE_TTL_MS ? e.ip : null;
  }

  /** Asks the IP-echo URL through this connection's route now (one probe per connection at a time). */
  probe(conn: ConnectionRecord): Promise<EgressProbeResult> {
    const running = this.inflight.get(conn.id);
    if (running) return running;
    const p = this.run(conn).finally(() => this.inflight.delete(conn.id));
    this.inflight.set(conn.id, p);
    return p;
  }

  /** Starts a background probe when probing is on and the cached IP is stale (or a failure is old). */
  refreshIfStale(conn: ConnectionRecord, now: number): void {
    if (this.d.probeUrl() === '' || this.inflight.has(conn.id)) return;
    const e = this.cache.get(conn.id);
    if (e && now - e.at < (e.ip ? EGRESS_CACHE_TTL_MS : FAILED_PROBE_RETRY_MS)) return;
    void this.probe(conn);
  }

  lastKnown(connectionId: string, now: number): string | null {
    return this.lastKnownOf([connectionId], now).get(connectionId) ?? null;
  }

  lastKnownOf(connectionIds: readonly string[], now: number): Map<string, string> {
    const since = now - EGRESS_HISTORY_WINDOW_MS;
    const logged = this.d.history(connectionIds, since);
    const out = new Map<string, string>();
    for (const id of connectionIds) {
      const c = this.cache.get(id);
      const probed = c && c.ip && c.at >= since ? { ip: c.ip, at: c.at } : undefined;
      const l = logged.get(id);
      const newest = probed && (!l || probed.at >= l.at) ? probed : l;
      if (newest) out.set(id, newest.ip);
    }
    return out;
  }

  /** Forgets a connection's probe (its route may have changed). */
  forget(connectionId: string): void {
    this.cache.delete(connectionId);
  }

  /** Records the fresh egress IP on each attempt's log entry; refreshes a stale one in the background. */
  interceptor(): AttemptInterceptor {
    return (next) => (ctx) => {
      const conn = ctx.target.conn;
      const now = this.d.clock.now();
      const ip = this.fresh(conn.id, now);
      if (ip) ctx.entry.egressIp = ip;
      this.refreshIfStale(conn, now);
      return next(ctx);
    };
  }

  private async run(conn: ConnectionRecord): Promise<EgressProbeResult> {
    const url = this.d.probeUrl();
    const done = (ip: string | null, error: string | null): EgressProbeResult => {
      const at = this.d.clock.now();
      this.cache.set(conn.id, { ip, at, error });
      if (ip !== null) for (const fn of [...this.learnt]) fn(conn.id, ip);
      return { connectionId: conn.id, ip, probedAt: at, error };
    };
    if (url === '') return { connectionId: conn.id, ip: null, probedAt: this.d.clock.now(), error: 'egress.probeUrl is not set (probing is off)' };
    if (this.d.registry.outboundProxyUnreadable(conn)) return done(null, 'the outbound proxy cannot be decrypted on this machine');
    const u = new URL(url);
    const controller = new AbortController();
    const cancel = this.d.clock.setTimer(() => controller.abort(), PROBE_TIMEOUT_MS);
    try {
      const res = await this.d.upstream.request({
        origin: u.origin,
        path: `${u.pathname}${u.search}`,
        method: 'GET',
        headers: { accept: 'text/plain, application/json;q=0.9', 'user-agent': 'switchyard-egress-probe' },
        signal: controller.signal,
        connectTimeoutMs: 10_000,
        headersTimeoutMs: PROBE_TIMEOUT_MS,
        idleTimeoutMs: PROBE_TIMEOUT_MS,
        proxy: this.d.registry.outboundProxyOf(conn),
      });
      const text = await readBodyText(res.body, 4 * 1024);
      if (res.status < 200 || res.status >= 300) return done(null, `the probe URL answered ${res.status}`);
      const ip = parseEgressIp(text);
      if (ip === null) return done(null, 'the probe URL did not answer an IP address');
      this.d.log?.debug('egress.probed', { connectionId: conn.id, ip });
      return done(ip, null);
    } catch (err) {
      const te = toTransportError(err, controller.signal);
      return done(null, controller.signal.aborted ? 'the probe timed out' : te.message);
    } finally {
      cancel();
    }
  }
}
