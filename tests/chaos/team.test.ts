// Chaos across a team (issue 26): the randomised chaos schedule of random.test.ts (faults that
// move between the keys of one provider, at least one key healthy at every moment) served once by
// one engine, then by three engines joined in a team over a real redis-server, the client pool's
// requests spread over the three in turn. Alone, each of three independent engines would learn
// every fault itself and spend a call on it; a team learns it once. The team's wasted calls (calls
// to a key already known bad, measure.ts) are set against the single engine's on the same
// schedule: the acceptance is "no more wasted calls than one instance does", with a margin for the
// run-to-run noise of real time (MARGIN_SHARE of the requests).
//
// Bounded (part of `npm test`): seed 1, 150 requests per run. Long: `RUN_CHAOS_INT=1` or
// `npm run test:chaos -- --long` (seeds 1-3, 2,000 requests per run).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosUpstream } from '../support/chaosUpstream';
import { startTestEngine, type TestEngine } from '../support/harness';
import { hasRedisServer, RedisServer } from '../support/redisServer';
import { driveSchedule, type DriveLoad } from './drive';
import { describeRun, formatRunTable, type RunFigures } from './measure';
import { MOVING_FAULTS, rotatingFaults } from './schedule';

const LONG = process.env.RUN_CHAOS_INT === '1';
const SEEDS = LONG ? [1, 2, 3] : [1];
const REQUESTS = LONG ? 2_000 : 150;
const INTERVAL_MS = LONG ? 25 : 35;
const ROTATION_MS = LONG ? 2_500 : 1_000;
const DURATION_MS = Math.max(10_000, REQUESTS * INTERVAL_MS * 3);
const INSTANCES = 3;
/** Run-to-run noise allowed between the two runs (real time decides where a fault lands). */
const MARGIN_SHARE = 0.02;
/** Failures while a key was healthy, as in random.test.ts. */
const MAX_FAILED_WHILE_HEALTHY_SHARE = 0.005;
const allowed = (share: number, n: number) => Math.ceil(share * n);

const MODEL = 'claude-chaos';
const PROVIDER = 'anthropic';
const load: DriveLoad = {
  model: MODEL,
  provider: PROVIDER,
  requests: REQUESTS,
  durationMs: DURATION_MS,
  intervalMs: INTERVAL_MS,
  concurrency: 4,
  streamShare: 0.3,
  clientTimeoutMs: 10_000,
  trace: process.env.CHAOS_TRACE === '1',
};

const keyNames = ['k1', 'k2', 'k3'];
const secret = (name: string) => `sk-ant-chaos-${name}-${'x'.repeat(12)}`;
const bySecret = new Map(keyNames.map((n) => [secret(n), n]));
const keyName = (s: string) => bySecret.get(s) ?? s;

describe.skipIf(!hasRedisServer())('chaos across a team: three instances waste no more calls than one', () => {
  let chaos: ChaosUpstream;
  let redis: RedisServer;

  beforeAll(async () => {
    chaos = await ChaosUpstream.start();
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await chaos?.close();
    await redis?.stop();
  });

  async function engines(n: number, team: string | null): Promise<TestEngine[]> {
    const out: TestEngine[] = [];
    for (let i = 0; i < n; i++) {
      const t = await startTestEngine({ engine: { logLevel: 'info', ...(team ? { team: { redisUrl: redis.url, name: team, instanceId: `chaos-${i}` } } : {}) } });
      for (const name of keyNames) {
        await t.addConnection({ name, kind: 'anthropic', baseUrl: chaos.anthropicUrl, secret: secret(name), timeouts: { headersMs: 1_000, idleMs: 1_000 } });
      }
      out.push(t);
    }
    return out;
  }

  for (const seed of SEEDS) {
    it(
      `seed ${seed}: the team's wasted calls are at most one instance's`,
      async () => {
        const schedule = rotatingFaults({ keys: keyNames, durationMs: DURATION_MS, periodMs: ROTATION_MS, spellRange: [0.3, 1.8], faults: MOVING_FAULTS, seed });
        const single = await engines(1, null);
        let alone: RunFigures;
        try {
          alone = await driveSchedule(chaos, seed, 'one instance', schedule, load, { routers: [{ baseURL: single[0]!.proxyUrl, apiKey: single[0]!.clientKey }], name: keyName, engine: single[0] });
        } finally {
          await Promise.all(single.map((e) => e.stop()));
        }
        const team = await engines(INSTANCES, `chaos-${seed}-${process.pid}`);
        let together: RunFigures;
        try {
          together = await driveSchedule(chaos, seed, `team of ${INSTANCES}`, schedule, load, {
            routers: team.map((e) => ({ baseURL: e.proxyUrl, apiKey: e.clientKey })),
            name: keyName,
            engine: team[0],
          });
        } finally {
          await Promise.all(team.map((e) => e.stop()));
        }
        console.log(`chaos across a team, seed ${seed}\n${formatRunTable([alone, together])}\n${[alone, together].map(describeRun).join('\n')}`);
        expect(together.failuresWithoutHealthyKey, 'requests that started with no key healthy (the schedule forbids it)').toBe(0);
        expect.soft(together.failuresWhileHealthy.length, 'client-visible failures while a key was healthy').toBeLessThanOrEqual(allowed(MAX_FAILED_WHILE_HEALTHY_SHARE, together.requests));
        expect(together.wasted, `calls to keys known bad: the team's against one instance's (${alone.wasted})`).toBeLessThanOrEqual(alone.wasted + allowed(MARGIN_SHARE, together.requests));
      },
      LONG ? 900_000 : 120_000,
    );
  }
});
