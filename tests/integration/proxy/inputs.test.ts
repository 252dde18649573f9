// Client input at the proxy's door (issue 21): a model id out of bounds is a typed 400 in each
// protocol's shape, a model id that cannot go into a header as it is never breaks the answer,
// count_tokens needs its message list, and nothing after a stream's last event reaches the client.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { modelFromHeader } from '../../../src/shared/modelIds';
import { anthropicText, chatText, FakeUpstream, responsesEvents, sse, type Chunk } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

const PATHS = {
  messages: '/v1/messages',
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  count: '/v1/messages/count_tokens',
} as const;

describe('proxy input checks', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    await t.addConnection({ name: 'Claude A', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-upstream-inputs-aaaa' });
    await t.addConnection({ name: 'OpenAI A', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-openai-upstream-inputs-a', models: ['gpt-listed'] });
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  async function post(path: string, body: unknown) {
    const anthropic = path === PATHS.messages || path === PATHS.count;
    const res = await fetch(`${t.proxyUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(anthropic ? { 'x-api-key': t.clientKey, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${t.clientKey}` }),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  const bodyFor = (path: string, model: unknown): Record<string, unknown> =>
    path === PATHS.responses ? { model, input: 'hi' } : { model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };

  it.each([
    ['300 characters', 'm'.repeat(300)],
    ['100 KB', 'm'.repeat(100 * 1024)],
    ['CR/LF', 'claude-x\r\nx-injected: yes'],
    ['NUL', 'claude\u0000x'],
  ])('a model id of %s is a typed 400 in every protocol, and no upstream is called', async (_what, model) => {
    for (const path of Object.values(PATHS)) {
      const r = await post(path, bodyFor(path, model));
      expect(r.status, path).toBe(400);
      const j = JSON.parse(r.text);
      if (path === PATHS.messages || path === PATHS.count) {
        expect(j, path).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_model' } });
      } else {
        expect(j, path).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_model', param: 'model' } });
      }
      expect(r.text).not.toContain('injected: yes\r');
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('a model id with an emoji or a space is served, its header percent-encoded and readable back', async () => {
    for (const model of ['claude-🚀-fast', 'claude x', 'claude-100%']) {
      const r = await post(PATHS.messages, bodyFor(PATHS.messages, model));
      expect(r.status, model).toBe(200);
      const header = r.headers.get('x-switchyard-served-model')!;
      expect(header).toMatch(/^[\x21-\x7e]+$/);
      expect(modelFromHeader(header)).toBe(model);
      expect(fake.requests.at(-1)!.body?.model).toBe(model);
    }
    // Streamed too (the header is written at commit).
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const s = await anthropic.messages.create({ model: 'claude-🚀', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(modelFromHeader(s.response.headers.get('x-switchyard-served-model')!)).toBe('claude-🚀');
    for await (const _ of s.data) void _;
  });

  it.each([
    ['missing', undefined],
    ['a string', 'hello'],
    ['an object', { role: 'user', content: 'hi' }],
    ['a list with a string', ['hello']],
  ])('count_tokens with messages %s is a 400 in Anthropic\'s shape, and no upstream is called', async (_what, messages) => {
    const r = await post(PATHS.count, { model: 'claude-x', ...(messages === undefined ? {} : { messages }) });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_request' } });
    expect(JSON.parse(r.text).error.message).toMatch(/^messages/);
    expect(fake.requests).toHaveLength(0);
  });

  describe('frames after the last event are not relayed', () => {
    const extra = (chunks: Chunk[], after: Chunk, together: boolean): Chunk[] =>
      together ? [...chunks.slice(0, -1), { data: chunks.at(-1)!.data + after.data }] : [...chunks, after];

    it.each([true, false])('Anthropic: nothing after message_stop (same chunk: %s)', async (together) => {
      const after = sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'TRAILING' } });
      fake.script({ path: '/v1/messages' }, [{ chunks: extra(anthropicText('claude-x', ['Hello', ' there']), after, together) }]);
      const r = await post(PATHS.messages, { ...bodyFor(PATHS.messages, 'claude-x'), stream: true });
      expect(r.status).toBe(200);
      expect(r.text).toContain('Hello');
      expect(r.text.trimEnd().endsWith('data: {"type":"message_stop"}')).toBe(true);
      expect(r.text).not.toContain('TRAILING');
    });

    it.each([true, false])('Chat: nothing after [DONE] (same chunk: %s)', async (together) => {
      const after = sse(null, { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'gpt-listed', choices: [{ index: 0, delta: { content: 'TRAILING' }, finish_reason: null }] });
      fake.script({ path: '/v1/chat/completions' }, [{ chunks: extra(chatText('gpt-listed', ['Hello']), after, together) }]);
      const r = await post(PATHS.chat, { ...bodyFor(PATHS.chat, 'gpt-listed'), stream: true, stream_options: { include_usage: true } });
      expect(r.status).toBe(200);
      expect(r.text).toContain('"usage"');
      expect(r.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(r.text).not.toContain('TRAILING');
      const openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
      const s = await openai.chat.completions.create({ model: 'gpt-listed', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      let text = '';
      for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
      expect(text).toBe('Hello');
    });

    it.each([true, false])('Responses: nothing after response.completed (same chunk: %s)', async (together) => {
      const ev = responsesEvents('gpt-listed');
      const chunks = [ev.created(), ev.messageAdded(), ev.text('Hello'), ev.messageDone('Hello'), ev.completed('Hello')];
      fake.script({ path: '/v1/responses' }, [{ chunks: extra(chunks, ev.text('TRAILING'), together) }]);
      const r = await post(PATHS.responses, { ...bodyFor(PATHS.responses, 'gpt-listed'), stream: true });
      expect(r.status).toBe(200);
      expect(r.text).toContain('response.completed');
      expect(r.text).not.toContain('TRAILING');
    });

    it('translated: an Anthropic client of a Chat upstream gets nothing after the end', async () => {
      const after = sse(null, { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'gpt-listed', choices: [{ index: 0, delta: { content: 'TRAILING' }, finish_reason: null }] });
      fake.script({ path: '/v1/chat/completions' }, [{ chunks: extra(chatText('gpt-listed', ['Hello']), after, false) }]);
      const r = await post(PATHS.messages, { ...bodyFor(PATHS.messages, 'gpt-listed'), stream: true });
      expect(r.status).toBe(200);
      expect(r.text).toContain('message_stop');
      expect(r.text).not.toContain('TRAILING');
    });
  });
});
