// The same-target retry budget (issue 19): a failure whose upstream asked for a short wait, or a
// plain server error, is sent again to the same connection and model after that wait, before the
// combo moves on to another model. The engine runs on a fake clock: a waiting request is released
// by advancing it once the engine logged the planned retry, so nothing here sleeps for real or
// measures time.
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { rateLimited, rigPerTest, type Rig } from '../resilience/support';
import { comboRig, ENV, KEY_A, KEY_B, KEY_C, overloaded, send, type ComboRig } from './support';

/** Resolves once the engine logged `count` planned same-target retries. */
async function retrying(rig: Rig, count = 1): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (rig.t.logs.lines.filter((l) => l.includes('retry.same_target')).length < count) {
    if (Date.now() > deadline) throw new Error(`no retry.same_target line: ${rig.t.logs.lines.slice(-5).join('')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const retryLines = (rig: Rig) => rig.t.logs.lines.filter((l) => l.includes('retry.same_target')).length;

describe('same-target retry budget', () => {
  const { fake, startRig } = rigPerTest();

  async function start(settings: Record<string, unknown> = {}): Promise<ComboRig> {
    const rig = await startRig({ env: ENV, defaults: true });
    if (Object.keys(settings).length) await rig.t.api.patchSettings({ patch: settings });
    const r = await comboRig(rig);
    await r.combo({ targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    return r;
  }

  it('a 429 with Retry-After: 1, then 200: the same model serves after the hinted second, and the log says so', async () => {
    const r = await start();
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '1' }), () => undefined], { repeatLast: false });
    const pending = send(r.rig.client);
    await retrying(r.rig);
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1); // nothing re-sent before the hinted wait
    r.rig.clock.advance(1_000);
    const got = await pending;
    expect(got).toMatchObject({ status: 200, connection: r.a.id, servedModel: 'model-x', bodyModel: 'model-x' });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(2);
    expect(fake.requestsFor({ key: KEY_B })).toHaveLength(0);
    const log = await r.lastLog();
    expect(log.attempts.map((a) => [a.connectionName, a.model, a.status, a.failedOver, a.retry ?? null])).toEqual([
      ['Alpha', 'model-x', 429, false, null],
      ['Alpha', 'model-x', 200, false, { waitedMs: 1_000, why: 'hinted', afterStatus: 429 }],
    ]);
    expect(log.combo!.order.map((o) => [o.model, o.outcome])).toEqual([
      ['model-x', 'served'],
      ['model-y', 'not_tried'],
    ]);
  });

  it('one 500, then 200: the same model serves after the short default delay (OpenAI client, streamed)', async () => {
    const r = await start();
    await r.rig.t.addConnection({ name: 'Delta', kind: 'openai-compatible', provider: 'delta', baseUrl: fake.openaiUrl, secret: 'key-delta-0000004', models: ['model-w'] });
    await r.combo({ name: 'oa', targets: [{ provider: 'gamma', model: 'model-z' }, { provider: 'delta', model: 'model-w' }] });
    fake.script({ key: KEY_C }, [{ status: 500, json: { error: { message: 'internal error', type: 'server_error' } } }, () => undefined], { repeatLast: false });
    const pending = (async () => {
      const stream = await r.openai.chat.completions.create({ model: 'oa', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      let model = '';
      let text = '';
      for await (const c of stream) {
        model = c.model;
        text += c.choices[0]?.delta?.content ?? '';
      }
      return { model, text };
    })();
    await retrying(r.rig);
    r.rig.clock.advance(750);
    const got = await pending;
    expect(got.model).toBe('model-z');
    expect(got.text.length).toBeGreaterThan(0);
    expect(fake.requestsFor({ key: KEY_C })).toHaveLength(2);
    expect(fake.requestsFor({ key: 'key-delta-0000004' })).toHaveLength(0);
    const log = await r.lastLog();
    expect(log.attempts.map((a) => a.retry ?? null)).toEqual([null, { waitedMs: 750, why: 'unhinted', afterStatus: 500 }]);
  });

  it('a Retry-After above the longest hinted wait fails over to the next target at once', async () => {
    const r = await start({ 'sameTargetRetry.maxHintedWaitMs': 1_000 });
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '2' })]);
    const got = await send(r.rig.client);
    expect(got).toMatchObject({ status: 200, connection: r.b.id, servedModel: 'model-y' });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1);
    expect(retryLines(r.rig)).toBe(0);
  });

  it('a persistent 503: one waited retry of the same model, then the next target (one retry per target)', async () => {
    const r = await start();
    fake.script({ key: KEY_A }, [overloaded()]);
    const pending = send(r.rig.client);
    await retrying(r.rig);
    r.rig.clock.advance(750);
    const got = await pending;
    expect(got).toMatchObject({ status: 200, connection: r.b.id, servedModel: 'model-y' });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(2);
    const log = await r.lastLog();
    expect(log.attempts.map((a) => [a.connectionName, a.status, a.failedOver])).toEqual([
      ['Alpha', 503, false],
      ['Alpha', 503, true],
      ['Beta', 200, false],
    ]);
  });

  it('a combo with sameTargetRetries: 0 moves on at once; the setting does the same for every request', async () => {
    const r = await start();
    await r.rig.t.api.updateCombo({ id: 'pool', patch: { options: { sameTargetRetries: 0 } } });
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '1' })]);
    expect(await send(r.rig.client)).toMatchObject({ status: 200, connection: r.b.id });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1);
    expect(retryLines(r.rig)).toBe(0);
  });

  it('a retry is a wait: a combo opted out of waits (R-SQ-19) moves on at once, so does a hint above the longest single wait (R-SQ-17)', async () => {
    const r = await start({ 'comboCooldownWait.maxWaitMs': 1_000 });
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '2' })]);
    expect(await send(r.rig.client)).toMatchObject({ status: 200, connection: r.b.id });
    await r.rig.t.api.updateCombo({ id: 'pool', patch: { options: { comboCooldownWaitEnabled: false } } });
    await r.rig.t.api.patchSettings({ patch: { 'comboCooldownWait.maxWaitMs': null } });
    await r.rig.t.api.clearCooldowns({ all: true });
    fake.reset();
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '1' })]);
    expect(await send(r.rig.client)).toMatchObject({ status: 200, connection: r.b.id });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1);
    expect(retryLines(r.rig)).toBe(0);
  });

  it('the client leaves during the wait: nothing more is sent, and the log says the client left', async () => {
    const r = await start();
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '2' }), () => undefined], { repeatLast: false });
    const ctl = new AbortController();
    const pending = r.rig.client.messages.create({ model: 'pool', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }, { signal: ctl.signal });
    await retrying(r.rig);
    ctl.abort();
    await expect(pending).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    // The engine sees the socket close; its log row is written once the request ends.
    const deadline = Date.now() + 5_000;
    let log = await r.lastLog();
    while (log?.errorCode !== 'client_closed_request' && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 20));
      log = await r.lastLog();
    }
    r.rig.clock.advance(5_000);
    expect(log.errorCode).toBe('client_closed_request');
    expect(log.attempts).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
  });

  it('a plain model on one connection: a 429 with Retry-After: 1 is retried on it and served', async () => {
    const rig = await startRig({ env: ENV, defaults: true });
    const a = await rig.add('Solo', KEY_A, { models: ['claude-x'] });
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '1' }), () => undefined], { repeatLast: false });
    const pending = send(rig.client, 'claude-x');
    await retrying(rig);
    rig.clock.advance(1_000);
    expect(await pending).toMatchObject({ status: 200, connection: a.id });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(2);
  });

  it('a plain model with a second key: a 500 moves to the other key at once (same model, no wait)', async () => {
    const rig = await startRig({ env: ENV, defaults: true });
    await rig.add('One', KEY_A, { models: ['claude-x'], priority: 1 });
    const b = await rig.add('Two', KEY_B, { models: ['claude-x'], priority: 2 });
    fake.script({ key: KEY_A }, [{ status: 500, json: { type: 'error', error: { type: 'api_error', message: 'internal' } } }]);
    expect(await send(rig.client, 'claude-x')).toMatchObject({ status: 200, connection: b.id });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1);
    expect(retryLines(rig)).toBe(0);
  });
});
