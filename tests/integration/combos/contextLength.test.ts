// The context-length rule and request-shape errors inside a combo: "prompt is too long" on a small
// window moves only to a target with a larger window, never to the same model again; a refused
// prompt (content filter) and other malformed-request 400s are relayed after exactly one attempt.
import { describe, expect, it } from 'vitest';
import { anthropicError, rigPerTest } from '../resilience/support';
import { comboRig, ENV, KEY_A, KEY_B, send, tooLong } from './support';

describe('combo context-length fallback', () => {
  const { fake, startRig } = rigPerTest();

  async function start() {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.rig.t.api.patchSettings({ patch: { 'combos.contextWindows': { 'model-s': 8_192, 'model-x': 32_768, 'model-l': 200_000 } } });
    return r;
  }

  it('a context-length 400 on the small-window model moves to the larger one', async () => {
    const r = await start();
    await r.combo({ targets: [{ provider: 'alpha', model: 'model-s' }, { provider: 'beta', model: 'model-l' }] });
    fake.script({ key: KEY_A }, [tooLong(9_000, 8_192)]);
    const got = await send(r.rig.client);
    expect(got).toMatchObject({ status: 200, connection: r.b.id, servedModel: 'model-l' });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1);
    const log = await r.lastLog();
    expect(log.attempts.map((a) => [a.model, a.status, a.errorClass])).toEqual([
      ['model-s', 400, 'bad_request'],
      ['model-l', 200, null],
    ]);
  });

  it('never re-sends to the same model, and skips windows that are not larger', async () => {
    const r = await start();
    await r.combo({
      targets: [
        { provider: 'alpha', model: 'model-x' },
        { provider: 'beta', model: 'model-x' }, // the same model elsewhere: would refuse it too
        { provider: 'beta', model: 'model-s' }, // smaller window
        { provider: 'beta', model: 'model-l' },
      ],
    });
    // Beta lists model-x only for this test.
    await r.rig.t.api.updateConnection({ id: r.b.id, patch: { models: ['model-x', 'model-s', 'model-l'] } });
    fake.script({ key: KEY_A }, [anthropicError(400, 'invalid_request_error', "This model's maximum context length is 32768 tokens. However, your messages resulted in 40000 tokens.")]);
    const got = await send(r.rig.client);
    expect(got).toMatchObject({ status: 200, servedModel: 'model-l' });
    expect(fake.requestsFor({ key: KEY_B }).map((q) => q.model)).toEqual(['model-l']);
    const log = await r.lastLog();
    expect(log.skipped.map((s) => [s.model, s.reason])).toEqual([
      ['model-x', 'context_too_small'],
      ['model-s', 'context_too_small'],
    ]);
  });

  it('relays the context-length error when no larger window is left', async () => {
    const r = await start();
    await r.combo({ targets: [{ provider: 'beta', model: 'model-l' }, { provider: 'alpha', model: 'model-s' }] });
    fake.script({ key: KEY_B }, [tooLong(250_000, 200_000)]);
    const got = await send(r.rig.client);
    expect(got.status).toBe(400);
    expect(got.error?.message).toContain('prompt is too long');
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(0);
    expect(got.retryAfter).toBeNull();
  });

  it('a content-filter refusal is relayed after exactly one attempt', async () => {
    const r = await start();
    await r.combo({ targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-l' }] });
    fake.script({ key: KEY_A }, [anthropicError(400, 'invalid_request_error', 'Output blocked by content filtering policy')]);
    const got = await send(r.rig.client);
    expect(got.status).toBe(400);
    expect(got.error?.message).toContain('content filtering policy');
    expect(got.combo).toBe('pool');
    expect(fake.requests).toHaveLength(1);
    const log = await r.lastLog();
    expect(log.attempts).toHaveLength(1);
    expect(log.combo!.order.map((o) => o.outcome)).toEqual(['failed', 'not_tried']);
  });

  it('other malformed-request 400s are relayed at once too', async () => {
    const r = await start();
    await r.combo({ targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-l' }] });
    fake.script({ key: KEY_A }, [anthropicError(400, 'invalid_request_error', 'messages.0.content: field required')]);
    expect((await send(r.rig.client)).status).toBe(400);
    expect(fake.requests).toHaveLength(1);
  });
});
