import { describe, expect, it } from 'vitest';
import { streamErrorEvent, errorBodyFor } from '../../../src/main/engine/streams/errorEvents';
import { FrameReader } from '../../../src/main/engine/streams/frames';
import { emptyJsonAnswer } from '../../../src/main/engine/streams/emptyAnswer';
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
    ).toEqual({ output: true, reasoning: false, stopReason: 'end_turn', error: null, usage: { inputTokens: 7, outputTokens: 2, cacheReadTokens: 4 } });
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

describe('emptyJsonAnswer: when a complete non-stream answer is an empty one', () => {
  const empty = emptyJsonAnswer;

  it('no output and a natural stop is empty, in each shape; reasoning alone is still empty', () => {
    expect(empty('anthropic-messages', { type: 'message', content: [], stop_reason: 'end_turn' })).toBe(true);
    expect(empty('anthropic-messages', { type: 'message', content: [{ type: 'text', text: '' }], stop_reason: 'end_turn' })).toBe(true);
    expect(empty('anthropic-messages', { type: 'message', content: [{ type: 'thinking', thinking: 'hm' }], stop_reason: 'end_turn' })).toBe(true);
    expect(empty('openai-chat', { choices: [{ message: { role: 'assistant', content: '' }, finish_reason: 'stop' }] })).toBe(true);
    expect(empty('openai-chat', { choices: [{ message: { role: 'assistant', content: null }, finish_reason: 'stop' }] })).toBe(true);
    expect(empty('openai-responses', { object: 'response', status: 'completed', output: [] })).toBe(true);
  });

  it('text, a tool call or a refusal is an answer', () => {
    expect(empty('anthropic-messages', { content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }], stop_reason: 'tool_use' })).toBe(false);
    expect(empty('openai-chat', { choices: [{ message: { content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] })).toBe(false);
    expect(empty('openai-chat', { choices: [{ message: { content: null, refusal: 'No.' }, finish_reason: 'stop' }] })).toBe(false);
    expect(empty('openai-responses', { status: 'completed', output: [{ type: 'function_call', name: 'f', arguments: '{}' }] })).toBe(false);
  });

  it("emptiness the request's own limits asked for, an error body, or a response not yet completed is not an empty answer", () => {
    expect(empty('anthropic-messages', { content: [], stop_reason: 'max_tokens' })).toBe(false);
    expect(empty('openai-chat', { choices: [{ message: { content: '' }, finish_reason: 'length' }] })).toBe(false);
    expect(empty('openai-responses', { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [] })).toBe(false);
    expect(empty('openai-responses', { status: 'in_progress', output: [] })).toBe(false);
    expect(empty('openai-chat', { error: { message: 'boom', type: 'server_error' } })).toBe(false);
    // Something that is not a completion of the shape at all is left to the client.
    expect(empty('anthropic-messages', {})).toBe(false);
    expect(empty('openai-chat', { object: 'list', data: [] })).toBe(false);
  });
});

describe('stream error events', () => {
  it('each shape gets its own protocol’s error event, which the frame reader reads back as that error', () => {
    for (const shape of ['anthropic-messages', 'openai-chat', 'openai-responses', 'gemini'] as const) {
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

describe('Gemini answers', () => {
  it('text and function calls are output, thought parts reasoning; the finishReason and usage are read', () => {
    const answer = {
      candidates: [{ content: { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text: 'hi' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, thoughtsTokenCount: 3, cachedContentTokenCount: 1 },
    };
    expect(jsonOutcome('gemini', answer)).toEqual({ output: true, reasoning: true, stopReason: 'STOP', error: null, usage: { inputTokens: 5, outputTokens: 5, cacheReadTokens: 1 } });
    expect(jsonOutcome('gemini', { candidates: [{ content: { parts: [{ functionCall: { name: 'ls', args: {} } }] }, finishReason: 'STOP' }] }).output).toBe(true);
    expect(jsonOutcome('gemini', { error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'quota' } }).error).toMatchObject({ status: 429, message: 'quota' });
  });

  it('an empty STOP is an empty answer; a token limit, a safety stop or a blocked prompt is not', () => {
    const empty = (finishReason: string) => ({ candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason }] });
    expect(emptyJsonAnswer('gemini', empty('STOP'))).toBe(true);
    expect(emptyJsonAnswer('gemini', empty('MAX_TOKENS'))).toBe(false);
    expect(emptyJsonAnswer('gemini', empty('SAFETY'))).toBe(false);
    expect(emptyJsonAnswer('gemini', { promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } })).toBe(false);
    expect(emptyJsonAnswer('gemini', { something: 'else' })).toBe(false);
  });

  it('error bodies and stream error events for a Gemini client are Google-shaped', () => {
    expect(errorBodyFor('gemini', { status: 429, message: 'slow down' })).toEqual({ error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' } });
    expect(streamErrorEvent('gemini', { status: 503, message: 'busy' })).toBe(`data: ${JSON.stringify({ error: { code: 503, message: 'busy', status: 'UNAVAILABLE' } })}\n\n`);
  });
});
