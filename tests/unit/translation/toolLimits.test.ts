// Tool-count limits (routing/toolLimits.ts, R-OTH-04): the refusal wordings that count, the limit
// each names, the memory per (provider, model) on a fake clock, and which targets a request bars.
import { describe, expect, it } from 'vitest';
import type { UpstreamFailure } from '../../../src/main/engine/resilience/port';
import { LIMIT_MEMORY_MS, ToolFallback, ToolLimits, toolCountOf, toolLimitError } from '../../../src/main/engine/routing/toolLimits';
import type { Target } from '../../../src/main/engine/routing/target';
import { connectionRecord } from '../../support/builders';

const failure = (status: number, message: string): UpstreamFailure => ({ kind: 'http', status, headers: {}, body: JSON.stringify({ error: { message } }), message });
const target = (provider: string, model: string, name = provider): Target => ({ conn: connectionRecord({ name, provider }), model, requestedModel: model });
const tools = (n: number) => ({ model: 'm', tools: Array.from({ length: n }, (_, i) => ({ name: `t${i}` })) });

describe('tool-limit refusals', () => {
  it.each([
    ["Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 200 instead.", 128],
    ['tools: maximum number of items is 64', 64],
    ['Too many tools: at most 32 tools are supported', 32],
    ['The number of tools exceeds the limit of 100', 100],
    ['too many function declarations in the request', null],
    ['You can pass no more than 16 functions', 16],
  ])('reads %j as a tool limit of %s', (message, limit) => {
    expect(toolLimitError(failure(400, message))).toEqual({ limit });
  });

  it.each([
    [400, 'prompt is too long: 250000 tokens > 200000 maximum'],
    [400, "This model's maximum context length is 8192 tokens; your messages and tools resulted in 9000 tokens"],
    [400, 'tools[0].input_schema: Field required'],
    [400, 'max_tokens: must be at most 8192'],
    [400, 'tools[0].input_schema: maximum nesting depth exceeded'],
    [400, 'tools.0.name: String should have at most 64 characters'],
    [400, 'tool_choice: up to 1 tool may be forced'],
    [429, 'Too many tools requests, slow down'],
    [500, 'tools: maximum number of items is 64'],
  ])('does not read %s %j as one', (status, message) => {
    expect(toolLimitError(failure(status, message))).toBeNull();
  });

  it('counts tools and legacy functions', () => {
    expect(toolCountOf({ json: {} })).toBe(0);
    expect(toolCountOf({ json: tools(3) })).toBe(3);
    expect(toolCountOf({ json: { functions: [{}, {}], tools: [{}] } })).toBe(3);
    // A call that reads the lengths without its body (proxy/parsedCall.ts) is asked for them.
    expect(toolCountOf({ json: {}, arrayLength: (k) => (k === 'tools' ? 7 : 1) })).toBe(8);
  });
});

describe('tool-limit memory', () => {
  const refusal = failure(400, "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 200 instead.");

  it('a refusal bars that provider and model for requests with more tools, on every key, until the memory lapses', () => {
    const memory = new ToolLimits();
    const openai = target('openai', 'gpt-x', 'key 1');
    expect(new ToolFallback(toolCountOf({ json: tools(200) }), memory).note(openai, refusal, 0)).toBe(true);

    const later = new ToolFallback(toolCountOf({ json: tools(150) }), memory);
    expect(later.bar(target('openai', 'gpt-x', 'key 2'), 60_000)).toMatch(/gpt-x on openai takes at most 128 tools \(learnt from a refusal 1 min ago\); this request has 150/);
    expect(later.bar(target('openai', 'GPT-X', 'key 3'), 60_000)).not.toBeNull();
    // Another model, another provider, or a request within the limit: not barred.
    expect(later.bar(target('openai', 'gpt-y'), 60_000)).toBeNull();
    expect(later.bar(target('anthropic', 'gpt-x'), 60_000)).toBeNull();
    expect(new ToolFallback(toolCountOf({ json: tools(128) }), memory).bar(openai, 60_000)).toBeNull();
    expect(new ToolFallback(toolCountOf({ json: { model: 'm' } }), memory).bar(openai, 60_000)).toBeNull();
    // After the memory's lifetime, the model may be tried again.
    expect(later.bar(openai, LIMIT_MEMORY_MS)).toBeNull();
  });

  it('with no number in the refusal, the limit is one less than the tools sent; a request without tools learns nothing', () => {
    const memory = new ToolLimits();
    const t = target('gemini', 'g-1');
    expect(new ToolFallback(toolCountOf({ json: tools(40) }), memory).note(t, failure(400, 'too many function declarations'), 0)).toBe(true);
    expect(memory.limitFor(t, 0)).toEqual({ limit: 39, at: 0 });
    expect(new ToolFallback(toolCountOf({ json: { model: 'm' } }), memory).note(target('x', 'y'), refusal, 0)).toBe(false);
    expect(memory.limitFor(target('x', 'y'), 0)).toBeNull();
  });
});
