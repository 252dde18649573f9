// Prompt-cache tokens read from each API shape, native and translated: `inputTokens` is every
// prompt token, the cache counts are parts of it (the rule the price catalogue prices by).
import { describe, expect, it } from 'vitest';
import { UsageTap } from '../../../src/main/engine/upstream/usage';
import { FrameReader } from '../../../src/main/engine/streams/frames';
import { jsonOutcome } from '../../../src/main/engine/streams/jsonOutcome';
import { chatToAnthropic, responsesToChat } from '../../../src/main/engine/codecs';
import { ctx } from '../codecs/support';

const tap = (...parts: string[]) => {
  const t = new UsageTap();
  for (const p of parts) t.push(Buffer.from(p));
  return t.result();
};
const sse = (event: string | null, data: unknown) => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

describe('UsageTap (native non-stream answers)', () => {
  it('Anthropic: input_tokens excludes cache reads and writes, so the three are summed', () => {
    const body = JSON.stringify({ type: 'message', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000, output_tokens: 40 } });
    expect(tap(body)).toEqual({ inputTokens: 3210, outputTokens: 40, cacheReadTokens: 3000, cacheWriteTokens: 200 });
  });

  it('OpenAI Chat: cached_tokens is a part of prompt_tokens', () => {
    const body = JSON.stringify({ choices: [], usage: { prompt_tokens: 1000, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 768 } } });
    expect(tap(body)).toEqual({ inputTokens: 1000, outputTokens: 50, cacheReadTokens: 768, cacheWriteTokens: null });
  });

  it('Responses: input_tokens_details.cached_tokens is a part of input_tokens', () => {
    const body = JSON.stringify({ object: 'response', output: [], usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 512 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 10 } } });
    expect(tap(body)).toEqual({ inputTokens: 900, outputTokens: 30, cacheReadTokens: 512, cacheWriteTokens: null });
  });

  it('an Anthropic stream read whole: message_start in the head, the final message_delta in the tail', () => {
    const start = sse('message_start', { type: 'message_start', message: { usage: { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 800, output_tokens: 1 } } });
    const filler = sse('content_block_delta', { type: 'content_block_delta', delta: { type: 'text_delta', text: 'x'.repeat(5000) } });
    const end = sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 77 } });
    expect(tap(start, filler, end)).toEqual({ inputTokens: 805, outputTokens: 77, cacheReadTokens: 800, cacheWriteTokens: 0 });
  });

  it('no usage at all: nulls', () => {
    expect(tap('{"ok":true}')).toEqual({ inputTokens: null, outputTokens: null, cacheReadTokens: null, cacheWriteTokens: null });
  });
});

describe('stream frames', () => {
  it('Anthropic: message_start reports the cache, message_delta the output (and may restate the cache)', () => {
    const r = new FrameReader('anthropic-messages');
    r.push(sse('message_start', { type: 'message_start', message: { usage: { input_tokens: 4, cache_creation_input_tokens: 100, cache_read_input_tokens: 0, output_tokens: 1 } } }));
    r.push(sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }));
    expect(r.usage).toEqual({ inputTokens: 104, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 100 });
  });

  it('Chat: the usage chunk reports prompt_tokens_details.cached_tokens', () => {
    const r = new FrameReader('openai-chat');
    r.push(sse(null, { id: 'c', choices: [], usage: { prompt_tokens: 300, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 256 } } }));
    expect(r.usage).toEqual({ inputTokens: 300, outputTokens: 7, cacheReadTokens: 256 });
  });

  it('Responses: response.completed reports input_tokens_details.cached_tokens', () => {
    const r = new FrameReader('openai-responses');
    r.push(sse('response.completed', { type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 32 }, output_tokens: 5 } } }));
    expect(r.usage).toEqual({ inputTokens: 50, outputTokens: 5, cacheReadTokens: 32 });
  });
});

describe('non-stream outcomes and translated answers', () => {
  it('jsonOutcome reads the cache parts of each shape', () => {
    expect(jsonOutcome('openai-chat', { choices: [{ message: { content: 'x' } }], usage: { prompt_tokens: 10, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 6 } } }).usage).toEqual({
      inputTokens: 10,
      outputTokens: 1,
      cacheReadTokens: 6,
    });
    expect(jsonOutcome('openai-responses', { status: 'completed', output: [], usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 2 }, output_tokens: 1 } }).usage).toEqual({
      inputTokens: 10,
      outputTokens: 1,
      cacheReadTokens: 2,
    });
  });

  it('an Anthropic answer translated for a Chat client keeps the cache reads and writes for the log', () => {
    const t = chatToAnthropic.response(ctx());
    t.json({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'hi' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 20, cache_creation_input_tokens: 1000, cache_read_input_tokens: 4000, output_tokens: 8 },
    });
    expect(t.usage()).toEqual({ inputTokens: 5020, outputTokens: 8, cacheReadTokens: 4000, cacheWriteTokens: 1000 });
  });

  it('a Chat answer translated for a Responses client keeps its cached input', () => {
    const t = responsesToChat.response(ctx());
    t.json({
      id: 'c1',
      object: 'chat.completion',
      model: 'gpt-5',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 600, completion_tokens: 4, total_tokens: 604, prompt_tokens_details: { cached_tokens: 512 } },
    });
    expect(t.usage()).toEqual({ inputTokens: 600, outputTokens: 4, cacheReadTokens: 512, cacheWriteTokens: null });
  });
});
