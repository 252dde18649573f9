// Tool ids survive the round trip: the agent's request goes out translated, the upstream's answer
// comes back translated, and the next turn (carrying those ids in tool results) goes out again.
import { describe, expect, it } from 'vitest';
import { anthropicToChat, chatToAnthropic, responsesToAnthropic, responsesToChat } from '../../../src/main/engine/codecs';
import { anthropicSdkStream, chatSdkStream, ctx, responsesSdkStream, translateStream } from './support';

/** A small deterministic generator, so a failing case can be replayed. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-';
function anthropicId(r: () => number): string {
  let s = 'toolu_';
  for (let i = 0; i < 24; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)];
  return s;
}
/** Chat ids come in every shape: OpenAI `call_…`, Mistral's 9 characters, Kimi `functions.name:0`. */
function chatId(r: () => number, i: number): string {
  const kind = Math.floor(r() * 3);
  if (kind === 0) return `call_${anthropicId(r).slice(6)}`;
  if (kind === 1) return anthropicId(r).slice(6, 15);
  return `functions.tool_${i}:${Math.floor(r() * 10)}`;
}

const chatSse = (calls: { id: string; name: string; args: string }[]) =>
  [
    { choices: [{ index: 0, delta: { role: 'assistant', content: null } }] },
    ...calls.flatMap((c, i) => [
      { choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: c.args } }] } }] },
    ]),
    { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
  ]
    .map((c) => `data: ${JSON.stringify({ id: 'chatcmpl-rt', object: 'chat.completion.chunk', created: 1, model: 'm', ...c })}\n\n`)
    .join('') + 'data: [DONE]\n\n';

describe('round trip: Anthropic client, Chat upstream', () => {
  it('anthropic → chat keeps tool_use ids on the calls and on their results (200 random cases)', () => {
    const r = rng(11);
    for (let n = 0; n < 200; n++) {
      const ids = Array.from({ length: 1 + Math.floor(r() * 4) }, () => anthropicId(r));
      const out = anthropicToChat.request(
        {
          model: 'x',
          max_tokens: 100,
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: ids.map((id, i) => ({ type: 'tool_use', id, name: `t${i}`, input: { i } })) },
            { role: 'user', content: ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: `result ${id}` })) },
          ],
        },
        { model: 'm', stream: false },
      ).body as any;
      const assistant = out.messages.find((m: any) => m.role === 'assistant');
      expect(assistant.tool_calls.map((t: any) => t.id)).toEqual(ids);
      expect(out.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual(ids);
    }
  });

  it('chat answer → anthropic client → next turn → chat: the ids the upstream made come back to it (200 random cases)', async () => {
    const r = rng(7);
    for (let n = 0; n < 200; n++) {
      const calls = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, i) => ({ id: chatId(r, i), name: `tool_${i}`, args: JSON.stringify({ n, i }) }));
      const { out } = translateStream(anthropicToChat, ctx(), chatSse(calls), n % 2 ? 'whole' : 5);
      const { message } = await anthropicSdkStream(out);
      const uses = message.content.filter((b) => b.type === 'tool_use') as any[];
      expect(uses.map((u) => u.name)).toEqual(calls.map((c) => c.name));
      expect(uses.map((u) => u.input)).toEqual(calls.map((c) => JSON.parse(c.args)));
      for (const u of uses) expect(u.id).toMatch(/^[a-zA-Z0-9_-]+$/);
      // Valid ids pass unchanged; others are mapped the same way every time.
      calls.forEach((c, i) => {
        if (/^[a-zA-Z0-9_-]+$/.test(c.id)) expect(uses[i].id).toBe(c.id);
      });
      const next = anthropicToChat.request(
        {
          model: 'x',
          max_tokens: 100,
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: message.content },
            { role: 'user', content: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: 'ok' })) },
          ],
        },
        { model: 'm', stream: false },
      ).body as any;
      const sent = next.messages.find((m: any) => m.role === 'assistant').tool_calls.map((t: any) => t.id);
      expect(sent).toEqual(uses.map((u) => u.id));
      expect(next.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual(sent);
    }
  });

  it('a two-turn tool loop through the translation keeps every id and ends in text', async () => {
    const history: any[] = [{ role: 'user', content: 'Weather in Oslo, then Rome?' }];
    const turns = [
      chatSse([{ id: 'call_oslo', name: 'weather', args: '{"city":"Oslo"}' }]),
      chatSse([{ id: 'call_rome', name: 'weather', args: '{"city":"Rome"}' }]),
      'data: {"id":"c3","choices":[{"index":0,"delta":{"content":"Oslo 3C, Rome 18C."},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n',
    ];
    const sentToUpstream: any[] = [];
    for (const upstream of turns) {
      sentToUpstream.push(anthropicToChat.request({ model: 'x', max_tokens: 100, messages: history, tools: [{ name: 'weather', input_schema: { type: 'object' } }] }, { model: 'm', stream: true }).body);
      const { message } = await anthropicSdkStream(translateStream(anthropicToChat, ctx(), upstream).out);
      history.push({ role: 'assistant', content: message.content });
      const use = message.content.find((b) => b.type === 'tool_use') as any;
      if (!use) break;
      history.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: use.input.city === 'Oslo' ? '3C' : '18C' }] });
    }
    expect(history.at(-1).content).toEqual([{ type: 'text', text: 'Oslo 3C, Rome 18C.' }]);
    const last = sentToUpstream.at(-1).messages;
    expect(last.filter((m: any) => m.role === 'assistant').map((m: any) => m.tool_calls[0].id)).toEqual(['call_oslo', 'call_rome']);
    expect(last.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, m.content])).toEqual([
      ['call_oslo', '3C'],
      ['call_rome', '18C'],
    ]);
  });
});

