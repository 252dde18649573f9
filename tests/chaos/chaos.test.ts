// Chaos suite (R-RT-01): three keys of one provider behind the real proxy, a chaos upstream that
// injects real latency, connection resets, hangs past the headers timeout, 503s, 429s (with and
// without Retry-After) and stalls, and a pool of real Anthropic SDK clients. Four phases
// reproduce the defects measured in issue 9; each prints its figures, then asserts.
//
// Bounded by default (part of `npm test`): about 300 requests and 15 s. Long version (about 2,000
// requests): `RUN_CHAOS_INT=1 npm run test:chaos` or `npm run test:chaos -- --long`. CHAOS_TRACE=1
// also prints every upstream call and client request.
//
// Definitions (implemented in measure.ts and schedule.ts):
// - Healthy key: a key scripted to answer correctly (possibly slowly) over the whole of
//   [request start - grace, request end]. Grace is what the engine may legitimately still hold
//   against a key that has just recovered: KEY_GRACE_MS after one key's own faults, and
//   OUTAGE_GRACE_MS (one breaker reset timeout more) after a spell where no key was healthy.
//   Before the phase starts every key counts as healthy (each phase gets a fresh engine).
// - Client-visible failure while a healthy key existed: a client request that failed (an error
//   status, a broken or incomplete stream, a client timeout) while some key was healthy, except
//   a request whose last upstream call stalled after the response was committed (output already
//   reached the client and is never replayed, so no proxy can fail that over; counted apart).
// - Bad spell: a maximal span during which one key fails every call in a way the engine can act
//   on per connection (503, 429, reset, hang). Stalls and provider-wide flapping are not spells.
// - Wasted call: a call that arrives at a key during its bad spell (1) after the upstream has
//   delivered that spell's first failure (the first moment the engine had evidence) and (2)
//   while another key of the provider had been healthy for KEY_GRACE_MS (so the engine had a
//   better target). Calls already in flight when the evidence arrived are not wasted, nor are
//   calls while every key is bad: those are the breaker's to stop, at its own thresholds (R-CB-04
//   wants traffic to reach a DEGRADED provider).
// - Allowance per spell: WASTED_PER_EJECTION_PERIOD x ejection periods, counted over the part
//   of the spell where (2) holds: one detection period plus one per ejection that could expire
//   within it if ejections grow linearly from EJECTION_BASE_MS (Envoy's base x times-ejected; a
//   doubling backoff expires less often, so this is the generous count).
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosUpstream, type ChaosCall } from '../support/chaosUpstream';
import { startTestEngine } from '../support/harness';
import { pollBreaker } from './breakerPoll';
import { runPool } from './clientPool';
import { formatFigures, measurePhase, type PhaseFigures } from './measure';
import { randomFaults, Schedule, steps } from './schedule';

const LONG = process.env.RUN_CHAOS_INT === '1';

// ---- engine timings, scaled down through connection timeouts, settings and env ----------------
/** Connection `timeouts.headersMs` (the schema's minimum): a hang costs the client this much. */
const HEADERS_TIMEOUT_MS = 1_000;
/** Connection `timeouts.idleMs` (minimum): how long a stall lasts before the proxy gives up. */
const IDLE_TIMEOUT_MS = 1_000;
/** `providerBreaker.apikey.resetTimeoutMs` via env (minimum): OPEN -> HALF_OPEN. */
const BREAKER_RESET_TIMEOUT_MS = 1_000;
/** `connectionCooldown.apikeyBaseMs`: the first cooldown of a key; repeats back off from it. */
const COOLDOWN_BASE_MS = 500;

// ---- thresholds --------------------------------------------------------------------------------
/** Client-visible failures allowed while a healthy key exists (the issue's requirement). */
const MAX_FAILURES_WHILE_HEALTHY = 0;
/** Wasted calls allowed per bad key per ejection period ("a bad key costs at most a couple of calls"). */
const WASTED_PER_EJECTION_PERIOD = 2;
/** `outlierEjection.baseEjectionMs` (scaled down like the cooldown base): a bad key's first ejection. */
const EJECTION_BASE_MS = COOLDOWN_BASE_MS;
/**
 * Global bound: wasted calls over all phases as a share of client requests. An engine that ejects
 * a key after two failures and backs off from EJECTION_BASE_MS spends one call to detect and one
 * per expired ejection: about 2 in (a), 2-4 in (b), 4-5 over the six spells of (c), i.e. about 4%
 * of the bounded run's ~260 requests, and less in the long run (probes grow with log(spell)).
 * 8% leaves room for scheduling races on a loaded box; an engine that keeps sending a third of
 * the traffic to a bad key lands well above it (issue 9 measured 23-34% of 2,000 on the old engine).
 */
const MAX_WASTED_SHARE = 0.08;
/**
 * What a just-recovered key may still carry: a Retry-After of 1 s or a second (2 x base)
 * ejection, plus 500 ms of scheduling slack.
 */
