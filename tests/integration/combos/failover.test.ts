// Combo failover across providers and models (issue 10 acceptance): a retryable failure on the
// first target moves to the next target, which may be another model on another provider; the
// answer says what served it; the request log keeps the strategy's order and each outcome.
import { describe, expect, it } from 'vitest';
import { rateLimited, rigPerTest } from '../resilience/support';
import { comboRig, ENV, KEY_A, KEY_B, KEY_C, overloaded, send } from './support';

describe('combo failover', () => {
  const { fake, startRig } = rigPerTest();

  it('A answers 503 persistently: the client gets model-y from B after one attempt on A', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({
      targets: [
        { provider: 'alpha', model: 'model-x' },
        { provider: 'beta', model: 'model-y' },
      ],
    });
    fake.script({ key: KEY_A }, [overloaded()]);
    const got = await send(r.rig.client);
    expect(got).toMatchObject({ status: 200, connection: r.b.id, servedModel: 'model-y', combo: 'pool', bodyModel: 'model-y' });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1);
    expect(fake.requestsFor({ key: KEY_B }).map((q) => q.model)).toEqual(['model-y']);
    const log = await r.lastLog();
    expect(log.combo).toMatchObject({ name: 'pool', strategy: 'priority', via: 'name' });
    expect(log.combo!.order.map((o) => [o.target, o.model, o.outcome, o.reason, o.status])).toEqual([
      [0, 'model-x', 'failed', 'server_error', 503],
      [1, 'model-y', 'served', null, 200],
    ]);
    expect(log.attempts.map((a) => [a.connectionName, a.model, a.status, a.failedOver])).toEqual([
      ['Alpha', 'model-x', 503, true],
      ['Beta', 'model-y', 200, false],
    ]);
  });

  it('A answers 429 without a hint: B serves model-y after one attempt on A', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({ targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    fake.script({ key: KEY_A }, [rateLimited()]);
    const got = await send(r.rig.client);
    expect(got).toMatchObject({ status: 200, connection: r.b.id, servedModel: 'model-y' });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1);
  });

  it('A stalls before its headers past the target timeout: B serves', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({
      targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }],
      options: { targetTimeoutMs: 300 },
    });
    fake.script({ key: KEY_A }, [{ hang: true }]);
    const got = await send(r.rig.client);
    expect(got).toMatchObject({ status: 200, connection: r.b.id, servedModel: 'model-y' });
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(1);
    const log = await r.lastLog();
    expect(log.attempts[0]).toMatchObject({ connectionName: 'Alpha', errorClass: 'timeout', failedOver: true });
  });

  it('a healthy first target serves every request and the second is never called', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({ targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    for (let i = 0; i < 3; i++) expect(await send(r.rig.client)).toMatchObject({ status: 200, connection: r.a.id, servedModel: 'model-x' });
    expect(fake.requestsFor({ key: KEY_B })).toHaveLength(0);
    // The upstream got the target's model, not the combo's name.
    expect(fake.requestsFor({ key: KEY_A }).map((q) => q.model)).toEqual(['model-x', 'model-x', 'model-x']);
  });

  it('answers OpenAI clients too, with the combo over OpenAI-protocol targets', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.rig.t.addConnection({ name: 'Delta', kind: 'openai-compatible', provider: 'delta', baseUrl: fake.openaiUrl, secret: 'key-delta-0000004', models: ['model-w'] });
    await r.combo({ name: 'oa', targets: [{ provider: 'gamma', model: 'model-z' }, { provider: 'delta', model: 'model-w' }] });
    fake.script({ key: KEY_C }, [{ status: 502, json: { error: { message: 'bad gateway', type: 'server_error' } } }]);
    const { data, response } = await r.openai.chat.completions.create({ model: 'oa', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.model).toBe('model-w');
    expect(response.headers.get('x-switchyard-served-model')).toBe('model-w');
    expect(response.headers.get('x-switchyard-combo')).toBe('oa');
  });

  it('a target of the other protocol serves through translation, and the log says the attempt was translated', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    const { warnings } = await r.rig.t.api.createCombo({
      name: 'mixed',
      targets: [{ provider: 'gamma', model: 'model-z' }, { provider: 'alpha', model: 'model-x' }],
    });
    expect(warnings.join(' ')).toContain('both the Anthropic and the OpenAI protocol');
    const got = await send(r.rig.client, 'mixed');
    expect(got).toMatchObject({ status: 200, connection: r.c.id, servedModel: 'model-z' });
    expect(fake.requestsFor({ key: KEY_C })).toHaveLength(1);
    expect(fake.requestsFor({ key: KEY_C })[0]!.path).toBe('/v1/chat/completions');
    const log = await r.lastLog();
    expect(log.attempts[0]).toMatchObject({ connectionName: 'Gamma', translated: 'anthropic-messages→openai-chat' });
  });

  it('a pinned target uses only its connection', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    const a2 = await r.rig.add('Alpha 2', 'key-alpha-2-0000005', { kind: 'anthropic-compatible', provider: 'alpha', models: ['model-x'], passthroughModels: false, priority: 0 });
    await r.combo({ targets: [{ connectionId: r.a.id, model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    expect(await send(r.rig.client)).toMatchObject({ status: 200, connection: r.a.id });
    fake.script({ key: KEY_A }, [overloaded()]);
    expect(await send(r.rig.client)).toMatchObject({ status: 200, connection: r.b.id });
    expect(fake.requestsFor({ key: 'key-alpha-2-0000005' })).toHaveLength(0);
    void a2;
  });

  it('GET /v1/models lists the combos by name', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({ name: 'sonnet', targets: [{ provider: 'alpha', model: 'model-x' }] });
    const page = await r.openai.models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toContain('sonnet');
    expect(page.data.find((m) => m.id === 'sonnet')!.owned_by).toBe('switchyard-combo');
    expect(ids).toContain('alpha/model-x');
    const view = await r.rig.t.api.listModels();
    expect(view.combos).toEqual([{ name: 'sonnet', strategy: 'priority', targets: 1 }]);
  });

  it('a round-robin combo takes turns between models', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({ strategy: 'round-robin', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    const served = [];
    for (let i = 0; i < 4; i++) served.push((await send(r.rig.client)).servedModel);
    expect(served).toEqual(['model-x', 'model-y', 'model-x', 'model-y']);
  });
});
