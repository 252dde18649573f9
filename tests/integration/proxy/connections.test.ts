// Connections through the management API: every kind, validation that names the field, masked
// secrets, PUT/PATCH semantics, and the "test connection" action against the fake upstream.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

describe('connections', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
  });
  afterEach(async () => {
    fake.reset();
    for (const c of await t.api.listConnections()) await t.api.deleteConnection({ id: c.id });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const fails = async (p: Promise<unknown>) => {
    const e = await p.then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(BridgeError);
    return e as BridgeError;
  };

  it('creates each kind with sensible defaults', async () => {
    const anthropic = await t.api.createConnection({ name: 'A', kind: 'anthropic', secret: 'sk-ant-api03-abcdefghijklmnop' });
    expect(anthropic).toMatchObject({
      provider: 'anthropic',
      protocol: 'anthropic',
      authClass: 'apikey',
      baseUrl: 'https://api.anthropic.com',
      priority: 1,
      enabled: true,
      passthroughModels: true,
    });
    const openai = await t.api.createConnection({ name: 'O', kind: 'openai', secret: 'sk-proj-abcdefghijklmnop' });
    expect(openai).toMatchObject({ provider: 'openai', protocol: 'openai', baseUrl: 'https://api.openai.com/v1' });
    const local = await t.api.createConnection({ name: 'Ollama', kind: 'local' });
    expect(local).toMatchObject({ provider: 'ollama', authClass: 'local', baseUrl: 'http://127.0.0.1:11434/v1' });
    expect(local.secret).toEqual({ set: false, masked: null });
    const glm = await t.api.createConnection({
      name: 'GLM',
      kind: 'anthropic-compatible',
      provider: 'glm',
      baseUrl: 'https://api.z.ai/api/anthropic/',
      secret: 'glm-key-abcdefghijklmnop',
      models: ['glm-4.6'],
      passthroughModels: false,
    });
    expect(glm).toMatchObject({ provider: 'glm', protocol: 'anthropic', baseUrl: 'https://api.z.ai/api/anthropic', models: ['glm-4.6'] });
    const oauth = await t.api.createConnection({ name: 'Claude Max', kind: 'anthropic', authClass: 'oauth', secret: 'sk-ant-oat01-abcdefghijklmnop' });
    expect(oauth.authClass).toBe('oauth');
  });

  it('names the field when input is wrong and creates nothing', async () => {
    expect((await fails(t.api.createConnection({ name: 'X', kind: 'openai-compatible', baseUrl: 'https://x.test/v1' }))).field).toBe('provider');
    expect((await fails(t.api.createConnection({ name: 'X', kind: 'openai-compatible', provider: 'x' }))).field).toBe('baseUrl');
    expect((await fails(t.api.createConnection({ name: 'X', kind: 'anthropic' }))).field).toBe('secret');
    expect((await fails(t.api.createConnection({ name: 'X', kind: 'local', baseUrl: 'ftp://nope' }))).field).toBe('baseUrl');
    expect((await fails(t.api.createConnection({ name: 'X', kind: 'local', provider: 'Bad Id!' }))).field).toBe('provider');
    expect((await fails(t.api.createConnection({ name: '', kind: 'local' }))).field).toBe('name');
    expect((await fails(t.api.createConnection({ name: 'X', kind: 'local', maxConcurrent: 0 }))).field).toBe('maxConcurrent');
    expect((await fails(t.api.createConnection({ name: 'X', kind: 'local', passthroughModels: false }))).field).toBe('models');
    const bogus = await fails(t.api.createConnection({ name: 'X', kind: 'local', colour: 'red' } as never));
    expect(bogus.field).toBe('colour');
    expect(await t.api.listConnections()).toEqual([]);
  });

  it('never returns a secret, only its mask', async () => {
    const secret = 'sk-ant-api03-SECRETSECRETSECRET-tail';
    const c = await t.api.createConnection({ name: 'A', kind: 'anthropic', secret });
    expect(c.secret).toEqual({ set: true, masked: expect.stringMatching(/…tail$/) });
    const all = JSON.stringify([await t.api.listConnections(), await t.api.getConnection({ id: c.id }), await t.api.listCooldowns()]);
    expect(all).not.toContain('SECRETSECRETSECRET');
    const row = t.engine.db.prepare('SELECT secret_enc FROM provider_connections WHERE id = ?').get(c.id) as { secret_enc: string };
    expect(row.secret_enc).not.toContain('SECRET');
  });

  it('PATCH changes only the given fields and keeps the secret; PUT replaces the rest', async () => {
    const c = await t.api.createConnection({
      name: 'A',
      kind: 'anthropic',
      baseUrl: fake.anthropicUrl,
      secret: 'sk-ant-api03-keepmekeepme',
      priority: 5,
      models: ['m1'],
      disableCooling: true,
    });
    const patched = await t.api.updateConnection({ id: c.id, patch: { name: 'Renamed' } });
    expect(patched).toMatchObject({ name: 'Renamed', priority: 5, models: ['m1'], disableCooling: true, secret: c.secret });
    const put = await t.api.replaceConnection({ id: c.id, patch: { name: 'Put', kind: 'anthropic', baseUrl: fake.anthropicUrl } });
    expect(put).toMatchObject({ name: 'Put', priority: 1, models: [], disableCooling: false, secret: c.secret });
    expect((await fails(t.api.replaceConnection({ id: c.id, patch: { name: 'No kind' } }))).field).toBe('kind');
  });

  it('PUT and PATCH never change rateLimitProtection; POST /api/rate-limits does', async () => {
    const c = await t.api.createConnection({ name: 'A', kind: 'local' });
    expect(c.rateLimitProtection).toBe(false);
    await t.api.replaceConnection({ id: c.id, patch: { name: 'A', kind: 'local', rateLimitProtection: true } });
    await t.api.updateConnection({ id: c.id, patch: { rateLimitProtection: true } });
    expect((await t.api.getConnection({ id: c.id })).rateLimitProtection).toBe(false);
    const r = await t.api.setRateLimitProtection({ connectionId: c.id, enabled: true });
    expect(r.rateLimitProtection).toBe(true);
    expect((await t.api.getConnection({ id: c.id })).rateLimitProtection).toBe(true);
  });

  it('answers 404 for a connection that does not exist', async () => {
    const e = await fails(t.api.getConnection({ id: 'nope' }));
    expect(e.status).toBe(404);
    expect(e.code).toBe('not_found');
  });

  it('tests a connection: the upstream accepts the key and lists its models', async () => {
    const c = await t.api.createConnection({ name: 'O', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-proj-testtesttesttest' });
    const r = await t.api.testConnection({ id: c.id });
    expect(r).toMatchObject({ ok: true, status: 200, models: ['fake-model-a', 'fake-model-b'] });
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe('/v1/models');
    expect(seen.key).toBe('sk-proj-testtesttesttest');
  });

  it('tests a connection: a rejected key is reported in plain words', async () => {
    const c = await t.api.createConnection({ name: 'A', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-api03-badbadbadbad' });
    fake.script({ path: '/v1/models' }, [{ status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } }]);
    const r = await t.api.testConnection({ id: c.id });
    expect(r.ok).toBe(false);
    expect(r.status).toBe(401);
    expect(r.message).toContain('rejected the credentials');
    expect(r.message).toContain('invalid x-api-key');
  });

  it('tests a connection: an unreachable endpoint is reported, not thrown', async () => {
    const c = await t.api.createConnection({ name: 'L', kind: 'local', baseUrl: 'http://127.0.0.1:9/v1' });
    const r = await t.api.testConnection({ id: c.id });
    expect(r.ok).toBe(false);
    expect(r.status).toBeNull();
    expect(r.message).toMatch(/refused|network/);
  });

  it('changing the key clears the connection’s error state', async () => {
    const c = await t.api.createConnection({ name: 'A', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-api03-oldoldoldold' });
    const rec = t.engine.registry.require(c.id);
    rec.health.testStatus = 'credits_exhausted';
    rec.health.lastError = 'credit balance too low';
    t.engine.registry.saveHealth([c.id]);
    const updated = await t.api.updateConnection({ id: c.id, patch: { secret: 'sk-ant-api03-newnewnewnew' } });
    expect(updated.health).toMatchObject({ testStatus: 'untested', lastError: null });
  });

  it('lists the models the proxy can route', async () => {
    await t.api.createConnection({ name: 'G', kind: 'openai-compatible', provider: 'deepseek', baseUrl: fake.openaiUrl, models: ['deepseek-chat'], passthroughModels: false });
    const m = await t.api.listModels();
    expect(m.models.map((x) => x.id)).toEqual(['deepseek-chat', 'deepseek/deepseek-chat']);
  });
});
