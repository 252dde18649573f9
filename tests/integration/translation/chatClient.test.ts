// The openai SDK's Chat Completions client (aider, most SDK users) served by an Anthropic
// upstream through translation: a two-turn tool loop with and without streaming whose tool ids
// survive, usage, and the Anthropic headers the target needs.
import type OpenAI from 'openai';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { anthropicMessage, anthropicStream, anthropicToolMessage, anthropicToolStream } from '../../support/fakeUpstream';
import { translationSuite, WEATHER_TOOL_CHAT } from './support';

describe('Chat client on an Anthropic upstream', () => {
  const s = translationSuite();
  beforeAll(async () => {
    await s.t.addConnection({
      name: 'Claude',
      kind: 'anthropic',
      baseUrl: s.fake.anthropicUrl,
      secret: 'sk-ant-upstream-chat-1',
      models: ['claude-sonnet-4-6'],
      passthroughModels: false,
    });
  });

  const question: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: 'Weather in Rome?' };
  const call = { id: 'toolu_01Rome', name: 'get_weather', arguments: { city: 'Rome' } };

  it("translates a non-stream answer from the empty-answer check's parse, not a second one", async () => {
    const answer = anthropicMessage('claude-sonnet-4-6', 'Parsed once.');
    const text = JSON.stringify(answer); // what the fake upstream sends
    s.fake.script({ path: '/v1/messages' }, [{ json: answer }]);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const r = await s.openai.chat.completions.create({ model: 'claude-sonnet-4-6', messages: [question], max_tokens: 64 });
      expect(r.choices[0]!.message.content).toBe('Parsed once.');
      expect(r.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
      expect(parse.mock.calls.filter(([t]) => t === text)).toHaveLength(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('runs a two-turn tool loop without streaming, ids kept', async () => {
    s.fake.script({ path: '/v1/messages' }, [
      { json: anthropicToolMessage('claude-sonnet-4-6', [call], 'Checking.') },
      { json: anthropicMessage('claude-sonnet-4-6', 'Rome is 25°C.') },
    ]);
    const first = await s.openai.chat.completions.create({
      model: 'claude-sonnet-4-6',
      messages: [{ role: 'system', content: 'Be brief.' }, question],
      tools: [WEATHER_TOOL_CHAT],
      max_tokens: 256,
    });
    const msg = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(msg.content).toBe('Checking.');
    expect(msg.tool_calls).toEqual([{ id: 'toolu_01Rome', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }]);
    expect(first.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 15 });
    const up1 = s.fake.requests.at(-1)!;
    expect(up1.path).toBe('/v1/messages');
    expect(up1.key).toBe('sk-ant-upstream-chat-1');
    expect(up1.headers['anthropic-version']).toBe('2023-06-01');
    expect(up1.body).toMatchObject({
      model: 'claude-sonnet-4-6',
      max_tokens: 256,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Rome?' }] }],
      tools: [{ name: 'get_weather', input_schema: WEATHER_TOOL_CHAT.function.parameters }],
    });

    const second = await s.openai.chat.completions.create({
      model: 'claude-sonnet-4-6',
      messages: [question, msg, { role: 'tool', tool_call_id: 'toolu_01Rome', content: '25°C' }],
      tools: [WEATHER_TOOL_CHAT],
    });
    expect(second.choices[0]!.message.content).toBe('Rome is 25°C.');
    const msgs = (s.fake.requests.at(-1)!.body as { messages: { role: string; content: { type: string; id?: string; tool_use_id?: string }[] }[] }).messages;
    expect(msgs[1]!.content.find((b) => b.type === 'tool_use')).toMatchObject({ id: 'toolu_01Rome', name: 'get_weather', input: { city: 'Rome' } });
    expect(msgs[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01Rome' });
  });

  it('streams a tool call and the follow-up turn chunk by chunk', async () => {
    s.fake.script({ path: '/v1/messages' }, [
      { chunks: anthropicToolStream('claude-sonnet-4-6', [call]) },
      { chunks: anthropicStream('claude-sonnet-4-6', ['Rome ', 'is 25°C.']) },
    ]);
    const stream = await s.openai.chat.completions.create({ model: 'claude-sonnet-4-6', messages: [question], tools: [WEATHER_TOOL_CHAT], stream: true, stream_options: { include_usage: true } });
    const calls = new Map<number, { id?: string; name?: string; args: string }>();
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    for await (const ch of stream) {
      for (const tc of ch.choices[0]?.delta?.tool_calls ?? []) {
        const c = calls.get(tc.index) ?? { args: '' };
        if (tc.id) c.id = tc.id;
        if (tc.function?.name) c.name = tc.function.name;
        c.args += tc.function?.arguments ?? '';
        calls.set(tc.index, c);
      }
      finish = ch.choices[0]?.finish_reason ?? finish;
      if (ch.usage) usage = ch.usage;
    }
    expect([...calls.values()]).toEqual([{ id: 'toolu_01Rome', name: 'get_weather', args: '{"city":"Rome"}' }]);
    expect(finish).toBe('tool_calls');
    expect(usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 15 });
    expect(s.fake.requests.at(-1)!.body).toMatchObject({ stream: true });

    const next = await s.openai.chat.completions.create({
      model: 'claude-sonnet-4-6',
      stream: true,
      messages: [
        question,
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_01Rome', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] },
        { role: 'tool', tool_call_id: 'toolu_01Rome', content: '25°C' },
      ],
      tools: [WEATHER_TOOL_CHAT],
    });
    let text = '';
    for await (const ch of next) text += ch.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Rome is 25°C.');
    const msgs = (s.fake.requests.at(-1)!.body as { messages: { role: string; content: { type: string; tool_use_id?: string; id?: string }[] }[] }).messages;
    expect(msgs[1]!.content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_01Rome' });
    expect(msgs[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01Rome' });
    const e = await s.logOf('claude-sonnet-4-6');
    expect(e.attempts.at(-1)).toMatchObject({ translated: 'openai-chat→anthropic-messages' });
  });
});
