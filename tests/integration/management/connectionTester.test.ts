// "Test connection" (POST /api/providers/:id/test) against an upstream that quotes the key back:
// nothing the tester returns holds the key, whether the upstream quotes it in a JSON error, in a
// long plain-text body, as a model id, or the key is only a few characters long. A key shared by
// two connections stays scrubbed after one of them is deleted or given a new key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, type RecordedRequest } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { rawRequest } from './http';

const JSON_ECHO = 'sk-tester-Vb7nQ2xR8kL4mT9w';
const TEXT_ECHO = 'sk-tester-Hq3zP6sW1yD8cF5j';
const MODEL_ECHO = 'sk-tester-Ua9eK2gN7rB4tX6v';
const SHARED = 'sk-shared-Lp5wE8qZ3mC7hY2d';
const SHORT = 'k9';

/** 401 whose JSON error quotes the presented key, the way OpenAI-style gateways do. */
const quoteKeyJson = (r: RecordedRequest) => ({
  status: 401,
  json: { error: { type: 'invalid_request_error', message: `Incorrect API key provided: ${r.key}. Check it.` } },
});

describe('POST /api/providers/:id/test with an upstream that quotes the key back', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    fake.script({ key: JSON_ECHO, path: '/v1/models' }, [quoteKeyJson]);
    fake.script({ key: SHARED, path: '/v1/models' }, [quoteKeyJson]);
    fake.script({ key: SHORT, path: '/v1/models' }, [quoteKeyJson]);
    // Plain text quoting the key twice, the second time across where the message is cut.
    fake.script({ key: TEXT_ECHO, path: '/v1/models' }, [
      (r) => ({
        status: 403,
        headers: { 'content-type': 'text/plain' },
        body: `key ${r.key} is not allowed; ${'x'.repeat(255)} again ${r.key} is not allowed`,
      }),
    ]);
    // A 2xx whose model list holds the key as an id, next to a real model.
    fake.script({ key: MODEL_ECHO, path: '/v1/models' }, [
      (r) => ({ status: 200, json: { object: 'list', data: [{ id: 'real-model' }, { id: `model-for-${r.key}` }] } }),
    ]);
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const add = (name: string, secret: string) =>
    t.addConnection({ name, kind: 'openai-compatible', provider: 'echo', baseUrl: fake.openaiUrl, secret });

  /** The raw HTTP answer, so nothing in a client library could hide a leak. */
  const testRaw = async (id: string) => {
    const r = await rawRequest(t.managementUrl, {
      method: 'POST',
      path: `/api/providers/${id}/test`,
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(r.status).toBe(200);
    return r;
  };

  it('keeps a key quoted in a JSON error out of the answer', async () => {
    const c = await add('json echo', JSON_ECHO);
    const r = await testRaw(c.id);
    expect(fake.requestsFor({ key: JSON_ECHO }).length).toBeGreaterThan(0);
    expect(r.text).not.toContain(JSON_ECHO);
    expect(r.text).not.toContain(JSON_ECHO.slice(-12));
    expect(r.json).toMatchObject({ ok: false, status: 401 });
    expect(r.json.message).toContain('Incorrect API key provided: [redacted]');
  });

  it('scrubs a plain-text body before cutting it, so no piece of the key is left', async () => {
    const c = await add('text echo', TEXT_ECHO);
    const r = await testRaw(c.id);
    expect(r.json).toMatchObject({ ok: false, status: 403 });
    // However the 300-character cut falls, no prefix of the key is left either.
    for (let n = 8; n <= TEXT_ECHO.length; n++) expect(r.text).not.toContain(TEXT_ECHO.slice(0, n));
  });

  it('drops a model id that holds the key and keeps the others', async () => {
    const c = await add('model echo', MODEL_ECHO);
    const r = await testRaw(c.id);
    expect(r.json).toMatchObject({ ok: true, models: ['real-model'] });
    expect(r.text).not.toContain(MODEL_ECHO);
  });

  it('scrubs a key of two characters where it stands as the key', async () => {
    const c = await add('short key', SHORT);
    const r = await testRaw(c.id);
    expect(r.json.message).toContain('Incorrect API key provided: [redacted].');
    expect(r.json.message).not.toMatch(/provided: k9/);
    // Ordinary words around it are untouched.
    expect(r.json.message).toContain('Check it.');
  });

  it('keeps a key shared by two connections scrubbed after one is deleted or given a new key', async () => {
    const a = await add('shared a', SHARED);
    const b = await add('shared b', SHARED);
    const c = await add('shared c', SHARED);
    await t.api.deleteConnection({ id: a.id });
    let r = await testRaw(b.id);
    expect(r.text).not.toContain(SHARED);
    expect(r.json.message).toContain('[redacted]');
    // Rotating b away from the shared key leaves c (still on it) scrubbed.
    await t.api.updateConnection({ id: b.id, patch: { secret: 'sk-rotated-Wn4tG7kP2vS9' } });
    r = await testRaw(c.id);
    expect(r.text).not.toContain(SHARED);
    expect(r.json.message).toContain('[redacted]');
    // And log lines written after the delete and the rotation do not hold it either.
    t.engine.log.warn('test.echo', { detail: `upstream said ${SHARED}` });
    expect(t.logs.lines.join('')).not.toContain(SHARED);
  });
});
