// Resilience instances of one in-memory team (teamFake.ts) for unit tests: each its own store,
// settings, connections and resilience service, on one fake clock.
import type { ConnectionCreateInput } from '../../../src/shared/contract';
import { ConnectionRegistry, type ConnectionRecord } from '../../../src/main/engine/connections/registry';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import type { EgressHistory } from '../../../src/main/engine/resilience/egressLockout';
import type { Resilience, UpstreamFailure } from '../../../src/main/engine/resilience/port';
import { createResilience } from '../../../src/main/engine/resilience/resilienceService';
import type { Target } from '../../../src/main/engine/routing/target';
import { SecretBox } from '../../../src/main/engine/secrets/secretBox';
import { SettingsService } from '../../../src/main/engine/settings/settingsService';
import { BreakersRepo } from '../../../src/main/engine/store/breakersRepo';
import { ConnectionsRepo } from '../../../src/main/engine/store/connectionsRepo';
import { openStore } from '../../../src/main/engine/store/db';
import { KeyValueRepo } from '../../../src/main/engine/store/keyValueRepo';
import { TeamIdentity } from '../../../src/main/engine/team/identity';
import type { FakeClock } from '../../support/fakeClock';
import type { FakeTeam, FakeTeamHub } from './teamFake';

/** Each connection's egress IP as this instance sees it (set by the test). */
export class FakeEgress implements EgressHistory {
  readonly ips = new Map<string, string>();
  private readonly listeners = new Set<(id: string, ip: string) => void>();
  lastKnown(id: string): string | null {
    return this.ips.get(id) ?? null;
  }
  lastKnownOf(ids: readonly string[]): Map<string, string> {
    const out = new Map<string, string>();
    for (const id of ids) if (this.ips.has(id)) out.set(id, this.ips.get(id)!);
    return out;
  }
  onLearnt(fn: (id: string, ip: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  /** A probe found this IP. */
  learn(id: string, ip: string): void {
    this.ips.set(id, ip);
    for (const fn of this.listeners) fn(id, ip);
  }
}

export interface Instance {
  team: FakeTeam;
  registry: ConnectionRegistry;
  resilience: Resilience;
  egress: FakeEgress;
  /** Adds a connection (an OpenAI-compatible API key on a fake host unless `extra` says otherwise). */
  add(name: string, key: string, extra?: Partial<ConnectionCreateInput>): ConnectionRecord;
  target(conn: ConnectionRecord, model?: string): Target;
}

export function startInstance(hub: FakeTeamHub, clock: FakeClock, id: string, env: Record<string, string> = {}): Instance {
  const db = openStore({ path: ':memory:', now: () => clock.now() });
  const redactor = new SecretRedactor();
  const log = createLogger({ sinks: [new MemorySink()], redactor, now: () => clock.now() });
  const settings = new SettingsService(new KeyValueRepo(db, () => clock.now()), env, log);
  const box = new SecretBox({ loadKey: () => Buffer.alloc(32, 7), describe: () => 'test' });
  const registry = new ConnectionRegistry(new ConnectionsRepo(db), box, redactor, clock);
  const team = hub.join(id);
  const egress = new FakeEgress();
  const resilience = createResilience({
    settings,
    registry,
    breakersRepo: new BreakersRepo(db, () => clock.now()),
    log,
    egress,
    team,
    teamIds: new TeamIdentity(registry, 'unit'),
    clock,
  });
  return {
    team,
    registry,
    resilience,
    egress,
    add: (name, key, extra = {}) =>
      registry.create({ name, kind: 'openai-compatible', provider: 'openai', baseUrl: 'https://api.example.test/v1', secret: key, models: ['m1'], ...extra } as ConnectionCreateInput),
    target: (conn, model = 'm1') => ({ conn, model, requestedModel: model }),
  };
}

export const failure = (status: number, headers: Record<string, string> = {}, body = ''): UpstreamFailure => ({
  kind: 'http',
  status,
  headers,
  body,
  message: `HTTP ${status}`,
});

/** A 429 that speaks for the whole key (x-ratelimit-remaining: 0); `retryAfter` seconds when given. */
export const keyLimit = (retryAfter?: number) =>
  failure(429, { 'x-ratelimit-remaining': '0', ...(retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}) }, '{"error":{"message":"Rate limit reached"}}');

/** A 429 for one model only. */
export const modelLimit = (retryAfter?: number) =>
  failure(429, retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}, '{"error":{"message":"Rate limit reached for m1 on requests per min"}}');
