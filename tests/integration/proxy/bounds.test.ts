// Bounds on what a client sends to the proxy: a client too slow with its headers or its body gets a
// typed 408 and its socket is closed (the limits are settings, made small here); a long streamed
// answer is never cut by them; a body nested deeper than the limit is a typed 400 and nothing is
// sent upstream.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_JSON_MAX_DEPTH } from '../../../src/main/engine/proxy/body';
import { FakeUpstream, openaiCompletion, sse } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { openRaw, parseRawResponse } from '../../support/rawSocket';

/** `[[[...1...]]]` nested `depth` levels. */
const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};

describe('proxy: slow clients', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    // Lowered on the listening proxy (the defaults are minutes), so this also proves a change applies at once.
    await t.api.patchSettings({ patch: { 'proxy.headersTimeoutMs': 1_000, 'proxy.requestTimeoutMs': 1_000 } });
    await t.addConnection({ name: 'GPT', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-openai-upstream-bounds' });
    await t.addConnection({ name: 'Claude', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-upstream-bounds' });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it('answers a client that never finishes its headers with a typed 408 and closes the socket', async () => {
    const c = await openRaw(t.proxyUrl);
    c.write('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nx-slow: ');
    const r = parseRawResponse(await c.closed);
    expect(r.status).toBe(408);
    expect(r.headers['connection']).toBe('close');
    expect(r.json).toMatchObject({ error: { code: 'request_timeout' } });
    expect(fake.requests).toHaveLength(0);
  });

  it('answers a body that stops short with a 408 in the inbound protocol shape', async () => {
    const body = JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const c = await openRaw(t.proxyUrl);
    c.write(
      'POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        `x-api-key: ${t.clientKey}\r\nanthropic-version: 2023-06-01\r\ncontent-length: ${body.length + 100}\r\n\r\n${body}`,
    );
    const r = parseRawResponse(await c.closed);
    expect(r.status).toBe(408);
    expect(r.json).toMatchObject({ type: 'error', error: { code: 'request_timeout' } });
    expect(fake.requests).toHaveLength(0);
    // The proxy keeps serving: the next request works.
    const client = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const msg = await client.messages.create({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.type).toBe('message');
  });

  it('never cuts a response that streams for longer than the request timeout', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    fake.script({ path: '/v1/chat/completions' }, [
      {
        chunks: [
          sse(null, { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta: { content: 'one' }, finish_reason: null }] }),
          { ...sse(null, { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta: { content: ' two' }, finish_reason: 'stop' }] }), gate },
          sse(null, '[DONE]'),
        ],
      },
    ]);
    const client = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-x', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    // Hold the stream open past the request timeout and Node's next check of it.
    setTimeout(release, 2_500);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('one two');
  });
});

describe('proxy: deeply nested bodies', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    await t.addConnection({ name: 'GPT', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-openai-upstream-deep' });
    await t.addConnection({ name: 'Claude', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-upstream-deep' });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it.each([PROXY_JSON_MAX_DEPTH + 1, 1_000])('refuses a body nested %i levels with a typed 400 (OpenAI SDK)', async (depth) => {
    const client = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    const err = await client.chat.completions
      .create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], metadata: { deep: nested(depth) } as never })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.code).toBe('invalid_json');
    expect(e.message).toContain(`deeper than ${PROXY_JSON_MAX_DEPTH} levels`);
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a deep body in the Anthropic shape (Anthropic SDK)', async () => {
    const client = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const err = await client.messages
      .create({
        model: 'claude-x',
        max_tokens: 5,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ name: 'deep', input_schema: { type: 'object', properties: { x: nested(1_000) as never } } }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as { error: { error: { code: string } } }).error.error.code).toBe('invalid_json');
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a body nested far deeper than any serialiser could handle with a 400, not a 500', async () => {
    // Built as text: 100,000 levels is past what JSON.stringify (or an SDK) can produce.
    const depth = 100_000;
    const body = `{"model":"gpt-x","messages":[{"role":"user","content":"hi"}],"metadata":{"deep":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const res = await fetch(`${t.proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.clientKey}` },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
    expect(fake.requests).toHaveLength(0);
  });

  it('passes a body nested right up to the limit through untouched', async () => {
    fake.script({ path: '/v1/chat/completions' }, [{ json: openaiCompletion('gpt-x') }]);
    const client = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    // The body object is level 1 and metadata level 2, so the value may nest the rest.
    const deep = nested(PROXY_JSON_MAX_DEPTH - 2);
    await client.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], metadata: { deep } as never });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.body!.metadata).toEqual({ deep });
  });
});