describe('round trip: Chat client, Anthropic upstream', () => {
  it('tool_use ids reach the Chat client as tool_calls ids and go back as tool_use_id', async () => {
    const sse = [
      { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_01XyZ', name: 'weather', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ]
      .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('');
    const c = await chatSdkStream(translateStream(chatToAnthropic, ctx(), sse).out);
    const msg = c.choices[0]!.message;
    const next = chatToAnthropic.request(
      {
        model: 'x',
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: msg.content, tool_calls: msg.tool_calls },
          { role: 'tool', tool_call_id: msg.tool_calls![0]!.id, content: '3C' },
        ],
      },
      { model: 'claude-sonnet-4-5', stream: false },
    ).body as any;
    expect(next.messages[1].content).toEqual([{ type: 'tool_use', id: 'toolu_01XyZ', name: 'weather', input: { city: 'Oslo' } }]);
    expect(next.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_01XyZ', content: '3C' }]);
  });
});

describe('round trip: Responses client', () => {
  it('Chat call ids become call_ids and come back as function_call_output.call_id', async () => {
    const { response } = await responsesSdkStream(translateStream(responsesToChat, ctx(), chatSse([{ id: 'call_a1', name: 'shell', args: '{"command":["ls"]}' }])).out);
    const call = response.output.find((o: any) => o.type === 'function_call') as any;
    const next = responsesToChat.request(
      { model: 'x', input: [{ role: 'user', content: 'ls' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'a b' }] },
      { model: 'm', stream: false },
    ).body as any;
    expect(next.messages[1].tool_calls[0].id).toBe('call_a1');
    expect(next.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_a1', content: 'a b' });
  });

  it('Anthropic thinking + tool call → Responses → next turn → Anthropic keeps the signed thinking, so thinking stays on', async () => {
    const sse = [
      { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude', content: [], usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Run ls.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'SIG123' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_ls', name: 'shell', input: {} } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"command":["ls"]}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
      { type: 'message_stop' },
    ]
      .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('');
    const request = { model: 'x', input: 'ls please', reasoning: { effort: 'high' }, include: ['reasoning.encrypted_content'] };
    const { response } = await responsesSdkStream(translateStream(responsesToAnthropic, ctx(request), sse).out);
    const next = responsesToAnthropic.request(
      {
        ...request,
        input: [{ role: 'user', content: 'ls please' }, ...response.output, { type: 'function_call_output', call_id: 'toolu_ls', output: 'README.md' }],
      },
      { model: 'claude-sonnet-4-5', stream: true },
    );
    const body = next.body as any;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 24576 });
    expect(body.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'Run ls.', signature: 'SIG123' },
      { type: 'tool_use', id: 'toolu_ls', name: 'shell', input: { command: ['ls'] } },
    ]);
    expect(body.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_ls', content: 'README.md' }]);
    expect(next.dropped).toEqual([]);
  });
});
