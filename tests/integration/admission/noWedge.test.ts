// The queue never wedges (issue 5): 64 concurrent clients for a bounded time (and a bounded number
// of requests) against a loopback upstream that answers 429 beyond 2 in flight, through a protected
// connection capped at 2. Every client gets a success or a typed error, no request is dispatched
// after waiting past maxWaitMs (by the engine's own queuedMs in the request log), the upstream never
// sees more than the cap, and afterwards nothing is left queued or in flight and the connection
// still serves. The run time is only a loop bound: nothing here asserts how fast anything was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView, RequestLogEntry } from '../../../src/shared/model';
import { FakeUpstream, openaiCompletion } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { admissionOf, ask, openaiClient, type Outcome } from './support';

const CLIENTS = 64;
const RUN_MS = 4_000;
const MAX_REQUESTS = 1_500;
const MAX_WAIT_MS = 1_500;
/**
 * The engine checks the budget on the wall clock (whole milliseconds) and logs queuedMs from the
 * monotonic clock, rounded: the two may differ by a millisecond or two, never by a late dispatch.
 */
const CLOCK_GRANULARITY_MS = 5;
const CAP = 2;
/** Every 40th upstream request declares a short wait (spacing), so pauses happen under load too. */
const SPACING_EVERY = 40;

/** Typed answers a client may get besides a success. */
const TYPED = new Set([
  'RATE_LIMIT_QUEUE_TIMEOUT',
  'RATE_LIMIT_QUEUE_FULL',
  'SEMAPHORE_TIMEOUT',
  'SEMAPHORE_QUEUE_FULL',
  'declared_spacing', // the scripted upstream 429, relayed
  'all_targets_cooling_down', // the resilience layer sitting out that 429
]);

describe('the request queue under load', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  let conn: ConnectionView;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    fake.capConcurrency(CAP);
    fake.script({}, [
      (req) =>
        req.seq % SPACING_EVERY === 0
          ? { status: 429, headers: { 'retry-after-ms': '150' }, json: { error: { type: 'rate_limit_error', code: 'declared_spacing', message: 'slow down' } } }
          : { delayMs: 40 + (req.seq % 5) * 10, json: openaiCompletion(req.model ?? 'm') },
    ]);
    t = await startTestEngine();
    conn = await t.addConnection({
      name: 'Capped key',
      kind: 'openai-compatible',
      provider: 'acme',
      authClass: 'apikey',
      baseUrl: fake.openaiUrl,
      secret: 'sk-capped-key-xxxxxxxxxx',
      maxConcurrent: CAP,
      disableCooling: true,
      rateLimitOverrides: { maxConcurrent: CAP, maxWaitMs: MAX_WAIT_MS, minTimeMs: 2 },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await fake?.close();
  });

  it(
    `${CLIENTS} clients against a cap of ${CAP}: every answer is a success or a typed error, nothing waits past maxWaitMs`,
    async () => {
      const client = openaiClient(t);
      const outcomes: Outcome[] = [];
      const endAt = Date.now() + RUN_MS; // a loop bound only
      let sent = 0;
      const runClient = async (i: number) => {
        while (Date.now() < endAt && sent < MAX_REQUESTS) {
          sent++;
          outcomes.push(await ask(client, `model-${i % 4}`));
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, i) => runClient(i)));

      const unexpected = outcomes.filter((o) => o.status !== 200 && !(o.code && TYPED.has(o.code)));
      expect(unexpected).toEqual([]);
      const ok = outcomes.filter((o) => o.status === 200).length;
      const queueTimeouts = outcomes.filter((o) => o.code === 'RATE_LIMIT_QUEUE_TIMEOUT').length;
      expect(ok).toBeGreaterThan(0);
      expect(queueTimeouts).toBeGreaterThan(0); // the load really did overflow the budget
      expect(fake.maxInFlight).toBeLessThanOrEqual(CAP);
      expect(fake.requests.every((r) => !r.clientClosed)).toBe(true);

      // No request was dispatched after waiting past maxWaitMs (the engine's queuedMs, from the log);
      // the ones that would have been got RATE_LIMIT_QUEUE_TIMEOUT instead.
      const entries: RequestLogEntry[] = [];
      let before: number | undefined;
      for (;;) {
        const page = await t.api.listLogs({ limit: 500, before });
        entries.push(...page.entries);
        if (page.nextBefore === null) break;
        before = page.nextBefore;
      }
      expect(entries.length).toBe(outcomes.length);
      const dispatched = entries.flatMap((e) => e.attempts);
      expect(dispatched.length).toBeGreaterThan(0);
      expect(dispatched.filter((a) => a.queuedMs === null)).toEqual([]);
      const late = dispatched.map((a) => a.queuedMs ?? 0).filter((ms) => ms > MAX_WAIT_MS + CLOCK_GRANULARITY_MS);
      expect(late).toEqual([]);

      // Nothing leaked: the connection is idle and still serves.
      const view = await admissionOf(t, conn.id);
      expect(view).toMatchObject({ queued: 0, inFlight: 0 });
      fake.reset();
      expect(await ask(client, 'model-after')).toMatchObject({ status: 200, connectionId: conn.id });
    },
    60_000,
  );
});
