// Combos and model mappings through the management API (REST, as a script or the dashboard calls
// it): create, read, replace, change, delete; every bad input is a 400 naming the field and
// writes nothing; a name that is also a model id is allowed with a warning.
import { describe, expect, it } from 'vitest';
import { COMBO_STRATEGIES } from '../../../src/shared/model';
import { rigPerTest } from '../resilience/support';
import { comboRig, ENV } from './support';

async function rest(url: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

describe('combos over the management API', () => {
  const { startRig } = rigPerTest();

  async function start() {
    const r = await comboRig(await startRig({ env: ENV }));
    const call = (method: string, path: string, body?: unknown) => rest(r.rig.t.managementUrl, r.rig.t.token, method, path, body);
    return { ...r, call };
  }

  it('creates, reads, changes, replaces and deletes a combo', async () => {
    const { call } = await start();
    const created = await call('POST', '/api/combos', {
      name: 'pool',
      strategy: 'weighted',
      targets: [
        { provider: 'alpha', model: 'model-x', weight: 3 },
        { provider: 'beta', model: 'model-y' },
      ],
      options: { targetTimeoutMs: 5_000 },
    });
    expect(created.status).toBe(200);
    expect(created.json.warnings).toEqual([]);
    const id = created.json.combo.id as string;
    expect(created.json.combo).toMatchObject({
      name: 'pool',
      strategy: 'weighted',
      targets: [
        { provider: 'alpha', model: 'model-x', connectionId: null, weight: 3 },
        { provider: 'beta', model: 'model-y', connectionId: null, weight: 1 },
      ],
      options: { targetTimeoutMs: 5_000 },
    });
    expect((await call('GET', `/api/combos/${id}`)).json.name).toBe('pool');
    expect((await call('GET', '/api/combos/POOL')).json.id).toBe(id);
    const patched = await call('PATCH', `/api/combos/${id}`, { strategy: 'lkgp' });
    expect(patched.json.combo).toMatchObject({ strategy: 'lkgp', options: { targetTimeoutMs: 5_000 } });
    const replaced = await call('PUT', `/api/combos/${id}`, { name: 'pool2', targets: [{ provider: 'beta', model: 'model-y' }] });
    expect(replaced.json.combo).toMatchObject({ name: 'pool2', strategy: 'priority', options: {}, targets: [{ provider: 'beta', model: 'model-y' }] });
    await call('POST', '/api/model-mappings', { pattern: 'claude-*', combo: 'pool2' });
    const del = await call('DELETE', `/api/combos/${id}`);
    expect(del.json).toEqual({ deleted: true, mappingsRemoved: 1 });
    expect((await call('GET', '/api/combos')).json).toEqual([]);
    expect((await call('GET', '/api/model-mappings')).json).toEqual([]);
    expect((await call('GET', `/api/combos/${id}`)).status).toBe(404);
  });

  it.each([
    ['an empty target list', { name: 'p', targets: [] }, 'targets', 'at least one target'],
    ['an unknown provider', { name: 'p', targets: [{ provider: 'nope', model: 'm' }] }, 'targets.0.provider', 'no connection of provider "nope"'],
    ['an unknown connection', { name: 'p', targets: [{ provider: 'alpha', model: 'model-x' }, { connectionId: 'missing', model: 'm' }] }, 'targets.1.connectionId', 'no connection has the id'],
    ['a target without provider or connection', { name: 'p', targets: [{ model: 'm' }] }, 'targets.0.provider', 'give a provider'],
    ['the same target twice', { name: 'p', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'alpha', model: 'model-x' }] }, 'targets.1', 'the same target as targets.0'],
    ['an unknown strategy', { name: 'p', strategy: 'fastest', targets: [{ provider: 'alpha', model: 'model-x' }] }, 'strategy', 'must be one of'],
    ['an execution shape as strategy', { name: 'p', strategy: 'fusion', targets: [{ provider: 'alpha', model: 'model-x' }] }, 'strategy', 'execution shape'],
    ['a name with a space', { name: 'my pool', targets: [{ provider: 'alpha', model: 'model-x' }] }, 'name', 'use letters'],
    ['a name with the combo/ prefix', { name: 'combo/x', targets: [{ provider: 'alpha', model: 'model-x' }] }, 'name', 'combo/'],
    ['an unknown option', { name: 'p', targets: [{ provider: 'alpha', model: 'model-x' }], options: { retries: 3 } }, 'options.retries', 'unknown field'],
    ['a weight of 0', { name: 'p', targets: [{ provider: 'alpha', model: 'model-x', weight: 0 }] }, 'targets.0.weight', ''],
  ])('refuses %s with a 400 naming the field, and writes nothing', async (_what, body, field, words) => {
    const { call } = await start();
    const res = await call('POST', '/api/combos', body);
    expect(res.status).toBe(400);
    expect(res.json.error.field).toBe(field);
    expect(res.json.error.message).toContain(words);
    expect((await call('GET', '/api/combos')).json).toEqual([]);
  });

  it('refuses a duplicate name (in any case), also on rename, and keeps the first', async () => {
    const { call } = await start();
    await call('POST', '/api/combos', { name: 'Pool', targets: [{ provider: 'alpha', model: 'model-x' }] });
    const other = await call('POST', '/api/combos', { name: 'other', targets: [{ provider: 'beta', model: 'model-y' }] });
    const dup = await call('POST', '/api/combos', { name: 'pool', targets: [{ provider: 'beta', model: 'model-y' }] });
    expect(dup.status).toBe(400);
    expect(dup.json.error.field).toBe('name');
    const rename = await call('PATCH', `/api/combos/${other.json.combo.id}`, { name: 'POOL' });
    expect(rename.status).toBe(400);
    expect(rename.json.error.field).toBe('name');
    expect((await call('GET', '/api/combos')).json.map((c: { name: string }) => c.name)).toEqual(['Pool', 'other']);
  });

  it('PUT needs the targets; a bad PATCH changes nothing', async () => {
    const { call } = await start();
    const { json } = await call('POST', '/api/combos', { name: 'pool', targets: [{ provider: 'alpha', model: 'model-x' }] });
    const put = await call('PUT', `/api/combos/${json.combo.id}`, { name: 'pool' });
    expect(put.status).toBe(400);
    expect(put.json.error.field).toBe('targets');
    const bad = await call('PATCH', `/api/combos/${json.combo.id}`, { strategy: 'random', targets: [{ provider: 'zzz', model: 'm' }] });
    expect(bad.json.error.field).toBe('targets.0.provider');
    expect((await call('GET', `/api/combos/${json.combo.id}`)).json).toMatchObject({ strategy: 'priority', targets: [{ provider: 'alpha' }] });
  });

  it('allows a combo named like a real model id, with a warning saying so', async () => {
    const { call } = await start();
    const res = await call('POST', '/api/combos', { name: 'claude-sonnet-4-5', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual([expect.stringContaining('"claude-sonnet-4-5" is also a model id')]);
    const listed = await call('POST', '/api/combos', { name: 'model-y', targets: [{ provider: 'alpha', model: 'model-x' }] });
    expect(listed.json.warnings[0]).toContain('also a model id');
  });

  it('accepts every ordering strategy', async () => {
    const { call } = await start();
    for (const strategy of COMBO_STRATEGIES) {
      const res = await call('POST', '/api/combos', { name: `c-${strategy}`, strategy, targets: [{ provider: 'alpha', model: 'model-x' }] });
      expect(res.status, strategy).toBe(200);
    }
    expect((await call('GET', '/api/combos')).json).toHaveLength(COMBO_STRATEGIES.length);
  });

  it('mappings: bad patterns, unknown combos and duplicates are 400s naming the field', async () => {
    const { call } = await start();
    await call('POST', '/api/combos', { name: 'sonnet', targets: [{ provider: 'alpha', model: 'model-x' }] });
    const ok = await call('POST', '/api/model-mappings', { pattern: 'claude-sonnet-*', combo: 'sonnet' });
    expect(ok.json).toMatchObject({ pattern: 'claude-sonnet-*', comboName: 'sonnet' });
    for (const [body, field] of [
      [{ pattern: 'claude sonnet', combo: 'sonnet' }, 'pattern'],
      [{ pattern: 'gpt-*', combo: 'nope' }, 'combo'],
      [{ pattern: 'CLAUDE-SONNET-*', combo: 'sonnet' }, 'pattern'],
      [{ pattern: 'gpt-*' }, 'combo'],
    ] as const) {
      const res = await call('POST', '/api/model-mappings', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.field).toBe(field);
    }
    expect((await call('GET', '/api/model-mappings')).json).toHaveLength(1);
    const changed = await call('PUT', `/api/model-mappings/${ok.json.id}`, { pattern: 'claude-*', combo: 'sonnet' });
    expect(changed.json.pattern).toBe('claude-*');
    expect((await call('DELETE', `/api/model-mappings/${ok.json.id}`)).json).toEqual({ deleted: true });
    expect((await call('DELETE', `/api/model-mappings/${ok.json.id}`)).status).toBe(404);
  });

  it('a pattern with too many wildcards is a 400 that says so, for a mapping and for a per-model deadline', async () => {
    const { call } = await start();
    await call('POST', '/api/combos', { name: 'sonnet', targets: [{ provider: 'alpha', model: 'model-x' }] });
    const greedy = `${'*a'.repeat(20)}*`;
    const res = await call('POST', '/api/model-mappings', { pattern: greedy, combo: 'sonnet' });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ field: 'pattern' });
    expect(res.json.error.message).toMatch(/at most 16 wildcards/);
    expect((await call('GET', '/api/model-mappings')).json).toHaveLength(0);
    const deadlines = await call('PATCH', '/api/settings', { 'streams.modelDeadlines': [{ model: greedy, firstOutputMs: 1000 }] });
    expect(deadlines.status).toBe(400);
    expect(JSON.stringify(deadlines.json.error)).toMatch(/at most 16 wildcards/);
    expect((await call('POST', '/api/model-mappings', { pattern: '*-*-*-latest', combo: 'sonnet' })).status).toBe(200);
  });

  it('keeps combos and mappings across a restart', async () => {
    const rig = await startRig({ env: ENV });
    await comboRig(rig);
    await rig.t.api.createCombo({ name: 'kept', strategy: 'cost-optimized', targets: [{ provider: 'alpha', model: 'model-x' }] });
    await rig.t.api.createModelMapping({ pattern: 'gpt-*', combo: 'kept' });
    const dataDir = rig.t.dataDir;
    await rig.t.app.stop();
    const again = await startRig({ env: ENV, dataDir });
    try {
      expect((await again.t.api.listCombos()).map((c) => [c.name, c.strategy])).toEqual([['kept', 'cost-optimized']]);
      expect((await again.t.api.listModelMappings()).map((m) => [m.pattern, m.comboName])).toEqual([['gpt-*', 'kept']]);
    } finally {
      await again.stop();
    }
  });

  it('the model catalog shows built-in windows and prices, and the settings that override them', async () => {
    const { call } = await start();
    await call('PATCH', '/api/settings', { 'combos.contextWindows': { 'my-local': 32_768 }, 'combos.modelPrices': { 'claude-sonnet-4-5': { input: 2, output: 10 } } });
    const cat = (await call('GET', '/api/model-catalog')).json as { model: string; contextWindow: number; price: unknown; source: string }[];
    expect(cat.find((e) => e.model === 'my-local')).toMatchObject({ contextWindow: 32_768, source: 'setting' });
    expect(cat.find((e) => e.model === 'claude-sonnet-4-5')).toMatchObject({ contextWindow: 200_000, price: { input: 2, output: 10 }, source: 'setting' });
    expect(cat.find((e) => e.model === 'gpt-4o')).toMatchObject({ contextWindow: 128_000, source: 'built-in' });
    const bad = await call('PATCH', '/api/settings', { 'combos.contextWindows': { 'x y': 5 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.field).toBe('combos.contextWindows');
  });
});
