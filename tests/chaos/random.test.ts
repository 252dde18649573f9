// Randomised chaos suite (issue 19): faults that move between keys. 3 to 5 keys of one provider
// behind the real proxy, a chaos upstream on 127.0.0.1, and a paced pool of real Anthropic SDK
// clients (4 in flight, 30 % streamed). A seeded schedule rotates faults between the keys: at
// every rotation (about every ROTATION_MS) one or two keys that are healthy at that moment turn
// bad for a random time in a random mode (503, 429 with Retry-After, 429 without, a dropped
// socket, a hang past the headers timeout, a stall after two stream events that carry no output
// yet), and at every moment at least one key answers normally. The engine runs with its default
// resilience settings; only the connections' headers and idle timeouts are short (1 s), as a user
// with this upstream would set them. Each seed gets a fresh engine; in the long version the same
// schedule is then served by two baselines for comparison (baselines.ts): a blind walk (a
// stateless gateway trying k1, k2, k3... in order) and a walk that remembers only each key's last
// outcome. Figures are printed per seed and in total; then asserted (the engine's only).
//
// Bounded by default (part of `npm test`): seeds 1 and 2, 150 requests each, about 25 s. Long
// version (2,000 requests per seed, seeds 1-5, with the baselines, about 4 minutes a seed):
// `npm run test:chaos -- --long` (or RUN_CHAOS_INT=1).
// Replay one seed: CHAOS_SEED=n (with or without --long: the two versions differ in pace and
// rotation). CHAOS_SEEDS=n runs seeds 1..n, CHAOS_SEEDS=3,7,9 those seeds; CHAOS_REQUESTS=n
// sets the requests per seed; CHAOS_KEYS=n fixes the number of keys (else 3 + (seed - 1) mod 3);
// CHAOS_BASELINES=0 skips the baselines, CHAOS_BASELINES=1 runs them in the bounded version too;
// CHAOS_TRACE=1 prints the schedule, every upstream call and every failed request. The schedule
// and the streamed/JSON mix repeat exactly for a seed; time is real, so what the engine decides
// (and the figures) can vary between replays, most where the engine is already failing.
//
// Definitions (measureRun in measure.ts; strict: no grace after a key recovers, no fault excepted):
// - Healthy key at t: the schedule has the key answering normally at t (a call arriving at t is
//   answered correctly).
// - Upstream-declared wait: a key's 429 with Retry-After: N declares the key unavailable from the
//   moment that answer was sent, for N seconds.
// - Failure while healthy: a client request that did not end in a complete answer (an error
//   status, a connection error, a stream without message_stop, a client timeout) and that started
//   at a moment when at least one key was healthy and not inside a wait it had declared. Failures
//   whose every healthy key was inside a declared wait are counted apart as excused. Share: of all
//   requests.
// - Bad spell: a maximal span during which a key is not healthy (consecutive modes merge).
// - Wasted call: an upstream call that arrived at a key during a bad spell at or after the first
//   moment one of that spell's calls had delivered its failure (the upstream answered 503/429,
//   dropped the socket, or the proxy gave up on a hang or stall), i.e. when the engine had
//   evidence the key was bad. Every mode counts, stalls included; calls while a healthy sibling
//   existed are all of them, since the schedule always keeps one. Share: of requests and of
//   upstream calls; the assertion bounds both.
// - Calls per request: upstream calls / client requests.
// - Client timeouts: requests the SDK gave up on after CLIENT_TIMEOUT_MS (also failures).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosUpstream } from '../support/chaosUpstream';
import { startTestEngine, type TestEngine } from '../support/harness';
import { startWalk, type WalkOrder } from './baselines';
import { driveSchedule, type DriveLoad } from './drive';
import { describeRun, formatRunTable, sumRuns, type RunFigures } from './measure';
import { MOVING_FAULTS, rotatingFaults, type Schedule } from './schedule';

const LONG = process.env.RUN_CHAOS_INT === '1';
const envInt = (name: string): number | null => {
  const v = process.env[name];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : null;
};

// ---- thresholds (the acceptance figures) -------------------------------------------------
/** Failures while a healthy key existed, as a share of requests (a blind walk manages 1.4 %). */
const MAX_FAILED_WHILE_HEALTHY_SHARE = 0.005;
/**
 * Wasted calls, as a share of requests and of upstream calls: the 5 % over the long run's
 * 2,000 requests a seed. The bounded run's 150 requests a seed are a sample too small for that
 * bound (one call is 0.67 %; the same engine measured 4.7-7.3 % over two bounded seeds, on a loaded
 * box, and 2.8 % over five long ones), so it allows 12 %: it is the failures-while-healthy bound
 * that tells the engines apart there (33-69 % before issue 19), and 12 % still fails an engine that
 * keeps calling a bad key (seed 2 wasted 33-49 % of requests before issue 19).
 */
