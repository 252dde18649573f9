// Team mode (issue 26): several Switchyards sharing one pool of keys through Redis. Off unless a
// Redis address is given (`--redis URL`, SWITCHYARD_REDIS_URL, or the team settings); then the
// engine's layers share their state through this one object: shared tables of records
// (replicator.ts), claims made once across the team (claims.ts), and the link's state
// (redisLink.ts). Without Redis every method is the single-process answer: tables publish nothing,
// claims are 'local', the status says 'off'. See ARCHITECTURE.md, "Team mode".
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { ClaimResult } from './claims';
import type { RedisLink, TeamLinkStatus } from './redisLink';
import type { ApplyFn, SharedTable } from './replicator';
import { maskRedisUrl } from './redisUrl';

export type { ClaimResult } from './claims';
export type { SharedTable } from './replicator';

export interface TeamStatus {
  /** 'off': no Redis configured (one process, nothing shared). */
  state: 'off' | TeamLinkStatus['state'];
  since: number | null;
  lastError: string | null;
  /** The Redis address with its password hidden. */
  address: string | null;
  team: string | null;
  /** This instance's id in the team (claims, records' authors). */
  instanceId: string;
  /** Shared records written here that wait for Redis. */
  pending: number;
}

export interface Team {
  readonly enabled: boolean;
  readonly instanceId: string;
  /** The team's name as configured ("default" when none was given). */
  readonly name: string;
  /** A table of shared records (a no-op table when team mode is off). */
  table<V>(name: string, apply: ApplyFn<V>): SharedTable<V>;
  /** Claims `name` once across the team; 'local' when off or while Redis is unreachable. */
  claim(name: string, owner: string, ttlMs: number): Promise<ClaimResult>;
  release(name: string, owner: string): Promise<void>;
  /** Resolves once the shared writes handed over so far are in Redis (bounded by the command timeout). */
  settled(): Promise<void>;
  status(): TeamStatus;
  onStatus(fn: (s: TeamStatus) => void): () => void;
  /** The Redis clients, for the layers that talk to Redis themselves (Bottleneck's clustering); null when off. */
  readonly link: RedisLink | null;
  /** Key prefix of this team's records ("sy:<team>:"). */
  readonly prefix: string;
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface TeamOptions {
  /** The Redis address; null: team mode off. */
  url: string | null;
  /** The team's name: instances with the same name (and Redis) share state. */
  name: string;
  clock: Clock;
  log: Logger;
  instanceId?: string;
  commandTimeoutMs?: number;
  /** A PEM file of the authority that signed a rediss:// server's certificate (SWITCHYARD_REDIS_CA). */
  tlsCaFile?: string | null;
}

export const DEFAULT_TEAM_NAME = 'default';

/** An instance id: the host's name, the process and a random suffix (two runs never share one). */
export function newInstanceId(): string {
  const host = hostname().replace(/[^A-Za-z0-9._-]/g, '').slice(0, 40) || 'host';
  return `${host}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** A team name as it may appear in Redis keys. */
export function teamKeyName(name: string): string {
  return name.trim().toLowerCase().replace(/[^a-z0-9._-]+/g, '-').slice(0, 64) || DEFAULT_TEAM_NAME;
}

/** The team (Redis and its client are loaded only when an address is given). */
export async function createTeam(o: TeamOptions): Promise<Team> {
  const instanceId = o.instanceId ?? newInstanceId();
  const prefix = `sy:${teamKeyName(o.name)}:`;
  if (!o.url) return localTeam(instanceId, prefix, o.name);
  const [{ RedisLink }, { Replicator }, { TeamClaims }] = await Promise.all([import('./redisLink'), import('./replicator'), import('./claims')]);
  let tlsCa: Buffer | null = null;
  if (o.tlsCaFile) {
    try {
      tlsCa = readFileSync(o.tlsCaFile);
    } catch (err) {
      o.log.error('team.tlsCaUnreadable', { file: o.tlsCaFile, err });
    }
  }
  const link = new RedisLink({ url: o.url, clock: o.clock, log: o.log, commandTimeoutMs: o.commandTimeoutMs, tlsCa });
  const replicator = new Replicator({ link, prefix, instanceId, clock: o.clock, log: o.log });
  const claims = new TeamClaims(link, prefix);
  const address = maskRedisUrl(o.url);
  const status = (): TeamStatus => {
    const s = link.view();
    return { state: s.state, since: s.since, lastError: s.lastError, address, team: o.name, instanceId, pending: replicator.pending };
  };
  return {
    enabled: true,
    instanceId,
    name: o.name,
    prefix,
    link,
    table: (name, apply) => replicator.table(name, apply),
    claim: (name, owner, ttlMs) => claims.claim(name, owner, ttlMs),
    release: (name, owner) => claims.release(name, owner),
    settled: () => replicator.settled(),
    status,
    onStatus: (fn) => link.onStatus(() => fn(status())),
    async start() {
      await link.connect();
      await replicator.start();
    },
    async close() {
      replicator.close();
      await link.close();
    },
  };
}

/** Team mode off: one process, nothing shared, every answer the single-process one. */
function localTeam(instanceId: string, prefix: string, name: string): Team {
  return {
    enabled: false,
    instanceId,
    name,
    prefix,
    link: null,
    table: (name) => ({ name, publish() {} }),
    claim: async () => 'local',
    release: async () => {},
    settled: async () => {},
    status: () => ({ state: 'off', since: null, lastError: null, address: null, team: null, instanceId, pending: 0 }),
    onStatus: () => () => {},
    start: async () => {},
    close: async () => {},
  };
}
