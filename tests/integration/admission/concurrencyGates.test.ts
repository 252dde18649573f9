// Concurrency gates through the proxy (R-SQ-01..14): the strict connection and per-model caps
// (strictest wins, exact upstream model id, SEMAPHORE_TIMEOUT / SEMAPHORE_QUEUE_FULL that never
// reach the upstream nor lock anything), caps per connection, and the fail-open shared-quota
// serialisation driven by max_concurrent.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView } from '../../../src/shared/model';
import { FakeUpstream, openaiCompletion } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { admissionOf, ask, openaiClient, waitForAdmission } from './support';

const slow = (ms: number) => (req: { model: string | null }) => ({ delayMs: ms, json: openaiCompletion(req.model ?? 'm') });

describe('concurrency gates', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
  });
  afterEach(async () => {
    fake.reset();
    for (const c of await t.api.listConnections()) await t.api.deleteConnection({ id: c.id });
    await t.api.patchResilience({
      patch: { concurrency: { waitTimeoutMs: null, maxWaiting: null }, quotaShareConcurrencyLimit: { enabled: null } },
    });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  // OAuth connections are not queue-protected, so only the gates act.
  const addConn = (name: string, extra: Record<string, unknown> = {}): Promise<ConnectionView> =>
    t.addConnection({ name, kind: 'openai-compatible', provider: 'zai', authClass: 'oauth', baseUrl: fake.openaiUrl, secret: `sk-${name}-xxxxxxxxxxxx`, ...extra });

  const many = (models: string[]) => {
    const client = openaiClient(t);
    return Promise.all(models.map((m) => ask(client, m)));
  };

  it('the strictest cap wins: glm-5 capped at 1 under a connection cap of 4 runs one at a time', async () => {
    const c = await addConn('strict', { rateLimitOverrides: { maxConcurrent: 4, modelConcurrency: { 'glm-5': 1, 'glm-4.7': 3 } } });
    fake.script({}, [slow(150)]);
    const outs = await many(['glm-5', 'glm-5', 'glm-5', 'glm-5']);
    expect(outs.every((o) => o.status === 200)).toBe(true);
    expect(fake.maxInFlight).toBe(1);
    expect(await admissionOf(t, c.id)).toMatchObject({ queued: 0, inFlight: 0, maxConcurrent: 4 });
  });

  it('mixed models share the connection cap', async () => {
    await addConn('mixed', { rateLimitOverrides: { maxConcurrent: 4, modelConcurrency: { 'glm-5': 1, 'glm-4.7': 3 } } });
    fake.script({}, [slow(200)]);
    const pending = many(['glm-4.7', 'glm-4.7', 'glm-4.7', 'glm-5', 'glm-5', 'other', 'other']);
    await fake.waitFor(() => fake.inFlight === 4);
    const outs = await pending;
    expect(outs.every((o) => o.status === 200)).toBe(true);
    expect(fake.maxInFlight).toBe(4);
  });

  it('a model cap matches the exact upstream model id: keyed glm-5 it gates a client asking zai/glm-5', async () => {
    const c = await addConn('exact', { rateLimitOverrides: { modelConcurrency: { 'glm-5': 1 } } });
    fake.script({}, [slow(150)]);
    const pending = many(['zai/glm-5', 'zai/glm-5', 'zai/glm-5']);
    const view = await waitForAdmission(t, c.id, (v) => v.models.some((m) => m.model === 'glm-5' && m.queued > 0));
    expect(view.models.find((m) => m.model === 'glm-5')).toMatchObject({ cap: 1, inFlight: 1 });
    expect((await pending).every((o) => o.status === 200)).toBe(true);
    expect(fake.maxInFlight).toBe(1);
    expect(fake.requests.every((r) => r.model === 'glm-5')).toBe(true);
  });

  it('a cap keyed with the client alias (zai/glm-5) gates nothing', async () => {
    await addConn('alias', { rateLimitOverrides: { modelConcurrency: { 'zai/glm-5': 1 } } });
    fake.script({}, [slow(300)]);
    const pending = many(['zai/glm-5', 'zai/glm-5', 'zai/glm-5']);
    await fake.waitFor(() => fake.inFlight === 3);
    await pending;
  });

  it('a request that waits past concurrency.waitTimeoutMs gets SEMAPHORE_TIMEOUT and never reaches the upstream', async () => {
    await t.api.patchResilience({ patch: { concurrency: { waitTimeoutMs: 300 } } });
    const c = await addConn('timeout', { rateLimitOverrides: { modelConcurrency: { 'glm-5': 1 } } });
    fake.script({}, [{ hang: true }]);
    const client = openaiClient(t);
    const hold = new AbortController();
    const holding = ask(client, 'glm-5', { signal: hold.signal }).catch(() => null);
    await fake.waitFor(() => fake.inFlight === 1);
    const out = await ask(client, 'glm-5');
    expect(out).toMatchObject({ status: 429, code: 'SEMAPHORE_TIMEOUT' });
    expect(out.retryAfter).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(1);
    // A saturated gate neither opens the breaker nor locks the model.
    expect((await t.api.listModelCooldowns({})).lockouts).toEqual([]);
    expect((await t.api.listBreakers({})).every((b) => b.state === 'CLOSED')).toBe(true);
    expect((await t.api.listCooldowns({})).connections.find((x) => x.connectionId === c.id)!.status).toBe('active');
    hold.abort();
    await holding;
  });

  it('more waiters than concurrency.maxWaiting get SEMAPHORE_QUEUE_FULL at once', async () => {
    await t.api.patchResilience({ patch: { concurrency: { maxWaiting: 0 } } });
    await addConn('full', { rateLimitOverrides: { maxConcurrent: 1 } });
    fake.script({}, [{ hang: true }]);
    const client = openaiClient(t);
    const hold = new AbortController();
    const holding = ask(client, 'glm-5', { signal: hold.signal }).catch(() => null);
    await fake.waitFor(() => fake.inFlight === 1);
    expect(await ask(client, 'glm-5')).toMatchObject({ status: 429, code: 'SEMAPHORE_QUEUE_FULL' });
    expect(fake.requests).toHaveLength(1);
    hold.abort();
    await holding;
  });

  it('caps are per connection: two connections with the same upstream key and cap 1 each run 2 at once', async () => {
    await addConn('twin-a', { secret: 'sk-shared-key-xxxxxxxx', rateLimitOverrides: { maxConcurrent: 1 } });
    await addConn('twin-b', { secret: 'sk-shared-key-xxxxxxxx', rateLimitOverrides: { maxConcurrent: 1 } });
    fake.script({}, [slow(300)]);
    const pending = many(['glm-5', 'glm-5']);
    await fake.waitFor(() => fake.inFlight === 2);
    expect((await pending).every((o) => o.status === 200)).toBe(true);
  });

  it('max_concurrent serialises requests to the account (shared-quota serialisation)', async () => {
    const c = await addConn('serial', { maxConcurrent: 1 });
    fake.script({}, [slow(100)]);
    const outs = await many(['glm-5', 'glm-4.7', 'glm-5']);
    expect(outs.every((o) => o.status === 200)).toBe(true);
    expect(fake.maxInFlight).toBe(1);
    expect((await admissionOf(t, c.id)).maxConcurrent).toBe(1);
  });

  it('shared-quota serialisation fails open: a request that waited too long is dispatched anyway', async () => {
    await t.api.patchResilience({ patch: { concurrency: { waitTimeoutMs: 200 } } });
    await addConn('fail-open', { maxConcurrent: 1 });
    fake.script({}, [slow(1_500)]);
    const pending = many(['glm-5', 'glm-5']);
    await fake.waitFor(() => fake.inFlight === 2);
    expect((await pending).map((o) => o.status)).toEqual([200, 200]);
  });

  it('switching shared-quota serialisation off removes the max_concurrent limit', async () => {
    await t.api.patchResilience({ patch: { quotaShareConcurrencyLimit: { enabled: false } } });
    const c = await addConn('qs-off', { maxConcurrent: 1 });
    expect((await admissionOf(t, c.id)).maxConcurrent).toBeNull();
    fake.script({}, [slow(300)]);
    const pending = many(['glm-5', 'glm-5', 'glm-5']);
    await fake.waitFor(() => fake.inFlight === 3);
    await pending;
  });
});
