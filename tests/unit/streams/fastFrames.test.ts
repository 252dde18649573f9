// The hot frames (Anthropic text / thinking / tool-argument deltas, Chat content deltas) are read
// without JSON.parse; they must mean exactly what their JSON says, and anything unusual must go
// the slow way. Every frame of every upstream fixture is checked against its parsed JSON.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { classifyFrame, FrameReader } from '../../../src/main/engine/streams/frames';
import { fixture, FIXTURES } from '../codecs/support';

/** textChars / toolArgChars / reasoning / output as the JSON says. */
function expected(shape: 'anthropic-messages' | 'openai-chat', j: any) {
  if (shape === 'anthropic-messages') {
    const d = j?.delta ?? {};
    return {
      textChars: d.type === 'text_delta' ? (d.text?.length ?? 0) : 0,
      toolArgChars: d.type === 'input_json_delta' ? (d.partial_json?.length ?? 0) : 0,
      reasoning: d.type === 'thinking_delta',
    };
  }
  const delta = j?.choices?.[0]?.delta ?? {};
  return { textChars: typeof delta.content === 'string' ? delta.content.length : 0, toolArgChars: 0, reasoning: false };
}

describe('fast frame classification', () => {
  it('agrees with the parsed JSON on every fixture frame, and says which text it read', () => {
    let fast = 0;
    for (const name of readdirSync(join(FIXTURES, 'upstream')).filter((n) => n.endsWith('.sse'))) {
      const shape = name.startsWith('anthropic') ? 'anthropic-messages' : name.startsWith('chat') ? 'openai-chat' : null;
      if (!shape) continue;
      const frames = new FrameReader(shape).push(fixture(`upstream/${name}`)).frames;
      for (const f of frames) {
        if (f.deltaText === null) continue;
        fast++;
        const want = expected(shape, JSON.parse(f.data));
        expect({ textChars: f.textChars, toolArgChars: f.toolArgChars, reasoning: f.reasoning }, `${name}: ${f.data}`).toEqual(want);
        expect(f.deltaText).toBe(shape === 'anthropic-messages' ? JSON.parse(f.data).delta.text : JSON.parse(f.data).choices[0].delta.content);
        expect(f.json).toEqual(JSON.parse(f.data));
      }
    }
    expect(fast).toBeGreaterThan(20);
  });

  it('reads escapes, quotes and unicode in the text exactly', () => {
    for (const text of ['say \\"hi\\"', 'a\\\\', 'line\\nbreak', '\\u00e9t\\u00e9 \\ud83d\\ude00', 'ends with \\\\\\"']) {
      const a = classifyFrame('anthropic-messages', 'content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${text}"}}`);
      const want = JSON.parse(`"${text}"`) as string;
      expect(a.deltaText).toBe(want);
      expect(a.textChars).toBe(want.length);
      const c = classifyFrame('openai-chat', null, `{"id":"x","choices":[{"index":0,"delta":{"content":"${text}"},"finish_reason":null}]}`);
      expect(c.deltaText).toBe(want);
    }
  });

  it('anything beyond plain text takes the slow way and keeps its full meaning', () => {
    const slow = [
      // a finish reason, usage, tool calls, reasoning, a second choice, a role, an error
      '{"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}',
      '{"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":{"prompt_tokens":1,"completion_tokens":2}}',
      '{"id":"x","choices":[{"index":0,"delta":{"content":"a","tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}',
      '{"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null},{"index":1,"delta":{"content":"b"},"finish_reason":null}]}',
      '{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"a"},"finish_reason":null}]}',
    ];
    for (const d of slow) {
      const f = classifyFrame('openai-chat', null, d);
      expect(f.deltaText, d).toBeNull();
    }
    expect(classifyFrame('openai-chat', null, slow[0]!)).toMatchObject({ terminal: true, stopReason: 'stop', textChars: 1 });
    expect(classifyFrame('openai-chat', null, slow[1]!).usage).toEqual({ inputTokens: 1, outputTokens: 2 });
    expect(classifyFrame('openai-chat', null, slow[3]!).textChars).toBe(2);
    const sig = classifyFrame('anthropic-messages', 'content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}');
    expect(sig).toMatchObject({ deltaText: null, reasoning: true });
    const extra = classifyFrame('anthropic-messages', 'content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","citations":[]}}');
    expect(extra).toMatchObject({ deltaText: null, textChars: 1 });
  });
});

describe('fast Gemini frames', () => {
  /** What a Gemini chunk means, read from its JSON. */
  function meaning(j: any) {
    const parts: any[] = j.candidates?.[0]?.content?.parts ?? [];
    const text = parts.filter((p) => p.thought !== true && typeof p.text === 'string').reduce((n, p) => n + p.text.length, 0);
    const u = j.usageMetadata;
    const input = u && (u.promptTokenCount !== undefined || u.toolUsePromptTokenCount !== undefined) ? (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0) : null;
    const output = u && (u.candidatesTokenCount !== undefined || u.thoughtsTokenCount !== undefined) ? (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0) : null;
    return {
      textChars: text,
      toolStart: parts.some((p) => p.functionCall),
      reasoning: parts.some((p) => p.thought === true || (typeof p.thoughtSignature === 'string' && p.thoughtSignature)),
      terminal: typeof j.candidates?.[0]?.finishReason === 'string',
      inputTokens: u ? input : undefined,
      outputTokens: u ? output : undefined,
      cacheRead: u?.cachedContentTokenCount,
    };
  }
  const seen = (f: ReturnType<typeof classifyFrame>) => ({
    textChars: f.textChars,
    toolStart: f.toolStart,
    reasoning: f.reasoning,
    terminal: f.terminal,
    inputTokens: f.usage ? f.usage.inputTokens : undefined,
    outputTokens: f.usage ? f.usage.outputTokens : undefined,
    cacheRead: f.usage?.cacheReadTokens,
  });

  it("Google's own spacing and compact JSON, with and without running usage, read without parsing, meaning what the JSON says", () => {
    const text = 'say "hi" \\ é 😀\n';
    const compact = { candidates: [{ content: { parts: [{ text }], role: 'model' }, index: 0 }], usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 3, totalTokenCount: 10 }, modelVersion: 'gemini-2.5-flash', responseId: 'r1' };
    const spaced = JSON.stringify(compact).replace(/":/g, '": ').replace(/,"/g, ',"');
    for (const data of [JSON.stringify(compact), spaced, JSON.stringify({ candidates: [{ content: { parts: [{ text }] } }] })]) {
      const f = classifyFrame('gemini', null, data);
      expect(f.deltaText, data).toBe(text);
      expect(seen(f)).toEqual(meaning(JSON.parse(data)));
      expect(f.kind).toBe('output');
      expect(f.json).toEqual(JSON.parse(data));
    }
  });

  it('keys in another order: a finish, an error or a thoughts count before the parts still takes the slow way', () => {
    const slow = [
      '{"candidates":[{"finishReason":"STOP","content":{"parts":[{"text":"a"}]}}]}',
      '{"usageMetadata":{"promptTokenCount":1,"thoughtsTokenCount":4},"candidates":[{"content":{"parts":[{"text":"a"}]}}]}',
      '{"candidates":[{"content":{"parts":[{"text":"a"}]}},{"content":{"parts":[{"text":"b"}]}}]}',
      '{"candidates":[{"content":{"parts":[{"text":"a","thoughtSignature":"s"}]}}]}',
      '{"candidates":[{"content":{"parts":[{"text":"a"},{"functionCall":{"name":"ls","args":{}}}]}}]}',
    ];
    for (const data of slow) {
      const f = classifyFrame('gemini', null, data);
      expect(f.deltaText, data).toBeNull();
      expect(seen(f), data).toEqual(meaning(JSON.parse(data)));
    }
    const err = classifyFrame('gemini', null, '{"error":{"code":500,"message":"x"},"candidates":[{"content":{"parts":[{"text":"a"}]}}]}');
    expect(err.deltaText).toBeNull();
    expect(err.kind).toBe('error');
    const usageFirst = '{"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2},"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]}}]}';
    const f = classifyFrame('gemini', null, usageFirst);
    expect(f.deltaText).toBe('ok');
    expect(f.usage).toEqual({ inputTokens: 3, outputTokens: 2 });
  });

  it('any generated chunk means what its JSON says, fast or slow; calls, thoughts, finishes, errors and thought counts go the slow way', () => {
    const part = fc.oneof(
      fc.string().map((text) => ({ text })),
      fc.string().map((text) => ({ text, thought: true })),
      fc.record({ functionCall: fc.record({ name: fc.constantFrom('ls', 'read'), args: fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 5 })) }) }),
      fc.string({ minLength: 1, maxLength: 8 }).map((s) => ({ text: 'x', thoughtSignature: s })),
    );
    const usage = fc.record(
      { promptTokenCount: fc.nat(9999), candidatesTokenCount: fc.nat(9999), thoughtsTokenCount: fc.nat(99), cachedContentTokenCount: fc.nat(99), toolUsePromptTokenCount: fc.nat(99) },
      { requiredKeys: [] },
    );
    const chunk = fc.record(
      {
        candidates: fc.tuple(fc.record({ content: fc.record({ parts: fc.array(part, { maxLength: 3 }), role: fc.constant('model') }), finishReason: fc.constantFrom('STOP', 'MAX_TOKENS'), index: fc.constant(0) }, { requiredKeys: ['content'] })),
        usageMetadata: usage,
        modelVersion: fc.constant('gemini-2.5-flash'),
      },
      { requiredKeys: ['candidates'] },
    );
    fc.assert(
      fc.property(chunk, fc.boolean(), (j, spaced) => {
        const compact = JSON.stringify(j);
        const data = spaced ? compact.replace(/":/g, '": ') : compact;
        const f = classifyFrame('gemini', null, data);
        expect(seen(f)).toEqual(meaning(j));
        if (f.deltaText !== null) {
          const parts = j.candidates[0].content.parts as { text?: string }[];
          expect(parts).toHaveLength(1);
          expect(f.deltaText).toBe(parts[0]!.text);
          expect(j.candidates[0].finishReason).toBeUndefined();
          expect((j.usageMetadata as Record<string, unknown> | undefined)?.thoughtsTokenCount).toBeUndefined();
        }
      }),
      { numRuns: 400, seed: 24 },
    );
  });
});
