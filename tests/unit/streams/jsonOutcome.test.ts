import { describe, expect, it } from 'vitest';
import { streamErrorEvent, errorBodyFor } from '../../../src/main/engine/streams/errorEvents';
import { FrameReader } from '../../../src/main/engine/streams/frames';
import { jsonOutcome } from '../../../src/main/engine/streams/jsonOutcome';

describe('jsonOutcome', () => {
  it('Anthropic: text or tool_use is output; thinking alone is reasoning, not output', () => {
    expect(
      jsonOutcome('anthropic-messages', {
        type: 'message',
        content: [{ type: 'text', text: 'hi' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 3, cache_read_input_tokens: 4, output_tokens: 2 },
      }),
    ).toEqual({ output: true, reasoning: false, stopReason: 'end_turn', error: null, usage: { inputTokens: 7, outputTokens: 2 } });
    const thinkingOnly = jsonOutcome('anthropic-messages', { content: [{ type: 'thinking', thinking: 'x', signature: 's' }], stop_reason: 'max_tokens' });
    expect(thinkingOnly).toMatchObject({ output: false, reasoning: true, stopReason: 'max_tokens' });
    expect(jsonOutcome('anthropic-messages', { content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }).output).toBe(true);
  });

  it('Chat: content or tool_calls is output; an empty message is not', () => {
    expect(jsonOutcome('openai-chat', { choices: [{ message: { content: 'x' }, finish_reason: 'stop' }] })).toMatchObject({
      output: true,
      stopReason: 'stop',
    });
    expect(jsonOutcome('openai-chat', { choices: [{ message: { content: null, tool_calls: [{ id: 'c' }] }, finish_reason: 'tool_calls' }] }).output).toBe(true);
    expect(jsonOutcome('openai-chat', { choices: [{ message: { content: '', reasoning_content: 'r' }, finish_reason: 'length' }] })).toMatchObject({
      output: false,
      reasoning: true,
    });
  });

  it('Responses: message text or a function call is output; status and incomplete reason are the stop', () => {
    expect(
      jsonOutcome('openai-responses', {
        object: 'response',
        status: 'completed',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'yo' }] }],
        usage: { input_tokens: 1, output_tokens: 2 },
      }),
    ).toMatchObject({ output: true, stopReason: 'completed', usage: { inputTokens: 1, outputTokens: 2 } });
    expect(
      jsonOutcome('openai-responses', { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ type: 'reasoning' }] }),
    ).toMatchObject({ output: false, reasoning: true, stopReason: 'max_output_tokens' });
  });

  it('an error body wearing a 200 is an error with a mapped status', () => {
    expect(jsonOutcome('openai-chat', { error: { message: 'quota', type: 'insufficient_quota' } }).error?.status).toBe(429);
    expect(jsonOutcome('anthropic-messages', { type: 'error', error: { type: 'overloaded_error', message: 'o' } }).error?.status).toBe(529);
    expect(jsonOutcome('openai-responses', { status: 'failed', error: { code: 'server_error', message: 'x' }, output: [] }).error?.status).toBe(500);
    expect(jsonOutcome('openai-chat', 'nope').error?.status).toBe(502);
  });
});

describe('stream error events', () => {
  it('each shape gets its own protocol’s error event, which the frame reader reads back as that error', () => {
    for (const shape of ['anthropic-messages', 'openai-chat', 'openai-responses'] as const) {
      const reader = new FrameReader(shape);
      const res = reader.push(streamErrorEvent(shape, { status: 429, message: 'slow down' }));
      expect(res.error, shape).toMatchObject({ status: 429, message: 'slow down' });
    }
  });

  it('error bodies follow Anthropic and OpenAI shapes', () => {
    expect(errorBodyFor('anthropic-messages', { status: 529, message: 'busy' })).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'busy' },
    });
    expect(errorBodyFor('openai-chat', { status: 401, message: 'key' })).toEqual({
      error: { message: 'key', type: 'authentication_error', param: null, code: 'invalid_api_key' },
    });
  });
});
