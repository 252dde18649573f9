// The @google/genai SDK when things go wrong: a native Gemini connection's 503 fails over to a Chat
// connection (one clean answer, two attempts in the log), a typed RetryInfo 429 of 86399 s locks only
// that model on that key (another model on the key is served at once), and the errors the SDK sees
// (a bad client key, a model nobody serves, every target cooling, an upstream 400) are Google-shaped,
// with the wait as a RetryInfo detail.
import { ApiError } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { ONE_ANSWER_ENV } from '../../support/harness';
import { geminiError, geminiResult, geminiStream, openaiCompletion, openaiStream } from '../../support/fakeUpstream';
import { geminiRigPerTest, readStream, sdkFor, SELECTED, turns } from './support';

const MODEL = 'gemini-2.5-pro';
const OTHER = 'gemini-2.5-flash';
const KG = 'AIza-gemini-key-gggggggggg';
const KC = 'sk-chat-key-cccccccccccc';
const DAY_S = 86_399;

/** The Google error an ApiError carries (the SDK puts the body, as JSON, in its message). */
function googleError(e: unknown): { code: number; status: string; message: string; details?: Record<string, any>[] } {
  expect(e).toBeInstanceOf(ApiError);
  return (JSON.parse((e as ApiError).message) as { error: never }).error;
}

const retryDelayOf = (err: { details?: Record<string, any>[] }): string | undefined =>
  err.details?.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.RetryInfo')?.retryDelay;

const seconds = (d: string | undefined) => (d === undefined ? NaN : Number(d.replace(/s$/, '')));

async function thrown(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the SDK to throw');
}

