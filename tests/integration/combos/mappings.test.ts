// Model resolution with combos: exact combo name, `combo/<name>`, a model-pattern mapping (so an
// agent's changing model ids land in one pool), then `provider/model`, then a bare model.
import { describe, expect, it } from 'vitest';
import { rigPerTest } from '../resilience/support';
import { comboRig, ENV, KEY_A, KEY_B, send } from './support';

describe('combo resolution and model mappings', () => {
  const { fake, startRig } = rigPerTest();

  it("a mapping claude-* routes Claude Code's real model ids to the combo", async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({ name: 'claude-pool', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    await r.rig.t.api.createModelMapping({ pattern: 'claude-*', combo: 'claude-pool' });
    for (const id of ['claude-sonnet-4-5-20250929', 'claude-opus-4-1', 'claude-3-5-haiku-20241022', 'claude-haiku-4-5-20251001']) {
      const got = await send(r.rig.client, id);
      expect(got, id).toMatchObject({ status: 200, combo: 'claude-pool', servedModel: 'model-x', connection: r.a.id });
      const log = await r.lastLog();
      expect(log.requestedModel).toBe(id);
      expect(log.combo).toMatchObject({ name: 'claude-pool', via: 'mapping', pattern: 'claude-*' });
    }
    expect(new Set(fake.requestsFor({ key: KEY_A }).map((q) => q.model))).toEqual(new Set(['model-x']));
  });

  it('the most specific mapping wins', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({ name: 'big', targets: [{ provider: 'alpha', model: 'model-x' }] });
    await r.combo({ name: 'small', targets: [{ provider: 'beta', model: 'model-y' }] });
    await r.rig.t.api.createModelMapping({ pattern: 'claude-*', combo: 'big' });
    await r.rig.t.api.createModelMapping({ pattern: 'claude-3-5-haiku-*', combo: 'small' });
    expect((await send(r.rig.client, 'claude-3-5-haiku-20241022')).combo).toBe('small');
    expect((await send(r.rig.client, 'claude-opus-4-1')).combo).toBe('big');
  });

  it('resolution order: exact name, combo/<name>, mapping, provider/model, bare model', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({ name: 'model-y', targets: [{ provider: 'alpha', model: 'model-x' }] });
    await r.combo({ name: 'other', targets: [{ provider: 'beta', model: 'model-y' }] });
    await r.rig.t.api.createModelMapping({ pattern: 'model-*', combo: 'other' });
    // A combo named like a model takes that model's requests (fallback for one model).
    expect(await send(r.rig.client, 'model-y')).toMatchObject({ combo: 'model-y', servedModel: 'model-x' });
    expect(await send(r.rig.client, 'combo/other')).toMatchObject({ combo: 'other', servedModel: 'model-y' });
    expect(await send(r.rig.client, 'Combo/Other')).toMatchObject({ combo: 'other' });
    // The mapping catches other model-* ids before bare-model resolution does.
    expect(await send(r.rig.client, 'model-s')).toMatchObject({ combo: 'other', servedModel: 'model-y' });
    // provider/model and bare models still work when no combo matches.
    const direct = await send(r.rig.client, 'beta/model-l');
    expect(direct).toMatchObject({ status: 200, combo: null, servedModel: 'model-l', connection: r.b.id });
    await r.rig.t.api.deleteModelMapping({ id: (await r.rig.t.api.listModelMappings())[0]!.id });
    expect(await send(r.rig.client, 'model-s')).toMatchObject({ status: 200, combo: null, servedModel: 'model-s' });
    expect(fake.requestsFor({ key: KEY_B }).map((q) => q.model)).toContain('model-l');
  });
});