const KEY_GRACE_MS = 1_500;
/** After a spell with no healthy key: the breaker may be OPEN for one more reset timeout. */
const OUTAGE_GRACE_MS = BREAKER_RESET_TIMEOUT_MS + KEY_GRACE_MS;
/** Requests the proxy may leave hanging until the client's own timeout. */
const MAX_CLIENT_TIMEOUTS = 0;

// ---- load ----------------------------------------------------------------------------------------
const CONCURRENCY = 10;
const INTERVAL_MS = LONG ? 28 : 50;
const CLIENT_TIMEOUT_MS = 10_000;
const STREAM_SHARE = 0.5;
/** Phase lengths: bounded (about 300 requests, 17 s in all) or long (about 2,000 requests). */
const T = LONG
  ? { a: 12_000, bBad: 8_000, bAfter: 6_500, c: 24_000, dFlap: 10_000, dAfter: 6_500, maxPerPhase: 800 }
  : { a: 1_500, bBad: 1_000, bAfter: 3_200, c: 3_200, dFlap: 3_000, dAfter: 3_200, maxPerPhase: 120 };
const SLOT_MS = 400;

const KEYS = ['sk-ant-chaos-k1-aaaaaaaaaaaa', 'sk-ant-chaos-k2-bbbbbbbbbbbb', 'sk-ant-chaos-k3-cccccccccccc'] as const;
const [K1, K2, K3] = KEYS;
const NAME: Record<string, string> = { [K1]: 'k1', [K2]: 'k2', [K3]: 'k3' };
const MODEL = 'claude-chaos';
const PROVIDER = 'anthropic';

/** Names instead of secrets in the figures; `finishedAt` read now that every call has ended. */
const named = (calls: readonly ChaosCall[]): ChaosCall[] =>
  calls.map((c) => ({ ...c, key: NAME[c.key] ?? c.key, finishedAt: c.finishedAt }));

