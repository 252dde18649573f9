// The request queue's budgets through the proxy (R-RQ-01..09, R-RQ-20..22): a request that cannot
// dispatch within maxWaitMs fails with RATE_LIMIT_QUEUE_TIMEOUT and never reaches the upstream; a
// full queue answers RATE_LIMIT_QUEUE_FULL at once; the execution budget answers 504
// RATE_LIMIT_EXECUTION_TIMEOUT, is raised to the headers timeout, and never cuts a response in
// progress; maxWaitMs follows env < persisted < per-connection.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, openaiStream } from '../../support/fakeUpstream';
import { ONE_ANSWER_ENV, startTestEngine, type TestEngine } from '../../support/harness';
import { admissionOf, ask, openaiClient, rateLimited, waitForAdmission } from './support';

describe('queue budgets', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    // The queue's budgets are what these tests read: no same-target retry or plain-model wait.
    t = await startTestEngine({ env: { ...ONE_ANSWER_ENV, RATE_LIMIT_MAX_WAIT_MS: '2000' } });
  });
  afterEach(async () => {
    fake.reset();
    for (const c of await t.api.listConnections()) await t.api.deleteConnection({ id: c.id });
    await t.api.patchResilience({ patch: { requestQueue: { maxWaitMs: null, maxQueueDepth: null } } });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const addKey = (name: string, extra: Record<string, unknown> = {}) =>
    t.addConnection({ name, kind: 'openai', baseUrl: fake.openaiUrl, secret: `sk-${name}-xxxxxxxxxxxx`, authClass: 'apikey', ...extra });

  it('a request that cannot dispatch within maxWaitMs fails with RATE_LIMIT_QUEUE_TIMEOUT and never reaches the upstream', async () => {
    const c = await addKey('spaced', { rateLimitOverrides: { minTimeMs: 60_000, maxWaitMs: 300 } });
    const client = openaiClient(t);
    expect((await ask(client, 'm')).status).toBe(200);
    const second = await ask(client, 'm');
    expect(second).toMatchObject({ status: 429, code: 'RATE_LIMIT_QUEUE_TIMEOUT' });
    expect(second.retryAfter).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(1);
    expect(await admissionOf(t, c.id)).toMatchObject({ queued: 0, inFlight: 0 });
    const log = (await t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(log).toMatchObject({ status: 429, errorCode: 'RATE_LIMIT_QUEUE_TIMEOUT' });
    expect(log.attempts).toHaveLength(0);
  });

  it('a full queue refuses a request at once with RATE_LIMIT_QUEUE_FULL, before any upstream work', async () => {
    await t.api.patchResilience({ patch: { requestQueue: { maxQueueDepth: 1 } } });
    const c = await addKey('deep', { rateLimitOverrides: { minTimeMs: 60_000, maxWaitMs: 30_000 } });
    const client = openaiClient(t);
    expect((await ask(client, 'm')).status).toBe(200);
    const hold = new AbortController();
    const queued = ask(client, 'm', { signal: hold.signal }).catch(() => null);
    await waitForAdmission(t, c.id, (v) => v.queued === 1);
    const refused = await ask(client, 'm');
    expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMIT_QUEUE_FULL' });
    expect(fake.requests).toHaveLength(1);
    hold.abort();
    await queued;
    await waitForAdmission(t, c.id, (v) => v.queued === 0);
  });

  it('a dispatched request that does not start answering within the execution budget gets 504 RATE_LIMIT_EXECUTION_TIMEOUT', async () => {
    await addKey('stalls', { rateLimitOverrides: { executionMaxWaitMs: 1_500 }, timeouts: { headersMs: 1_000, idleMs: 60_000 } });
    fake.script({}, [{ stallAfterHeaders: true }]);
    const out = await ask(openaiClient(t), 'm');
    expect(out).toMatchObject({ status: 504, code: 'RATE_LIMIT_EXECUTION_TIMEOUT' });
  });

  it('the execution budget is raised to the headers timeout, so a slow but healthy answer succeeds', async () => {
    await addKey('slow', { rateLimitOverrides: { executionMaxWaitMs: 100 }, timeouts: { headersMs: 5_000 } });
    fake.script({}, [{ delayMs: 400, json: { id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'late' }, finish_reason: 'stop' }] } }]);
    const out = await ask(openaiClient(t), 'm');
    expect(out).toMatchObject({ status: 200, text: 'late' });
  });

  it('a stream that outlasts the execution budget is not cut off once it has started', async () => {
    await addKey('long-stream', { rateLimitOverrides: { executionMaxWaitMs: 1_000 }, timeouts: { headersMs: 1_000 } });
    fake.script({}, [{ chunks: openaiStream('m', ['a', 'b', 'c', 'd', 'e'], 400) }]);
    const s = await openaiClient(t).chat.completions.create({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const ch of s) text += ch.choices[0]?.delta?.content ?? '';
    expect(text).toBe('abcde');
  });

  it('maxWaitMs precedence is env < persisted < per-connection', async () => {
    // A 3 s pause on the connection (declared by a 429 on another model) tells the budgets apart:
    // a caller whose budget ends before the pause does is refused at once, a longer one waits.
    await t.api.patchResilience({ patch: { requestQueue: { maxWaitMs: 5_000 } } });
    const c = await addKey('budgets', { disableCooling: true, rateLimitOverrides: { maxWaitMs: 1_000 } });
    const client = openaiClient(t);
    fake.script({ model: 'trigger-1' }, [rateLimited(3_000)]);
    fake.script({ model: 'trigger-2' }, [rateLimited(3_000)]);

    expect((await ask(client, 'trigger-1')).status).toBe(429);
    expect((await admissionOf(t, c.id)).pausedUntil).not.toBeNull();
    // Per-connection 1000 ms: refused at once.
    expect(await ask(client, 'work')).toMatchObject({ status: 429, code: 'RATE_LIMIT_QUEUE_TIMEOUT' });
    expect(fake.requestsFor({ model: 'work' })).toHaveLength(0);

    // Without the override the persisted 5000 ms applies: it waits out the pause and succeeds.
    await t.api.updateConnection({ id: c.id, patch: { rateLimitOverrides: {} } });
    expect(await ask(client, 'work')).toMatchObject({ status: 200 });

    // Without the persisted value the env's 2000 ms applies: refused at once again.
    await t.api.patchResilience({ patch: { requestQueue: { maxWaitMs: null } } });
    expect((await ask(client, 'trigger-2')).status).toBe(429);
    expect(await ask(client, 'work')).toMatchObject({ status: 429, code: 'RATE_LIMIT_QUEUE_TIMEOUT' });
    expect(fake.requestsFor({ model: 'work' })).toHaveLength(1);
  });
});
