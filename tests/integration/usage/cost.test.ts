// Cost per request through the proxy, driven with the real SDKs: the fake upstream reports usage
// with prompt-cache tokens (Anthropic native, OpenAI Chat, a Chat upstream translated for an
// Anthropic client, an Anthropic stream), and the stored log row carries the cache counts and the
// cost the price catalogue gives (each token priced once). An edited price applies to the next request.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicMessage, FakeUpstream, openaiCompletion, sse } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

describe('cost per request', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  let anthropic: Anthropic;
  let openai: OpenAI;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    await t.addConnection({ name: 'Claude', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-upstream-cost-1' });
    await t.addConnection({ name: 'OpenAI', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-openai-upstream-cost', models: ['gpt-4o'] });
    anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const logOf = async (requestedModel: string) => {
    const page = await t.api.listLogs({ limit: 20 });
    return page.entries.find((e) => e.requestedModel === requestedModel)!;
  };

  it('Anthropic: input, cache writes, cache reads and output each priced once (claude-sonnet-4-5: $3 / $3.75 / $0.30 / $15)', async () => {
    const usage = { input_tokens: 1_000, cache_creation_input_tokens: 2_000, cache_read_input_tokens: 10_000, output_tokens: 500 };
    fake.script({ path: '/v1/messages', model: 'claude-sonnet-4-5' }, [{ json: { ...anthropicMessage('claude-sonnet-4-5'), usage } }]);
    const msg = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.usage).toMatchObject({ cache_read_input_tokens: 10_000 });
    const e = await logOf('claude-sonnet-4-5');
    expect(e).toMatchObject({ status: 200, inputTokens: 13_000, outputTokens: 500, cacheReadTokens: 10_000, cacheWriteTokens: 2_000 });
    expect(e.costUsd).toBeCloseTo((1_000 * 3 + 2_000 * 3.75 + 10_000 * 0.3 + 500 * 15) / 1e6, 10);
  });

  it('OpenAI Chat: cached tokens are a part of prompt_tokens, priced at the cached rate (gpt-4o: $2.50 / $1.25 / $10)', async () => {
    const body = { ...openaiCompletion('gpt-4o'), usage: { prompt_tokens: 4_000, completion_tokens: 100, total_tokens: 4_100, prompt_tokens_details: { cached_tokens: 3_072 } } };
    fake.script({ path: '/v1/chat/completions', model: 'gpt-4o' }, [{ json: body }]);
    await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    const e = await logOf('gpt-4o');
    expect(e).toMatchObject({ inputTokens: 4_000, outputTokens: 100, cacheReadTokens: 3_072, cacheWriteTokens: null });
    expect(e.costUsd).toBeCloseTo((928 * 2.5 + 3_072 * 1.25 + 100 * 10) / 1e6, 10);
  });

  it('an Anthropic stream: message_start reports the cache, message_delta the output', async () => {
    const model = 'claude-haiku-4-5';
    const chunks = [
      sse('message_start', { type: 'message_start', message: { id: 'msg_c', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 20_000, output_tokens: 1 } } }),
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } }),
      sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 200 } }),
      sse('message_stop', { type: 'message_stop' }),
    ];
    fake.script({ path: '/v1/messages', model }, [{ chunks }]);
    const final = await anthropic.messages.stream({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(final.content[0]).toMatchObject({ text: 'ok' });
    const e = await logOf(model);
    expect(e).toMatchObject({ inputTokens: 20_050, outputTokens: 200, cacheReadTokens: 20_000, cacheWriteTokens: 0 });
    // claude-haiku-4-5: $1 in, $0.10 cache read, $5 out.
    expect(e.costUsd).toBeCloseTo((50 * 1 + 20_000 * 0.1 + 200 * 5) / 1e6, 10);
  });

  it('a Chat upstream translated for an Anthropic client: the cached prompt tokens reach the log and the price', async () => {
    await t.addConnection({ name: 'DeepSeek', kind: 'openai-compatible', provider: 'deepseek', baseUrl: fake.openaiUrl, secret: 'sk-deepseek-upstream-cost' });
    const body = { ...openaiCompletion('deepseek-chat'), usage: { prompt_tokens: 10_000, completion_tokens: 1_000, total_tokens: 11_000, prompt_tokens_details: { cached_tokens: 8_000 } } };
    fake.script({ path: '/v1/chat/completions', model: 'deepseek-chat' }, [{ json: body }]);
    const msg = await anthropic.messages.create({ model: 'deepseek/deepseek-chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.usage).toMatchObject({ input_tokens: 2_000, cache_read_input_tokens: 8_000, output_tokens: 1_000 });
    const e = await logOf('deepseek/deepseek-chat');
    expect(e).toMatchObject({ inputTokens: 10_000, cacheReadTokens: 8_000, outputTokens: 1_000 });
    // deepseek-chat: $0.27 in, $0.07 cache hit, $1.10 out.
    expect(e.costUsd).toBeCloseTo((2_000 * 0.27 + 8_000 * 0.07 + 1_000 * 1.1) / 1e6, 10);
  });

  it('an edited price prices the next request; a model without a price has no cost', async () => {
    await t.api.setPrice({ model: 'gpt-4o', price: { input: 100, output: 200, cacheRead: 10 }, asOf: '2026-01-01' });
    const body = { ...openaiCompletion('gpt-4o-2024-08-06'), usage: { prompt_tokens: 1_000, completion_tokens: 10, total_tokens: 1_010, prompt_tokens_details: { cached_tokens: 500 } } };
    fake.script({ path: '/v1/chat/completions', model: 'gpt-4o-2024-08-06' }, [{ json: body }]);
    await openai.chat.completions.create({ model: 'openai/gpt-4o-2024-08-06', messages: [{ role: 'user', content: 'hi' }] });
    const e = await logOf('openai/gpt-4o-2024-08-06');
    expect(e.costUsd).toBeCloseTo((500 * 100 + 500 * 10 + 10 * 200) / 1e6, 10);
    const view = await t.api.listPrices();
    expect(view.entries.find((x) => x.model === 'gpt-4o')).toMatchObject({ source: 'edited', asOf: '2026-01-01' });

    fake.script({ path: '/v1/messages', model: 'claude-unpriced-x' }, [{ json: anthropicMessage('claude-unpriced-x') }]);
    await anthropic.messages.create({ model: 'claude-unpriced-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect((await logOf('claude-unpriced-x')).costUsd).toBeNull();
  });

  it('refuses a negative price with a plain message, and keeps the price it had', async () => {
    await expect(t.api.setPrice({ model: 'gpt-4o', price: { input: -1, output: 2 } })).rejects.toThrow('The input price cannot be negative.');
    expect((await t.api.listPrices()).entries.find((x) => x.model === 'gpt-4o')!.price.input).toBe(100);
    await t.api.resetPrice({ model: 'gpt-4o' });
    expect((await t.api.listPrices()).entries.find((x) => x.model === 'gpt-4o')).toMatchObject({ source: 'built-in', price: { input: 2.5 } });
  });
});
