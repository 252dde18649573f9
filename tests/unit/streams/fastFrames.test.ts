// The hot frames (Anthropic text / thinking / tool-argument deltas, Chat content deltas) are read
// without JSON.parse; they must mean exactly what their JSON says, and anything unusual must go
// the slow way. Every frame of every upstream fixture is checked against its parsed JSON.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
