// A team of engines for team-mode tests (issue 26): a real redis-server, one fake upstream, and N
// engines (each a headless shell with its own data dir, client key and connections) joined to the
// same team. Every engine holds one connection per API key in `keys`, all against the fake
// upstream, each under its own local id and name; the same key is the same account to the team
// (team/identity.ts), so what one engine learns about a key the others share.
import type { ConnectionView } from '../../src/shared/model';
import { FakeUpstream } from './fakeUpstream';
import { startTestEngine, type TestEngine } from './harness';
import { RedisServer } from './redisServer';

export interface TeamRigOptions {
  instances: number;
  /** One connection per key on every engine (provider "openai", model "gpt-team"). */
  keys: string[];
  /** The team's name (default: a fresh one per rig, so rigs sharing a Redis do not meet). */
  team?: string;
  env?: Record<string, string | undefined>;
  /** An already running Redis (default: a new one, stopped with the rig). */
  redis?: RedisServer;
  /** Extra fields of every connection (caps, provider ...). */
  connection?: Record<string, unknown>;
  /** The data dir engine `i` starts from (default: a fresh one of its own). */
  dataDir?: (i: number) => string;
}

export interface TeamRig {
  redis: RedisServer;
  upstream: FakeUpstream;
  engines: TestEngine[];
  /** conns[engine][key index] */
  conns: ConnectionView[][];
  team: string;
  stop(): Promise<void>;
}

let rigs = 0;

export async function startTeamRig(o: TeamRigOptions): Promise<TeamRig> {
  const ownRedis = !o.redis;
  const redis = o.redis ?? (await RedisServer.start());
  const upstream = await FakeUpstream.start();
  const team = o.team ?? `rig-${process.pid}-${++rigs}`;
  const engines: TestEngine[] = [];
  const conns: ConnectionView[][] = [];
  try {
    for (let i = 0; i < o.instances; i++) {
      const e = await startTestEngine({ dataDir: o.dataDir?.(i), env: o.env, engine: { team: { redisUrl: redis.url, name: team, instanceId: `instance-${i}` } } });
      engines.push(e);
      const mine: ConnectionView[] = [];
      for (let k = 0; k < o.keys.length; k++) {
        mine.push(
          await e.addConnection({
            name: `key ${k} on instance ${i}`,
            kind: 'openai-compatible',
            provider: 'openai',
            baseUrl: upstream.openaiUrl,
            secret: o.keys[k]!,
            models: ['gpt-team'],
            ...o.connection,
          } as Parameters<TestEngine['addConnection']>[0]),
        );
      }
      conns.push(mine);
    }
  } catch (err) {
    await Promise.allSettled(engines.map((e) => e.stop()));
    await upstream.close();
    if (ownRedis) await redis.stop();
    throw err;
  }
  return {
    redis,
    upstream,
    engines,
    conns,
    team,
    async stop() {
      await Promise.allSettled(engines.map((e) => e.stop()));
      await upstream.close();
      if (ownRedis) await redis.stop();
    },
  };
}
