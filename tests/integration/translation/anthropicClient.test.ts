// The Anthropic SDK (Claude Code's protocol) served by an OpenAI-compatible (Chat Completions)
// upstream through translation: answers and streams with tools, a two-turn tool loop whose ids
// survive, and the request log's record of the translation.
import type Anthropic from '@anthropic-ai/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { openaiToolCompletion, openaiToolStream, openaiStream } from '../../support/fakeUpstream';
import { translationSuite, WEATHER_TOOL_ANTHROPIC } from './support';

describe('Anthropic client on a Chat Completions upstream', () => {
  const s = translationSuite();
  beforeAll(async () => {
    await s.t.addConnection({ name: 'DeepSeek', kind: 'openai-compatible', provider: 'deepseek', baseUrl: s.fake.openaiUrl, secret: 'sk-deepseek-upstream-1' });
  });

  const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };
  const call = { id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris' } };

  it('runs a two-turn tool loop without streaming, the tool id kept both ways', async () => {
    s.fake.script({ path: '/v1/chat/completions' }, [
      { json: openaiToolCompletion('deepseek-chat', [call], 'Let me check.') },
      { json: { ...openaiToolCompletion('deepseek-chat', []), choices: [{ index: 0, message: { role: 'assistant', content: 'It is 18°C and sunny.' }, finish_reason: 'stop' }] } },
    ]);
    const first = await s.anthropic.messages.create({ model: 'deepseek/deepseek-chat', max_tokens: 300, system: 'Be brief.', tools: [WEATHER_TOOL_ANTHROPIC], messages: [question] });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'text', text: 'Let me check.', citations: null },
      { type: 'tool_use', id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } },
    ].map((b) => expect.objectContaining(b.type === 'text' ? { type: 'text', text: b.text } : b)));
    expect(first.usage).toMatchObject({ input_tokens: 30, output_tokens: 12 });

    const up1 = s.fake.requests.at(-1)!;
    expect(up1.path).toBe('/v1/chat/completions');
    expect(up1.key).toBe('sk-deepseek-upstream-1');
    expect(up1.body).toMatchObject({
      model: 'deepseek-chat',
      max_tokens: 300,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is the weather in Paris?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_TOOL_ANTHROPIC.input_schema } }],
    });

    const second = await s.anthropic.messages.create({
      model: 'deepseek/deepseek-chat',
      max_tokens: 300,
      tools: [WEATHER_TOOL_ANTHROPIC],
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_w1', content: '18°C, sunny' }] }],
    });
    expect(second.content[0]).toMatchObject({ type: 'text', text: 'It is 18°C and sunny.' });
    expect(second.stop_reason).toBe('end_turn');
    const up2 = s.fake.requests.at(-1)!.body as { messages: unknown[] };
    expect(up2.messages).toEqual([
      expect.objectContaining({ role: 'user', content: 'What is the weather in Paris?' }),
      expect.objectContaining({
        role: 'assistant',
        tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      }),
      expect.objectContaining({ role: 'tool', tool_call_id: 'call_w1', content: '18°C, sunny' }),
    ]);
  });

  it('streams a tool call and its follow-up turn event by event', async () => {
    s.fake.script({ path: '/v1/chat/completions' }, [
      { chunks: openaiToolStream('deepseek-chat', [call, { id: 'call_w2', name: 'get_weather', arguments: { city: 'Lyon' } }], { text: 'Checking both.' }) },
      { chunks: openaiStream('deepseek-chat', ['Paris 18°C', ', Lyon 21°C.']) },
    ]);
    const stream = s.anthropic.messages.stream({ model: 'deepseek/deepseek-chat', max_tokens: 300, tools: [WEATHER_TOOL_ANTHROPIC], messages: [question] });
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const first = await stream.finalMessage();
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content.filter((b) => b.type === 'tool_use')).toEqual([
      expect.objectContaining({ id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } }),
      expect.objectContaining({ id: 'call_w2', name: 'get_weather', input: { city: 'Lyon' } }),
    ]);
    expect(first.content[0]).toMatchObject({ type: 'text', text: 'Checking both.' });
    const up1 = s.fake.requests.at(-1)!;
    expect(up1.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(up1.headers['accept']).toBe('text/event-stream');

    const deltas: string[] = [];
    const next = s.anthropic.messages.stream({
      model: 'deepseek/deepseek-chat',
      max_tokens: 300,
      tools: [WEATHER_TOOL_ANTHROPIC],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_w1', content: '18°C' },
            { type: 'tool_result', tool_use_id: 'call_w2', content: '21°C' },
          ],
        },
      ],
    });
    next.on('text', (t) => deltas.push(t));
    const second = await next.finalMessage();
    expect(deltas).toEqual(['Paris 18°C', ', Lyon 21°C.']);
    expect(second.stop_reason).toBe('end_turn');
    const msgs = (s.fake.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[] }).messages;
    expect(msgs.find((m) => m.role === 'assistant')!.tool_calls!.map((c) => c.id)).toEqual(['call_w1', 'call_w2']);
    expect(msgs.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_w1', 'call_w2']);
  });

  it('records the translation and the usage in the request log', async () => {
    s.fake.script({ path: '/v1/chat/completions' }, [{ chunks: openaiStream('deepseek-chat', ['ok']) }]);
    const stream = s.anthropic.messages.stream({ model: 'deepseek/logged-model', max_tokens: 50, service_tier: 'auto', messages: [question] });
    await stream.finalMessage();
    const e = await s.logOf('deepseek/logged-model');
    expect(e).toMatchObject({ status: 200, protocol: 'anthropic-messages', connectionName: 'DeepSeek', inputTokens: 9, outputTokens: 1 });
    expect(e.attempts[0]).toMatchObject({ translated: 'anthropic-messages→openai-chat', status: 200 });
    // An Anthropic capacity tier means nothing to this target: listed, never silently lost.
    expect(e.attempts[0]!.dropped).toEqual([expect.stringMatching(/^service_tier: /)]);
  });
});