const MAX_WASTED_SHARE = LONG ? 0.05 : 0.12;
/** The count a share allows over n: rounded up, so 150 requests allow 1 failure (0.75 rounded up). */
const allowed = (share: number, n: number) => Math.ceil(share * n);

// ---- the schedule ----------------------------------------------------------------------------------
/** Time between rotations: the 2.5 s in the long version, scaled down to 1 s in the bounded one. */
const ROTATION_MS = LONG ? 2_500 : 1_000;
/** A bad spell lasts this many rotations, drawn uniformly (cut short where no key would be healthy). */
const SPELL_RANGE: readonly [number, number] = [0.3, 1.8];

// ---- engine and connections ------------------------------------------------------------------------
/** Connection `timeouts.headersMs` (the schema's minimum): how long a hang costs before the proxy gives up. */
const HEADERS_TIMEOUT_MS = 1_000;
/** Connection `timeouts.idleMs` (minimum): how long a stall lasts before the proxy gives up. */
const IDLE_TIMEOUT_MS = 1_000;
/** The walks' bound on one try (its whole answer), like a plain fallback config's per-target timeout. */
const WALK_PER_TARGET_MS = 1_000;
/** The baselines (baselines.ts), by the name the figures give them. */
const WALKS: Record<WalkOrder, string> = { blind: 'blind walk', 'last outcome': 'last-outcome walk' };

// ---- load ------------------------------------------------------------------------------------------
const SEEDS: readonly number[] = (() => {
  const one = envInt('CHAOS_SEED');
  if (one !== null) return [one];
  const many = process.env.CHAOS_SEEDS;
  if (many && /^\d+$/.test(many)) return Array.from({ length: Number(many) }, (_, i) => i + 1);
  if (many && /^\d+(,\d+)+$/.test(many)) return many.split(',').map(Number);
  return LONG ? [1, 2, 3, 4, 5] : [1, 2];
})();
const REQUESTS = envInt('CHAOS_REQUESTS') ?? (LONG ? 2_000 : 150);
const CONCURRENCY = 4;
const STREAM_SHARE = 0.3;
/** One request starts every INTERVAL_MS unless CONCURRENCY are in flight (the issue: 2,000 in about a minute). */
const INTERVAL_MS = LONG ? 25 : 35;
/** No request starts after this; the schedule covers it. */
const DURATION_MS = Math.max(10_000, REQUESTS * INTERVAL_MS * 3);
const CLIENT_TIMEOUT_MS = 10_000;
const BASELINES = process.env.CHAOS_BASELINES === '1' || (LONG && process.env.CHAOS_BASELINES !== '0');
const TRACE = process.env.CHAOS_TRACE === '1';

const MODEL = 'claude-chaos';
const PROVIDER = 'anthropic';

function keyCount(seed: number): number {
  return envInt('CHAOS_KEYS') ?? 3 + ((seed - 1) % 3);
}

/** k1..kn and the secrets the upstream sees for them. */
function keysFor(seed: number): { names: string[]; secret: (name: string) => string; name: (secret: string) => string } {
  const names = Array.from({ length: keyCount(seed) }, (_, i) => `k${i + 1}`);
  const secret = (name: string) => `sk-ant-chaos-${name}-${'x'.repeat(12)}`;
  const bySecret = new Map(names.map((n) => [secret(n), n]));
  return { names, secret, name: (s) => bySecret.get(s) ?? s };
}

function scheduleFor(seed: number, keys: readonly string[]): Schedule {
  return rotatingFaults({ keys, durationMs: DURATION_MS, periodMs: ROTATION_MS, spellRange: SPELL_RANGE, faults: MOVING_FAULTS, seed });
}

/** How many bad spells of each mode start before `untilMs`. */
function spellSummary(s: Schedule, untilMs: number): string {
  const count = new Map<string, number>();
  for (const k of s.keys) {
    let last = 'ok';
    for (let t = 0; t < Math.min(s.durationMs, untilMs); t += 10) {
      const st = s.stateAt(k, t);
      if (st !== last && st !== 'ok') count.set(st, (count.get(st) ?? 0) + 1);
      last = st;
    }
  }
  return [...count].map(([k, v]) => `${k} x${v}`).join(', ');
}

