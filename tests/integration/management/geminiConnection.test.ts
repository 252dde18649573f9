// A Google AI Studio key (the `gemini` kind) set up through the management API: a create with only
// a name and a key gets Google's address and the `gemini` provider; "Test connection" reads
// Google's model list (`GET /v1beta/models` with the key in x-goog-api-key, every page, only the
// models that generate content, ids without `models/`) and says in the tester's words what a
// refused key, a quota or a missing list means. Google's OpenAI-compatible address is refused
// for this kind, next to the base URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeError } from '../../../src/shared/bridge';
import { FakeUpstream, geminiError } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

const KEY = 'AIzaSy-gemini-Tq4wR7yU1iO3pA6s';
const PAGED = 'AIzaSy-gemini-paged-Zx8cV5bN2mL0';
const REFUSED = 'AIzaSy-gemini-refused-Hj3kL6';
const QUOTA = 'AIzaSy-gemini-quota-Pw9eR2tY';
const ECHO = 'AIzaSy-gemini-echo-Gf7dS4aQ1';

describe('a Google AI Studio connection', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const add = (name: string, secret: string) => t.addConnection({ name, kind: 'gemini', baseUrl: fake.geminiUrl, secret });

  it("gets Google's address and the gemini provider when only a name and a key are given", async () => {
    const c = await t.addConnection({ name: 'AI Studio', kind: 'gemini', secret: KEY });
    expect(c).toMatchObject({ kind: 'gemini', protocol: 'gemini', provider: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com', servesResponses: false });
    await t.api.deleteConnection({ id: c.id });
  });

  it("lists Google's models with the key in Google's header, without the models/ prefix", async () => {
    const c = await add('gemini ok', KEY);
    const r = await t.api.testConnection({ id: c.id });
    expect(r).toMatchObject({ ok: true, status: 200, models: ['fake-model-a', 'fake-model-b'], message: 'the upstream accepted the credentials' });
    const [req] = fake.requestsFor({ key: KEY });
    expect(req).toMatchObject({ method: 'GET', path: '/v1beta/models' });
    expect(req!.headers['x-goog-api-key']).toBe(KEY);
    expect(req!.headers['authorization']).toBeUndefined();
  });

  it('reads every page and keeps only the models that generate content', async () => {
    fake.script({ key: PAGED, path: '/v1beta/models' }, [
      {
        json: {
          models: [
            { name: 'models/gemini-2.5-pro', supportedGenerationMethods: ['generateContent', 'countTokens'] },
            { name: 'models/text-embedding-004', supportedGenerationMethods: ['embedContent'] },
          ],
          nextPageToken: 'page-2',
        },
      },
      { json: { models: [{ name: 'models/gemini-2.5-flash', supportedGenerationMethods: ['generateContent'] }, { name: 'models/aqa', supportedGenerationMethods: ['generateAnswer'] }] } },
    ]);
    const c = await add('gemini paged', PAGED);
    const r = await t.api.testConnection({ id: c.id });
    expect(r).toMatchObject({ ok: true, models: ['gemini-2.5-pro', 'gemini-2.5-flash'] });
    const reqs = fake.requestsFor({ key: PAGED });
    expect(reqs.map((x) => x.path)).toEqual(['/v1beta/models', '/v1beta/models']);
    // Google's largest page first; the second request asks for the page the first one named.
    expect(new URLSearchParams(reqs[0]!.query).get('pageToken')).toBeNull();
    expect(new URLSearchParams(reqs[0]!.query).get('pageSize')).toBe('1000');
    expect(new URLSearchParams(reqs[1]!.query).get('pageToken')).toBe('page-2');
  });

  it('says a refused key was refused, though Google answers it with 400', async () => {
    fake.script({ key: REFUSED, path: '/v1beta/models' }, [
      {
        status: 400,
        json: {
          error: {
            code: 400,
            message: 'API key not valid. Please pass a valid API key.',
            status: 'INVALID_ARGUMENT',
            details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }],
          },
        },
      },
    ]);
    const c = await add('gemini refused', REFUSED);
    const r = await t.api.testConnection({ id: c.id });
    expect(r).toMatchObject({ ok: false, status: 400, models: [] });
    expect(r.message).toBe('the upstream rejected the credentials: API key not valid. Please pass a valid API key.');
  });

  it("says a quota answer is a rate limit, in Google's words", async () => {
    fake.script({ key: QUOTA, path: '/v1beta/models' }, [{ status: 429, json: geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for this project.', '30s') }]);
    const c = await add('gemini quota', QUOTA);
    const r = await t.api.testConnection({ id: c.id });
    expect(r).toMatchObject({ ok: false, status: 429 });
    expect(r.message).toBe('the upstream is rate-limiting this key: Quota exceeded for this project.');
  });

  it('keeps a key Google quotes back out of the answer', async () => {
    fake.script({ key: ECHO, path: '/v1beta/models' }, [(r) => ({ status: 403, json: geminiError(403, 'PERMISSION_DENIED', `Key ${r.key} has no access.`) })]);
    const c = await add('gemini echo', ECHO);
    const r = await t.api.testConnection({ id: c.id });
    expect(r.message).toBe('the upstream rejected the credentials: Key [redacted] has no access.');
  });

  it("refuses Google's OpenAI-compatible address for this kind, naming the base URL", async () => {
    const err = await t
      .addConnection({ name: 'wrong address', kind: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai/', secret: KEY })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect(err).toMatchObject({ status: 400, field: 'baseUrl' });
    expect((err as Error).message).toContain('https://generativelanguage.googleapis.com');
    // The same address is fine for the OpenAI-compatible kind.
    const compat = await t.addConnection({ name: 'compat', kind: 'openai-compatible', provider: 'google', baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai', secret: KEY });
    expect(compat.baseUrl).toBe('https://generativelanguage.googleapis.com/v1beta/openai');
    await t.api.deleteConnection({ id: compat.id });
  });
});
