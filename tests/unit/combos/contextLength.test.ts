// Context-length errors in each provider's words, and the rule that only a larger window may be
// tried next, never the same model.
import { describe, expect, it } from 'vitest';
import type { UpstreamFailure } from '../../../src/main/engine/resilience/port';
import { ContextFallback, contextLengthError } from '../../../src/main/engine/routing/combos/contextLength';
import { ModelCatalog } from '../../../src/main/engine/routing/combos/modelCatalog';
import type { Target } from '../../../src/main/engine/routing/target';
import { connectionRecord } from '../../support/builders';

const fail = (status: number, body: string): UpstreamFailure => ({ kind: 'http', status, headers: {}, body, message: body });
const target = (model: string): Target => ({ conn: connectionRecord(), model, requestedModel: 'pool' });

describe('contextLengthError', () => {
  it.each([
    ['OpenAI', 400, JSON.stringify({ error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", code: 'context_length_exceeded' } }), 128_000, 130_000],
    ['Anthropic', 400, JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }), 200_000, 210_000],
    ['Gemini', 400, JSON.stringify({ error: { message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).' } }), 1_048_576, 1_200_000],
    ['Bedrock', 400, JSON.stringify({ message: 'Input is too long for requested model.' }), null, null],
    ['Groq', 400, JSON.stringify({ error: { message: 'Please reduce the length of the messages or completion.' } }), null, null],
    ['a 413 gateway', 413, 'context length exceeded', null, null],
  ])('reads %s', (_who, status, body, limit, needed) => {
    expect(contextLengthError(fail(status, body))).toEqual({ limit, needed });
  });

  it('is not a content-filter refusal, a rate limit or a plain bad request', () => {
    expect(contextLengthError(fail(400, 'Output blocked by content filtering policy'))).toBeNull();
    expect(contextLengthError(fail(400, 'messages.0.content: field required'))).toBeNull();
    expect(contextLengthError(fail(429, 'prompt is too long'))).toBeNull();
  });
});

describe('ContextFallback', () => {
  const catalog = new ModelCatalog({ contextWindows: { small: 8_192, mid: 32_768, big: 200_000 }, modelPrices: {} });

  it('bars nothing until a context-length error', () => {
    const f = new ContextFallback(catalog);
    expect(f.note(target('small'), fail(500, 'boom'))).toBe(false);
    expect(f.bar(target('small'))).toBeNull();
  });

  it('after one, bars the same model and windows that are not larger; unknown windows too', () => {
    const f = new ContextFallback(catalog);
    expect(f.note(target('mid'), fail(400, 'prompt is too long: 40000 tokens > 32768 maximum'))).toBe(true);
    expect(f.bar(target('mid'))).toContain('already refused');
    expect(f.bar(target('MID'))).toContain('already refused');
    expect(f.bar(target('small'))).toContain('8192-token window');
    expect(f.bar(target('mystery'))).toContain('unknown');
    expect(f.bar(target('big'))).toBeNull();
  });

  it('uses the tokens the error reports: a larger window that still cannot hold them is barred', () => {
    const f = new ContextFallback(catalog);
    f.note(target('small'), fail(400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 50000 tokens."));
    expect(f.bar(target('mid'))).not.toBeNull();
    expect(f.bar(target('big'))).toBeNull();
  });
});
