// The continuation request: the answer so far as a prefill (Anthropic target, no thinking) or as a
// "continue" turn, in the inbound protocol's shape, extending a client prefill rather than repeating it.
import { describe, expect, it } from 'vitest';
import { CONTINUE_PROMPT, continuationRequest, prefillFits, wantsThinking } from '../../../src/main/engine/streams/continuation';

describe('continuation requests', () => {
  it('prefill only on Anthropic targets and only without thinking', () => {
    expect(prefillFits('anthropic-messages', 'anthropic-messages', { messages: [] })).toBe(true);
    expect(prefillFits('openai-chat', 'anthropic-messages', { messages: [] })).toBe(true);
    expect(prefillFits('anthropic-messages', 'openai-chat', { messages: [] })).toBe(false);
    expect(prefillFits('anthropic-messages', 'anthropic-messages', { thinking: { type: 'enabled', budget_tokens: 2048 } })).toBe(false);
    expect(wantsThinking('openai-chat', { reasoning_effort: 'high' })).toBe(true);
    expect(wantsThinking('openai-responses', { reasoning: { effort: 'low' } })).toBe(true);
    expect(wantsThinking('anthropic-messages', { thinking: { type: 'disabled' } })).toBe(false);
  });

  it('Anthropic: a prefill without its trailing whitespace, or the answer then a continue turn', () => {
    const json = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(continuationRequest('anthropic-messages', json, 'Half of it ', 'prefill').messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Half of it' },
    ]);
    expect(continuationRequest('anthropic-messages', json, 'Half of it ', 'continue').messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Half of it ' },
      { role: 'user', content: CONTINUE_PROMPT },
    ]);
    // The client's own prefill is extended.
    const own = { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text: '{"a":' }] }] };
    expect(continuationRequest('anthropic-messages', own, '1, "b"', 'prefill').messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '{"a":1, "b"' },
    ]);
    expect(json.messages).toHaveLength(1);
  });

  it('Chat and Responses: the answer as an assistant turn, then the continue prompt', () => {
    expect(continuationRequest('openai-chat', { messages: [{ role: 'user', content: 'hi' }] }, 'So far', 'continue').messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'So far' },
      { role: 'user', content: CONTINUE_PROMPT },
    ]);
    expect(continuationRequest('openai-responses', { input: 'hi' }, 'So far', 'continue').input).toEqual([
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'So far' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: CONTINUE_PROMPT }] },
    ]);
  });
});

describe('Gemini continuation requests', () => {
  const json = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };

  it('the answer so far as a model turn, then the continue ask; a prefill (for an Anthropic target) ends on the model turn', () => {
    expect(continuationRequest('gemini', json, 'Half of it ', 'continue').contents).toEqual([
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ text: 'Half of it ' }] },
      { role: 'user', parts: [{ text: CONTINUE_PROMPT }] },
    ]);
    expect(continuationRequest('gemini', json, 'Half of it ', 'prefill').contents).toEqual([
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ text: 'Half of it' }] },
    ]);
  });

  it("extends the client's own final model turn instead of adding a second one", () => {
    const own = { contents: [...json.contents, { role: 'model', parts: [{ text: 'Sure: ' }] }] };
    expect((continuationRequest('gemini', own, 'one, two', 'continue').contents as unknown[]).slice(1)).toEqual([
      { role: 'model', parts: [{ text: 'Sure: ' }, { text: 'one, two' }] },
      { role: 'user', parts: [{ text: CONTINUE_PROMPT }] },
    ]);
  });

  it('thinking is asked by a thinking budget, includeThoughts or a thinking level', () => {
    expect(wantsThinking('gemini', { generationConfig: { thinkingConfig: { thinkingBudget: 1024 } } })).toBe(true);
    expect(wantsThinking('gemini', { generationConfig: { thinkingConfig: { includeThoughts: true } } })).toBe(true);
    expect(wantsThinking('gemini', { generationConfig: { thinkingConfig: { thinkingLevel: 'low' } } })).toBe(true);
    expect(wantsThinking('gemini', { generationConfig: { thinkingConfig: { thinkingBudget: 0 } } })).toBe(false);
    expect(wantsThinking('gemini', json)).toBe(false);
    expect(prefillFits('gemini', 'anthropic-messages', { generationConfig: { thinkingConfig: { thinkingBudget: 1024 } } })).toBe(false);
  });
});
