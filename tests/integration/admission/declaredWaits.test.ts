// Upstream-declared waits on a 429 (R-RQ-10..19): a wait within maxWaitMs spaces the connection's
// queue (later requests wait, then succeed); a long typed Google RetryInfo on a model-scoped
// connection locks that model for at most 24 h and leaves the queue running; any other long wait
// pauses the queue, and callers whose budget cannot outlast the pause are refused at once.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ConnectionView } from '../../../src/shared/model';
import { FakeUpstream } from '../../support/fakeUpstream';
import { ONE_ANSWER_ENV, startTestEngine, type TestEngine } from '../../support/harness';
import { admissionOf, ask, modelRateLimited, openaiClient, rateLimited, waitForAdmission } from './support';

const DAY_S = 86_399;
const geminiQuota = (delay: string) => ({
  status: 429,
  json: [
    {
      error: {
        code: 429,
        message: 'Resource has been exhausted (e.g. check quota).',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: delay }],
      },
    },
  ],
});

describe('declared waits', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    // The queue's reaction to one declared wait is what these tests read: no same-target retry or plain-model wait.
    t = await startTestEngine({ env: ONE_ANSWER_ENV });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    fake.reset();
    for (const c of await t.api.listConnections()) await t.api.deleteConnection({ id: c.id });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  // disableCooling keeps the 429 from cooling the whole connection, so the queue's own reaction
  // to the declared wait is what the next request meets.
  const addKey = (name: string, extra: Record<string, unknown> = {}): Promise<ConnectionView> =>
    t.addConnection({
      name,
      kind: 'openai-compatible',
      provider: 'acme',
      baseUrl: fake.openaiUrl,
      secret: `sk-${name}-xxxxxxxxxxxx`,
      authClass: 'apikey',
      disableCooling: true,
      ...extra,
    });

  it('a short Retry-After spaces the queue: the next request waits for it, then succeeds', async () => {
    const c = await addKey('spacing');
    const client = openaiClient(t);
    fake.script({ model: 'trigger' }, [rateLimited(1_200)]);
    expect((await ask(client, 'trigger')).status).toBe(429);
    expect((await admissionOf(t, c.id)).pausedUntil).not.toBeNull();

    const pending = ask(client, 'work');
    await waitForAdmission(t, c.id, (v) => v.queued === 1);
    expect(fake.requestsFor({ model: 'work' })).toHaveLength(0);
    expect(await pending).toMatchObject({ status: 200, connectionId: c.id });
    const log = (await t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(log.attempts[0]!.queuedMs).toBeGreaterThan(0);
  });

  it('a short Retry-After scoped to one model holds only that model: another model of the key goes straight through', async () => {
    const c = await addKey('model-spacing');
    const client = openaiClient(t);
    fake.script({ model: 'busy-model' }, [modelRateLimited(1_200), { json: { id: 'x', object: 'chat.completion', created: 1, model: 'busy-model', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] } }]);
    expect((await ask(client, 'busy-model')).status).toBe(429);
    const view = await admissionOf(t, c.id);
    expect(view.pausedUntil).toBeNull();
    expect(view.models.find((m) => m.model === 'busy-model')?.pausedUntil).not.toBeNull();

    // Another model of the same key dispatches at once.
    expect(await ask(client, 'other-model')).toMatchObject({ status: 200, connectionId: c.id });
    expect(fake.requestsFor({ model: 'other-model' })).toHaveLength(1);
    expect(fake.requestsFor({ model: 'busy-model' })).toHaveLength(1);
  });

  it('a prose hint in the body ("retry after 1s") spaces the queue the same way', async () => {
    const c = await addKey('prose');
    fake.script({ model: 'trigger' }, [{ status: 429, headers: { 'x-ratelimit-remaining': '0' }, json: { error: { type: 'rate_limit_error', message: 'Too many requests, please retry after 1s' } } }]);
    const client = openaiClient(t);
    await ask(client, 'trigger');
    expect((await admissionOf(t, c.id)).pausedUntil).not.toBeNull();
    expect((await ask(client, 'work')).status).toBe(200);
  });

  it('a long wait on a connection-wide queue pauses it: callers are refused at once with the pause as Retry-After', async () => {
    const c = await addKey('long-pause');
    fake.script({ model: 'trigger' }, [geminiQuota(`${DAY_S}s`)]);
    const client = openaiClient(t);
    await ask(client, 'trigger');
    const view = await admissionOf(t, c.id);
    expect(view.pausedUntil).not.toBeNull();
    const out = await ask(client, 'work');
    expect(out).toMatchObject({ status: 429, code: 'RATE_LIMIT_QUEUE_TIMEOUT' });
    expect(out.retryAfter).toBeGreaterThan(DAY_S - 60);
    expect(fake.requestsFor({ model: 'work' })).toHaveLength(0);
  });

  it('a long typed RetryInfo on a Gemini connection locks that model (at most 24 h) and does not pause the queue', async () => {
    const c = await addKey('gemini', { provider: 'gemini' });
    const lockModel = vi.spyOn(t.engine.resilience, 'lockModel');
    fake.script({ model: 'gemini-2.5-pro' }, [geminiQuota(`${DAY_S}s`)]);
    const client = openaiClient(t);
    expect((await ask(client, 'gemini-2.5-pro')).status).toBe(429);

    expect(lockModel).toHaveBeenCalledTimes(1);
    const [target, ms, reason] = lockModel.mock.calls[0]!;
    expect(target).toMatchObject({ model: 'gemini-2.5-pro', conn: { id: c.id } });
    expect(ms).toBe(DAY_S * 1000);
    expect(reason).toBe('long_retry_delay');
    const { lockouts } = await t.api.listModelCooldowns({});
    const lock = lockouts.find((l) => l.connectionId === c.id && l.model === 'gemini-2.5-pro');
    expect(lock).toBeDefined();
    expect(lock!.expiresAt - lock!.lockedAt).toBeLessThanOrEqual(86_400_000);

    // The queue keeps dispatching: another model goes straight through.
    const view = await admissionOf(t, c.id);
    expect(view.pausedUntil).toBeNull();
    expect(view.models.every((m) => m.pausedUntil === null)).toBe(true);
    expect(await ask(client, 'gemini-2.5-flash')).toMatchObject({ status: 200, connectionId: c.id });
  });

  it('a connection without queue protection leaves declared waits to the resilience layer', async () => {
    const c = await addKey('unprotected', { authClass: 'oauth' });
    fake.script({ model: 'trigger' }, [rateLimited(5_000)]);
    const client = openaiClient(t);
    await ask(client, 'trigger');
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: false, pausedUntil: null });
    expect((await ask(client, 'work')).status).toBe(200);
  });
});