describe('chaos: three keys of one provider, real SDK clients, faults injected per key and phase', () => {
  let chaos: ChaosUpstream;
  const figures: PhaseFigures[] = [];

  beforeAll(async () => {
    chaos = await ChaosUpstream.start();
  });
  afterAll(async () => {
    await chaos?.close();
  });

  async function runPhase(phase: string, schedule: Schedule, graceMs: number, seed: number) {
    const t = await startTestEngine({
      env: { SWITCHYARD_CIRCUIT_BREAKER_API_KEY_RESET_TIMEOUT_MS: String(BREAKER_RESET_TIMEOUT_MS) },
      engine: { logLevel: 'info' },
    });
    try {
      await t.api.patchSettings({ patch: { 'connectionCooldown.apikeyBaseMs': COOLDOWN_BASE_MS, 'outlierEjection.baseEjectionMs': EJECTION_BASE_MS } });
      for (const key of KEYS) {
        await t.addConnection({
          name: NAME[key]!,
          kind: 'anthropic',
          baseUrl: chaos.anthropicUrl,
          secret: key,
          timeouts: { headersMs: HEADERS_TIMEOUT_MS, idleMs: IDLE_TIMEOUT_MS },
        });
      }
      const client = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0, timeout: CLIENT_TIMEOUT_MS });
      // The schedule speaks of k1..k3; the upstream sees the secrets.
      const plan = schedule.plan();
      chaos.begin((c) => plan({ ...c, key: NAME[c.key] ?? c.key }), seed);
      const t0 = Date.now() - chaos.now();
      const breaker = pollBreaker(t, PROVIDER, t0);
      const results = await runPool({
        client,
        model: MODEL,
        idPrefix: phase,
        t0,
        durationMs: schedule.durationMs,
        maxRequests: T.maxPerPhase,
        intervalMs: INTERVAL_MS,
        concurrency: CONCURRENCY,
        streamShare: STREAM_SHARE,
        seed,
      });
      await chaos.fake.waitFor(() => chaos.fake.inFlight === 0, 10_000);
      await breaker.stop();
      const final = breaker.samples[breaker.samples.length - 1]!.state;
      const f = measurePhase({
        phase,
        schedule,
        results,
        calls: named(chaos.calls),
        graceMs,
        keyGraceMs: KEY_GRACE_MS,
        ejectionBaseMs: EJECTION_BASE_MS,
        allowedPerPeriod: WASTED_PER_EJECTION_PERIOD,
        breaker: breaker.samples,
      });
      figures.push(f);
      console.log(formatFigures(f));
      if (process.env.CHAOS_TRACE === '1') {
        // Every upstream call and client request of the phase, for diagnosing a figure.
        for (const c of named(chaos.calls)) console.log(`  call ${c.seq} ${c.key} ${c.fault} ${c.arrivedAt}-${c.finishedAt} ${c.requestId}`);
        for (const r of results) console.log(`  request ${r.id} ${r.startedAt}-${r.endedAt} ${r.ok ? 'ok' : `${r.status} ${r.code}`}`);
      }
      return { f, results, final };
    } finally {
      await t.stop();
    }
  }

  /** The checks every phase shares. */
  function expectCommon(f: PhaseFigures) {
    expect.soft(f.failuresWhileHealthy.length, `${f.phase}: client-visible failures while a healthy key existed`).toBeLessThanOrEqual(
      MAX_FAILURES_WHILE_HEALTHY,
    );
    for (const s of f.spells) {
      expect.soft(s.wasted, `${f.phase}: wasted calls to ${s.key} (${s.states.join('+')}, ${s.from}-${s.to} ms)`).toBeLessThanOrEqual(s.allowed);
    }
    // A latency bound (every request answered within the client's timeout): the long run only.
    if (LONG) expect.soft(f.clientTimeouts, `${f.phase}: requests left hanging until the client timed out`).toBeLessThanOrEqual(MAX_CLIENT_TIMEOUTS);
    // The zero-failure check has something to check: requests ran while a key was healthy.
    expect(f.requestsWhileHealthy, `${f.phase}: requests while a healthy key existed`).toBeGreaterThan(0);
  }

  const timeout = LONG ? 180_000 : 30_000;

  it('(a) one key answers 503 persistently while the others are healthy: it is ejected, no client sees a failure', async () => {
    const d = T.a;
    const s = new Schedule(['k1', 'k2', 'k3'], d, [...steps('k1', d, [d, 'ok']), ...steps('k2', d, [d, 'status_503']), ...steps('k3', d, [d, 'ok'])]);
    const { f } = await runPhase('a', s, KEY_GRACE_MS, 11);
    expectCommon(f);
  }, timeout);

  it('(b) two keys answer 503, the third 429s then recovers: once it has recovered no client fails, bad keys cost a couple of calls', async () => {
    const d = T.bBad + T.bAfter;
    const s = new Schedule(['k1', 'k2', 'k3'], d, [
      ...steps('k1', d, [d, 'status_503']),
      ...steps('k2', d, [d, 'status_503']),
      ...steps('k3', d, [T.bBad, 'status_429'], [d, 'ok']),
    ]);
    const { f } = await runPhase('b', s, OUTAGE_GRACE_MS, 22);
    expectCommon(f);
  }, timeout);

  it('(c) random faults on all three keys with one healthy at every moment: no client fails, bad spells cost a couple of calls', async () => {
    const s = randomFaults({
      keys: ['k1', 'k2', 'k3'],
      durationMs: T.c,
      slotMs: SLOT_MS,
      anchorSlots: LONG ? 8 : 4,
      healthyLeadMs: KEY_GRACE_MS + SLOT_MS,
      faultShare: 0.8,
      faults: ['status_503', 'status_429', 'status_429_retry_after', 'reset', 'hang', 'stall_first_byte', 'stall_mid_stream'],
      seed: 4,
    });
    console.log(`chaos phase c schedule:\n${s.describe()}`);
    const { f, results } = await runPhase('c', s, KEY_GRACE_MS, 4);
    expectCommon(f);
    // A stream that stalls after it was committed ends with an error the SDK sees, never a clean end.
    const lastFault = new Map<string, string>();
    for (const c of chaos.calls) if (c.requestId) lastFault.set(c.requestId, c.fault);
    const stalledAfterCommit = results.filter((r) => lastFault.get(r.id) === 'stall_mid_stream');
    expect.soft(stalledAfterCommit.filter((r) => r.ok).map((r) => r.id), 'mid-stream stalls that looked like success').toEqual([]);
  }, timeout);

  it('(d) a flapping provider that fails every other call: the breaker opens, then recovers, and clients are served once it is healthy', async () => {
    const d = T.dFlap + T.dAfter;
    const s = new Schedule(['k1', 'k2', 'k3'], d, ['k1', 'k2', 'k3'].flatMap((k) => steps(k, d, [T.dFlap, 'flap'], [d, 'ok'])));
    const { f, final } = await runPhase('d', s, OUTAGE_GRACE_MS, 44);
    expectCommon(f);
    const openDuringFlap = f.breaker.some((b) => b.state === 'OPEN' && b.t <= T.dFlap + BREAKER_RESET_TIMEOUT_MS);
    expect.soft(openDuringFlap, 'the breaker opened while the provider failed every other call').toBe(true);
    expect.soft(final, 'the breaker is CLOSED once the provider is healthy again').toBe('CLOSED');
  }, timeout);

  it('across all phases: wasted calls stay under the global share', () => {
    const requests = figures.reduce((n, f) => n + f.requests, 0);
    const wasted = figures.reduce((n, f) => n + f.wasted, 0);
    const worst = Math.max(0, ...figures.map((f) => f.p99Ms));
    console.log(
      `chaos total: ${requests} requests, ${figures.reduce((n, f) => n + f.upstreamCalls, 0)} upstream calls, ` +
        `client failures while a healthy key existed ${figures.reduce((n, f) => n + f.failuresWhileHealthy.length, 0)}, ` +
        `wasted ${wasted} (${requests ? ((100 * wasted) / requests).toFixed(1) : '0'}% of requests, bound ${MAX_WASTED_SHARE * 100}%), worst p99 ${worst} ms`,
    );
    expect(figures.length, 'every phase produced figures').toBe(4);
    expect(wasted).toBeLessThanOrEqual(Math.floor(MAX_WASTED_SHARE * requests));
  });
});