describe('@google/genai: failover, lockouts and errors', () => {
  const s = geminiRigPerTest();

  for (const stream of [true, false]) {
    it(`a Gemini connection's 503 fails over to the Chat connection: the SDK sees one clean answer (${stream ? 'stream' : 'generateContent'})`, async () => {
      const r = await s.start({ env: ONE_ANSWER_ENV });
      const gem = await r.add('gemini', 'Gem', KG, { priority: 1 });
      const chat = await r.add('chat', 'Backup', KC, { priority: 2, models: [MODEL] });
      s.fake.script({ key: KG }, [{ status: 503, json: geminiError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.') }]);
      s.fake.script({ key: KC }, [stream ? { chunks: openaiStream(MODEL, ['Served ', 'by the backup.']) } : { json: openaiCompletion(MODEL, 'Served by the backup.') }]);

      if (stream) {
        const out = await readStream(await r.ai.models.generateContentStream({ model: MODEL, contents: 'Hello?' }));
        expect(out.text).toBe('Served by the backup.');
        expect(out.finish).toBe('STOP');
        expect(out.chunks.at(-1)!.sdkHttpResponse?.headers?.[SELECTED]).toBe(chat.id);
      } else {
        const out = await r.ai.models.generateContent({ model: MODEL, contents: 'Hello?' });
        expect(out.text).toBe('Served by the backup.');
        expect(out.sdkHttpResponse?.headers?.[SELECTED]).toBe(chat.id);
      }
      expect(turns(s.fake.requestsFor({ key: KG }))).toHaveLength(1);
      expect(turns(s.fake.requestsFor({ key: KC }))).toHaveLength(1);
      const log = await r.logOf(MODEL);
      expect(log.status).toBe(200);
      expect(log.attempts.map((a) => a.connectionId)).toEqual([gem.id, chat.id]);
      expect(log.attempts[0]!.status).toBe(503);
      expect(log.attempts[1]!.errorCode).toBeNull();
    });
  }

  it('a RetryInfo 429 of 86399s locks only that model on that key; another model on the key is served at once', async () => {
    const r = await s.start({ env: ONE_ANSWER_ENV });
    const gem = await r.add('gemini', 'Gem', KG);
    s.fake.script({ key: KG, model: MODEL }, [{ status: 429, json: geminiError(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for metric: generate_content_free_tier_requests', `${DAY_S}s`) }]);

    // The first request meets the 429: the SDK sees Google's error with about a day to wait.
    const first = googleError(await thrown(r.ai.models.generateContent({ model: MODEL, contents: 'Hello?' })));
    expect(first).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(seconds(retryDelayOf(first))).toBeGreaterThan(DAY_S - 60);

    // The lock: that model on that key, about 24 h.
    // (The queue's long-wait hold and the rate-limit lock may both be listed: both for that model.)
    const locks = (await r.lockouts()).filter((l) => l.connectionId === gem.id);
    expect(locks.length).toBeGreaterThan(0);
    expect(new Set(locks.map((l) => l.model))).toEqual(new Set([MODEL]));
    for (const l of locks) {
      expect(l.expiresAt - r.clock.now()).toBeGreaterThan((DAY_S - 60) * 1000);
      expect(l.expiresAt - r.clock.now()).toBeLessThanOrEqual(86_400_000);
    }

    // A second request for that model spends no upstream call on the key, and says how long.
    const again = googleError(await thrown(r.ai.models.generateContent({ model: MODEL, contents: 'Hello again?' })));
    expect([429, 503]).toContain(again.code);
    expect(seconds(retryDelayOf(again))).toBeGreaterThan(DAY_S - 120);
    expect(again.message).toContain("model locked");
    expect(turns(s.fake.requestsFor({ key: KG, model: MODEL }))).toHaveLength(1);

    // Another model on the same key goes straight through, also as a stream.
    s.fake.script({ key: KG, model: OTHER }, [{ json: geminiResult(OTHER, 'Flash is fine.') }, { chunks: geminiStream(OTHER, ['Still ', 'fine.']) }], { repeatLast: false });
    const other = await r.ai.models.generateContent({ model: OTHER, contents: 'Hello?' });
    expect(other.text).toBe('Flash is fine.');
    expect(other.sdkHttpResponse?.headers?.[SELECTED]).toBe(gem.id);
    expect((await readStream(await r.ai.models.generateContentStream({ model: OTHER, contents: 'And?' }))).text).toBe('Still fine.');
    expect(turns(s.fake.requestsFor({ key: KG, model: OTHER }))).toHaveLength(2);
    expect(new Set((await r.lockouts()).filter((l) => l.connectionId === gem.id).map((l) => l.model))).toEqual(new Set([MODEL]));

    // A day later the model is served again.
    r.clock.advance(86_400_000);
    s.fake.script({ key: KG, model: MODEL }, [{ json: geminiResult(MODEL, 'Back.') }]);
    expect((await r.ai.models.generateContent({ model: MODEL, contents: 'Hello?' })).text).toBe('Back.');
  });

  it('a bad client key: the SDK throws an ApiError with status 401, in Google\'s shape', async () => {
    const r = await s.start();
    await r.add('gemini', 'Gem', KG);
    const e = await thrown(sdkFor(r.t.proxyUrl, 'not-a-switchyard-key').models.generateContent({ model: MODEL, contents: 'Hello?' }));
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).status).toBe(401);
    expect(googleError(e)).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    const streamed = await thrown(sdkFor(r.t.proxyUrl, 'not-a-switchyard-key').models.generateContentStream({ model: MODEL, contents: 'Hello?' }));
    expect((streamed as ApiError).status).toBe(401);
    expect(turns(s.fake.requests)).toHaveLength(0);
  });

  it('a model no connection serves: a Google-shaped 404 the SDK reads', async () => {
    const r = await s.start();
    await r.add('chat', 'Chat', KC, { models: ['gpt-only'], passthroughModels: false });
    const e = await thrown(r.ai.models.generateContent({ model: 'nobody-serves-this', contents: 'Hello?' }));
    expect((e as ApiError).status).toBe(404);
    const err = googleError(e);
    expect(err.status).toBe('NOT_FOUND');
    expect(err.message).toContain('nobody-serves-this');
    expect(turns(s.fake.requests)).toHaveLength(0);
  });

  it('every target cooling: a Google-shaped error whose RetryInfo says when to come back', async () => {
    const r = await s.start({ env: ONE_ANSWER_ENV });
    const c = await r.add('chat', 'Chat', KC, { models: [MODEL] });
    // An account-wide 429 (the key's whole budget is spent) cools the connection for 120 s.
    s.fake.script({ key: KC }, [{ status: 429, headers: { 'retry-after': '120', 'x-ratelimit-remaining': '0' }, json: { error: { message: 'Rate limit reached', type: 'rate_limit_error' } } }], { repeatLast: false });
    expect(((await thrown(r.ai.models.generateContent({ model: MODEL, contents: 'Hello?' }))) as ApiError).status).toBe(429);
    const cd = (await r.t.api.listCooldowns({})).connections.find((x) => x.connectionId === c.id)!;
    expect(cd.status).toBe('cooling');

    const e = await thrown(r.ai.models.generateContentStream({ model: MODEL, contents: 'Hello again?' }));
    const err = googleError(e);
    expect([429, 503]).toContain(err.code);
    const wait = seconds(retryDelayOf(err));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(120);
    expect(err.details?.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo')?.reason).toBe('all_targets_cooling_down');
    expect(turns(s.fake.requestsFor({ key: KC }))).toHaveLength(1);
  });

  // Engine defect (main 7779d00): codecs/errors.ts errorEventBody has no Gemini branch, so an upstream
  // error relayed through translation reaches a Gemini client in OpenAI's shape ({ error: { message, type, param, code: "invalid_request_error" } }).
  for (const shape of ['chat', 'anthropic'] as const) {
    it.fails(`an upstream 400 on a ${shape} target reaches the SDK in Google's shape with the upstream's message`, async () => {
      const r = await s.start();
      const key = shape === 'chat' ? KC : 'sk-ant-key-aaaaaaaaaaaa';
      await r.add(shape, 'Target', key, { models: [MODEL] });
      const message = "Invalid value for 'temperature': must be at most 1.";
      s.fake.script({ key }, [
        shape === 'chat'
          ? { status: 400, json: { error: { message, type: 'invalid_request_error', param: 'temperature', code: null } } }
          : { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message } } },
      ]);
      for (const call of [
        () => r.ai.models.generateContent({ model: MODEL, contents: 'Hello?', config: { temperature: 1.5 } }),
        () => r.ai.models.generateContentStream({ model: MODEL, contents: 'Hello?', config: { temperature: 1.5 } }),
      ]) {
        const e = await thrown(call());
        expect((e as ApiError).status).toBe(400);
        const err = googleError(e);
        expect(err).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
        expect(err.message).toContain("Invalid value for 'temperature'");
      }
    });
  }
});
