import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../support/harness';

describe('proxy smoke', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    await t.addConnection({ name: 'Claude A', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-aaaaaaaaaaaaaaaa' });
    await t.addConnection({ name: 'OpenAI A', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-openai-aaaaaaaaaaaa' });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it('anthropic non-stream and stream', async () => {
    const client = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const msg = await client.messages.create({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content[0]).toMatchObject({ type: 'text' });
    const stream = client.messages.stream({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ text: 'Hello from the stream.' });
  });

  it('openai non-stream and stream', async () => {
    const client = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    const c = await client.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] });
    expect(c.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    const s = await client.chat.completions.create({ model: 'gpt-x', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const ch of s) text += ch.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from the stream.');
  });
});