describe('chaos, randomised: faults that move between keys, at least one key healthy at every moment', () => {
  let chaos: ChaosUpstream;
  const engineRuns: RunFigures[] = [];
  const walkRuns: RunFigures[] = [];

  beforeAll(async () => {
    chaos = await ChaosUpstream.start();
  });
  afterAll(async () => {
    await chaos?.close();
  });

  const load: DriveLoad = {
    model: MODEL,
    provider: PROVIDER,
    requests: REQUESTS,
    durationMs: DURATION_MS,
    intervalMs: INTERVAL_MS,
    concurrency: CONCURRENCY,
    streamShare: STREAM_SHARE,
    clientTimeoutMs: CLIENT_TIMEOUT_MS,
    trace: TRACE,
  };
  const drive = (seed: number, router: string, schedule: Schedule, to: { baseURL: string; apiKey: string; name: (secret: string) => string; engine?: TestEngine }) =>
    driveSchedule(chaos, seed, router, schedule, load, { routers: [{ baseURL: to.baseURL, apiKey: to.apiKey }], name: to.name, engine: to.engine });

  async function runEngine(seed: number, schedule: Schedule): Promise<RunFigures> {
    const keys = keysFor(seed);
    const t = await startTestEngine({ engine: { logLevel: 'info' } });
    try {
      for (const name of keys.names) {
        await t.addConnection({
          name,
          kind: 'anthropic',
          baseUrl: chaos.anthropicUrl,
          secret: keys.secret(name),
          timeouts: { headersMs: HEADERS_TIMEOUT_MS, idleMs: IDLE_TIMEOUT_MS },
        });
      }
      return await drive(seed, 'engine', schedule, { baseURL: t.proxyUrl, apiKey: t.clientKey, name: keys.name, engine: t });
    } finally {
      await t.stop();
    }
  }

  async function runWalk(seed: number, schedule: Schedule, order: WalkOrder): Promise<RunFigures> {
    const keys = keysFor(seed);
    const walk = await startWalk({ upstreamUrl: chaos.anthropicUrl, keys: keys.names.map(keys.secret), perTargetMs: WALK_PER_TARGET_MS, order });
    try {
      return await drive(seed, WALKS[order], schedule, { baseURL: walk.url, apiKey: 'unused', name: keys.name });
    } finally {
      await walk.close();
    }
  }

  const timeout = LONG ? 900_000 : 60_000;

  for (const seed of SEEDS) {
    it(`seed ${seed}: no client failure while a key is healthy, few calls to keys known bad`, async () => {
      const keys = keysFor(seed);
      const schedule = scheduleFor(seed, keys.names);
      const horizon = REQUESTS * INTERVAL_MS;
      console.log(
        `chaos random seed ${seed}: ${keys.names.length} keys, ${REQUESTS} requests, rotation ${ROTATION_MS} ms; bad spells in the first ${horizon / 1_000} s: ${spellSummary(schedule, horizon)}\n` +
          `  replay: CHAOS_SEED=${seed} npm run test:chaos -- ${LONG ? '--long ' : ''}tests/chaos/random.test.ts`,
      );
      if (TRACE) console.log(schedule.describe());
      const engine = await runEngine(seed, schedule);
      engineRuns.push(engine);
      const rows = [engine];
      if (BASELINES) {
        for (const order of Object.keys(WALKS) as WalkOrder[]) {
          const walk = await runWalk(seed, schedule, order);
          walkRuns.push(walk);
          rows.push(walk);
        }
      }
      console.log(`${formatRunTable(rows)}\n${rows.map(describeRun).join('\n')}`);

      // The instrument works: the schedule kept a key healthy for every request, and requests ran.
      expect(engine.failuresWithoutHealthyKey, 'requests that started with no key healthy (the schedule forbids it)').toBe(0);
      expect(engine.requestsWhileHealthy, 'requests that started while a key was healthy').toBeGreaterThan(0);
      expect
        .soft(engine.failuresWhileHealthy.length, `seed ${seed}: client-visible failures while a key was healthy (of ${engine.requests})`)
        .toBeLessThanOrEqual(allowed(MAX_FAILED_WHILE_HEALTHY_SHARE, engine.requests));
      expect
        .soft(engine.wasted, `seed ${seed}: calls to keys known bad (of ${engine.requests} requests, ${engine.upstreamCalls} calls)`)
        .toBeLessThanOrEqual(allowed(MAX_WASTED_SHARE, Math.min(engine.requests, engine.upstreamCalls)));
    }, timeout);
  }

  it('all seeds: the figures table, and the totals within the thresholds', () => {
    expect(engineRuns.length, 'every seed produced figures').toBe(SEEDS.length);
    const rows = [...engineRuns, sumRuns('engine', engineRuns)];
    for (const router of Object.values(WALKS)) {
      const runs = walkRuns.filter((r) => r.router === router);
      if (runs.length > 0) rows.push(...runs, sumRuns(router, runs));
    }
    console.log(
      `chaos random, ${LONG ? 'long' : 'bounded'}: thresholds ${MAX_FAILED_WHILE_HEALTHY_SHARE * 100}% failed while healthy, ` +
        `${MAX_WASTED_SHARE * 100}% wasted calls\n${formatRunTable(rows)}`,
    );
    const total = sumRuns('engine', engineRuns);
    expect.soft(total.failuresWhileHealthy.length, 'client-visible failures while a key was healthy, all seeds').toBeLessThanOrEqual(
      allowed(MAX_FAILED_WHILE_HEALTHY_SHARE, total.requests),
    );
    expect(total.wasted, 'calls to keys known bad, all seeds').toBeLessThanOrEqual(allowed(MAX_WASTED_SHARE, Math.min(total.requests, total.upstreamCalls)));
  });
});
