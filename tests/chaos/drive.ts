// Serving a chaos schedule (random.test.ts, team.test.ts): the client pool sends its requests
// through one router or several (a team's instances, request n to router n mod count), the chaos
// upstream answers from the schedule, and the run is measured (measure.ts).
import Anthropic from '@anthropic-ai/sdk';
import { RETRY_AFTER_SECONDS, type ChaosCall, type ChaosUpstream } from '../support/chaosUpstream';
import type { TestEngine } from '../support/harness';
import { pollBreaker } from './breakerPoll';
import { runPool } from './clientPool';
import { measureRun, type RunFigures } from './measure';
import type { Schedule } from './schedule';

export interface DriveLoad {
  model: string;
  provider: string;
  requests: number;
  durationMs: number;
  intervalMs: number;
  concurrency: number;
  streamShare: number;
  clientTimeoutMs: number;
  trace: boolean;
}

/** Serves the schedule through `to` (one router or several); the calls come back with key names. */
export async function driveSchedule(
  chaos: ChaosUpstream,
  seed: number,
  router: string,
  schedule: Schedule,
  load: DriveLoad,
  to: { routers: { baseURL: string; apiKey: string }[]; name: (secret: string) => string; engine?: TestEngine },
): Promise<RunFigures> {
  const { name } = to;
  const clients = to.routers.map((r) => new Anthropic({ baseURL: r.baseURL, apiKey: r.apiKey, maxRetries: 0, timeout: load.clientTimeoutMs }));
  const plan = schedule.plan();
  chaos.begin((c) => plan({ ...c, key: name(c.key) }), seed);
  const t0 = Date.now() - chaos.now();
  const breaker = to.engine ? pollBreaker(to.engine, load.provider, t0, 100) : null;
  const results = await runPool({
    client: clients.length === 1 ? clients[0]! : clients,
    model: load.model,
    idPrefix: `s${seed}-${router.replace(/\s/g, '')}`,
    t0,
    durationMs: load.durationMs,
    maxRequests: load.requests,
    intervalMs: load.intervalMs,
    concurrency: load.concurrency,
    streamShare: load.streamShare,
    seed,
  });
  await chaos.fake.waitFor(() => chaos.fake.inFlight === 0, 10_000);
  await breaker?.stop();
  const calls: ChaosCall[] = chaos.calls.map((c) => ({ ...c, key: name(c.key), finishedAt: c.finishedAt }));
  const figures = measureRun({ router, seed, schedule, results, calls, retryAfterMs: RETRY_AFTER_SECONDS * 1_000, breaker: breaker?.samples ?? [] });
  if (load.trace) {
    for (const c of calls) console.log(`  ${router} call ${c.seq} ${c.key} ${c.fault} ${c.arrivedAt}-${c.finishedAt} ${c.requestId}`);
    for (const r of figures.failuresWhileHealthy) console.log(`  ${router} failed ${r.id} ${r.startedAt}-${r.endedAt} ${r.status} ${r.code} ${r.error}`);
  }
  return figures;
}
