// Client keys through the management API and the proxy: the first key exists at first run,
// create / reveal / revoke work, and a revoked key is refused at once in the caller's protocol.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { rawRequest } from './http';

describe('client keys', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  const openai = (apiKey: string) => new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey, maxRetries: 0 });
  const anthropic = (apiKey: string) => new Anthropic({ baseURL: t.proxyUrl, apiKey, maxRetries: 0 });
  const chat = (apiKey: string) =>
    openai(apiKey).chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] });
  const message = (apiKey: string) =>
    anthropic(apiKey).messages.create({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    await t.addConnection({ name: 'OpenAI A', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-openai-upstream-000000' });
    await t.addConnection({ name: 'Claude A', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-upstream-0000000' });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it('has one usable key at first run, shown masked in the list', async () => {
    const keys = await t.api.listClientKeys();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ name: 'Default', revokedAt: null });
    expect(keys[0]!.masked).not.toContain(t.clientKey.slice(8, -4));
    expect(JSON.stringify(keys)).not.toContain(t.clientKey);
    const c = await chat(t.clientKey);
    expect(c.choices[0]!.message.content).toBeTruthy();
  });

  it('creates a key that works at once, lists it masked and reveals the same value', async () => {
    const { key, secret } = await t.api.createClientKey({ name: 'Codex' });
    expect(secret).toMatch(/^sk-sy-/);
    expect(key).toMatchObject({ name: 'Codex', revokedAt: null });
    const listed = (await t.api.listClientKeys()).find((k) => k.id === key.id)!;
    expect(listed.masked).toBe(key.masked);
    expect(JSON.stringify(await t.api.listClientKeys())).not.toContain(secret);
    expect((await t.api.revealClientKey({ id: key.id })).secret).toBe(secret);
    const m = await message(secret);
    expect(m.type).toBe('message');
  });

  it('refuses a revoked key at once with a 401 in the OpenAI shape', async () => {
    const { key, secret } = await t.api.createClientKey({ name: 'Revoke me (OpenAI)' });
    await chat(secret);
    expect(await t.api.revokeClientKey({ id: key.id })).toEqual({ revoked: true });
    const err = await chat(secret).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({
      type: 'authentication_error',
      code: 'invalid_client_key',
      message: expect.any(String),
    });
    expect((await t.api.listClientKeys()).find((k) => k.id === key.id)!.revokedAt).toEqual(expect.any(Number));
  });

  it('refuses a revoked key with a 401 in the Anthropic shape', async () => {
    const { key, secret } = await t.api.createClientKey({ name: 'Revoke me (Anthropic)' });
    await t.api.revokeClientKey({ id: key.id });
    const err = await message(secret).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error', code: 'invalid_client_key' },
    });
    // The raw answer, as a non-SDK agent sees it, with x-api-key.
    const raw = await rawRequest(t.proxyUrl, {
      method: 'POST',
      path: '/v1/messages',
      headers: { 'x-api-key': secret, 'anthropic-version': '2023-06-01' },
      body: { model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(raw.status).toBe(401);
    expect(raw.json).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('says a second revoke changed nothing, and 404s an unknown key', async () => {
    const { key } = await t.api.createClientKey({ name: 'Twice' });
    await t.api.revokeClientKey({ id: key.id });
    expect(await t.api.revokeClientKey({ id: key.id })).toEqual({ revoked: false });
    const err = await t.api.revokeClientKey({ id: 'no-such-key' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect(err).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('refuses a request without any key, or with the management token instead of a client key', async () => {
    for (const headers of [{}, { authorization: `Bearer ${t.token}` }] as Record<string, string>[]) {
      const r = await rawRequest(t.proxyUrl, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers,
        body: { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(r.status).toBe(401);
      expect(r.json.error).toMatchObject({ type: 'authentication_error', code: 'invalid_client_key' });
    }
  });

  it('names the field of a bad key name', async () => {
    const err = await t.api.createClientKey({ name: '  ' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'invalid_input', field: 'name', status: 400 });
  });

  it('stores keys encrypted and hashed, never in plaintext', async () => {
    const { secret } = await t.api.createClientKey({ name: 'At rest' });
    const rows = t.engine.db.prepare('SELECT * FROM client_keys').all();
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(rows)).not.toContain(t.clientKey);
  });
});
