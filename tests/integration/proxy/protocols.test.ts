// The four inbound endpoints and /v1/models, driven with the real OpenAI and Anthropic SDKs.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

describe('proxy protocols', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  let anthropic: Anthropic;
  let openai: OpenAI;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    await t.addConnection({ name: 'Claude A', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-upstream-aaaaaaaa' });
    await t.addConnection({
      name: 'OpenAI A',
      kind: 'openai',
      baseUrl: fake.openaiUrl,
      secret: 'sk-openai-upstream-aaaa',
      models: ['gpt-listed'],
    });
    anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it('serves Anthropic messages without streaming', async () => {
    const msg = await anthropic.messages.create({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: 'Hello from the fake upstream.' });
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe('/v1/messages');
    expect(seen.key).toBe('sk-ant-upstream-aaaaaaaa');
  });

  it('streams Anthropic messages event by event', async () => {
    const stream = anthropic.messages.stream({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const deltas: string[] = [];
    stream.on('text', (t) => deltas.push(t));
    const final = await stream.finalMessage();
    expect(deltas).toEqual(['Hello', ' from', ' the', ' stream.']);
    expect(final.content[0]).toMatchObject({ text: 'Hello from the stream.' });
  });

  it('counts tokens through the upstream', async () => {
    const r = await anthropic.messages.countTokens({ model: 'claude-x', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.input_tokens).toBe(42);
    expect(fake.requests.at(-1)!.path).toBe('/v1/messages/count_tokens');
  });

  it('estimates count_tokens locally when the gateway has no such endpoint', async () => {
    fake.script({ path: '/v1/messages/count_tokens' }, [{ status: 404, json: { error: { type: 'not_found_error', message: 'no' } } }]);
    try {
      const res = await fetch(`${t.proxyUrl}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'x-api-key': t.clientKey, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-x', messages: [{ role: 'user', content: 'x'.repeat(400) }] }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-switchyard-estimated')).toBe('true');
      const j = (await res.json()) as { input_tokens: number };
      expect(j.input_tokens).toBeGreaterThanOrEqual(100);
      // A missing endpoint is not a failure of the connection.
      const cooldowns = await t.api.listCooldowns();
      expect(cooldowns.connections.every((c) => c.status === 'active')).toBe(true);
    } finally {
      fake.reset();
    }
  });

  it('serves OpenAI chat completions with and without streaming', async () => {
    const c = await openai.chat.completions.create({ model: 'gpt-listed', messages: [{ role: 'user', content: 'hi' }] });
    expect(c.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect(fake.requests.at(-1)!.path).toBe('/v1/chat/completions');
    const s = await openai.chat.completions.create({
      model: 'gpt-listed',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    let text = '';
    for await (const ch of s) text += ch.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from the stream.');
  });

  it('serves the Responses API with and without streaming', async () => {
    const r = await openai.responses.create({ model: 'gpt-listed', input: 'hi' });
    expect(r.output_text).toBe('Hello from the fake upstream.');
    expect(fake.requests.at(-1)!.path).toBe('/v1/responses');
    const s = await openai.responses.create({ model: 'gpt-listed', input: 'hi', stream: true });
    const types: string[] = [];
    for await (const ev of s) types.push(ev.type);
    expect(types).toEqual(['response.created', 'response.output_text.delta', 'response.completed']);
  });

  it('lists models in the OpenAI shape, and in the Anthropic shape for Anthropic clients', async () => {
    const list = await openai.models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toContain('gpt-listed');
    expect(ids).toContain('openai/gpt-listed');
    const res = await fetch(`${t.proxyUrl}/v1/models`, { headers: { 'x-api-key': t.clientKey, 'anthropic-version': '2023-06-01' } });
    const body = (await res.json()) as { data: { type: string; id: string }[]; has_more: boolean };
    expect(body.has_more).toBe(false);
    expect(body.data[0]).toMatchObject({ type: 'model' });
  });

  it('routes provider/model to that provider and sends the bare model upstream', async () => {
    await anthropic.messages.create({ model: 'anthropic/claude-y', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const seen = fake.requests.at(-1)!;
    expect(seen.body?.model).toBe('claude-y');
    expect(seen.body?.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('records each request with its connection, attempts and token usage in the request log', async () => {
    const before = (await t.api.listLogs({ limit: 1 })).entries[0]?.id;
    await anthropic.messages.create({ model: 'claude-logged', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const page = await t.api.listLogs({ limit: 5 });
    const entry = page.entries.find((e) => e.requestedModel === 'claude-logged')!;
    expect(entry.id).not.toBe(before);
    expect(entry).toMatchObject({ status: 200, protocol: 'anthropic-messages', connectionName: 'Claude A', inputTokens: 12, outputTokens: 7 });
    expect(entry.attempts).toHaveLength(1);
    expect(entry.attempts[0]).toMatchObject({ attempt: 1, connectionName: 'Claude A', status: 200, failedOver: false });
    const one = await t.api.getLog({ id: entry.id });
    expect(one.attempts[0]!.connectionId).toBe(entry.connectionId);
  });
});
