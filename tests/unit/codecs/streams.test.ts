// Translated streams: every upstream transcript (tests/fixtures/codecs/upstream, written from the
// providers' streaming references) through each pair, checked three ways: the golden output
// (tests/fixtures/codecs/golden), the same output whatever the chunking (one byte at a time
// included), and the real SDK's stream accumulator reading it back.
import { describe, expect, it } from 'vitest';
import { anthropicToChat, chatToAnthropic, responsesToAnthropic, responsesToChat, type Codec } from '../../../src/main/engine/codecs';
import { FrameReader } from '../../../src/main/engine/streams/frames';
import {
  anthropicSdkStream,
  chatSdkStream,
  ctx,
  fixture,
  responsesSdkStream,
  sseEvents,
  translateStream,
} from './support';

const ENCRYPTED = { include: ['reasoning.encrypted_content'] };
const USAGE = { stream_options: { include_usage: true } };

const scenarios: [string, string, Codec, Record<string, unknown>][] = [
  ['anthropic-from-chat', 'chat-text', anthropicToChat, {}],
  ['anthropic-from-chat', 'chat-tools-parallel', anthropicToChat, {}],
  ['anthropic-from-chat', 'chat-reasoning', anthropicToChat, {}],
  ['anthropic-from-chat', 'chat-empty-deltas', anthropicToChat, {}],
  ['anthropic-from-chat', 'chat-same-index-calls', anthropicToChat, {}],
  ['anthropic-from-chat', 'chat-unicode', anthropicToChat, {}],
  ['anthropic-from-chat', 'chat-no-done', anthropicToChat, {}],
  ['anthropic-from-chat', 'chat-error', anthropicToChat, {}],
  ['anthropic-from-chat', 'chat-truncated', anthropicToChat, {}],
  ['chat-from-anthropic', 'anthropic-text', chatToAnthropic, USAGE],
  ['chat-from-anthropic', 'anthropic-tools', chatToAnthropic, USAGE],
  ['chat-from-anthropic', 'anthropic-thinking', chatToAnthropic, USAGE],
  ['chat-from-anthropic', 'anthropic-redacted', chatToAnthropic, {}],
  ['chat-from-anthropic', 'anthropic-max-tokens', chatToAnthropic, USAGE],
  ['chat-from-anthropic', 'anthropic-unicode', chatToAnthropic, {}],
  ['chat-from-anthropic', 'anthropic-error', chatToAnthropic, USAGE],
  ['chat-from-anthropic', 'anthropic-truncated', chatToAnthropic, USAGE],
  ['responses-from-chat', 'chat-text', responsesToChat, {}],
  ['responses-from-chat', 'chat-tools-parallel', responsesToChat, {}],
  ['responses-from-chat', 'chat-reasoning', responsesToChat, ENCRYPTED],
  ['responses-from-chat', 'chat-empty-deltas', responsesToChat, {}],
  ['responses-from-chat', 'chat-same-index-calls', responsesToChat, {}],
  ['responses-from-chat', 'chat-error', responsesToChat, {}],
  ['responses-from-chat', 'chat-truncated', responsesToChat, {}],
  ['responses-from-anthropic', 'anthropic-tools', responsesToAnthropic, {}],
  ['responses-from-anthropic', 'anthropic-thinking', responsesToAnthropic, ENCRYPTED],
  ['responses-from-anthropic', 'anthropic-redacted', responsesToAnthropic, ENCRYPTED],
  ['responses-from-anthropic', 'anthropic-max-tokens', responsesToAnthropic, {}],
  ['responses-from-anthropic', 'anthropic-unicode', responsesToAnthropic, {}],
  ['responses-from-anthropic', 'anthropic-error', responsesToAnthropic, {}],
  ['responses-from-anthropic', 'anthropic-truncated', responsesToAnthropic, {}],
];

describe('golden translated streams', () => {
  it.each(scenarios)('%s: %s', async (dir, name, codec, request) => {
    const upstream = fixture(`upstream/${name}.sse`);
    const whole = translateStream(codec, ctx(request), upstream, 'whole');
    await expect(whole.out).toMatchFileSnapshot(`../../fixtures/codecs/golden/${dir}/${name}.sse`);
    // Chunking never changes the translation: not byte by byte, not 7 bytes at a time.
    expect(translateStream(codec, ctx(request), upstream, 'bytes').out).toBe(whole.out);
    expect(translateStream(codec, ctx(request), upstream, 7).out).toBe(whole.out);
  });
});

describe('Anthropic clients served by a Chat upstream (read back by the Anthropic SDK MessageStream)', () => {
  const run = (name: string) => translateStream(anthropicToChat, ctx(), fixture(`upstream/${name}.sse`));

  it('text: one text block, end_turn, usage with cached tokens split out', async () => {
    const { out, end, usage } = run('chat-text');
    expect(end).toEqual({ text: expect.any(String), truncated: false, outcome: 'complete' });
    const { message, events } = await anthropicSdkStream(out);
    expect(message.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 15, cache_read_input_tokens: 4, output_tokens: 10 });
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(usage).toEqual({ inputTokens: 19, outputTokens: 10, cacheReadTokens: 4, cacheWriteTokens: null });
  });

  it('parallel tool calls: text then two tool_use blocks with the upstream ids, stop_reason tool_use', async () => {
    const { message } = await anthropicSdkStream(run('chat-tools-parallel').out);
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me check both.' },
      { type: 'tool_use', id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', input: { location: 'Paris, France' } },
      { type: 'tool_use', id: 'call_9pD3xa9XTPNJ32zg2hcADdmO', name: 'get_time', input: { tz: 'Europe/Paris' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('indexes are consecutive and every started block stops before message_delta', () => {
    const events = sseEvents(run('chat-tools-parallel').out);
    const starts = events.filter((e) => e.event === 'content_block_start').map((e) => e.data.index);
    const stops = events.filter((e) => e.event === 'content_block_stop').map((e) => e.data.index);
    expect(starts).toEqual([0, 1, 2]);
    expect(stops).toEqual([0, 1, 2]);
    const names = events.map((e) => e.event);
    expect(names.indexOf('message_delta')).toBeGreaterThan(names.lastIndexOf('content_block_stop'));
  });

  it('Chat reasoning_content becomes a thinking block before the text', async () => {
    const { message } = await anthropicSdkStream(run('chat-reasoning').out);
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect((message.content[0] as any).thinking).toBe('The user greets me. I should reply briefly.');
    expect((message.content[1] as any).text).toBe('Hi there.');
  });

  it('empty deltas open no blocks, a malformed chunk is skipped, heartbeats become pings (a comment before message_start)', async () => {
    const { out } = run('chat-empty-deltas');
    const { message } = await anthropicSdkStream(out);
    expect(message.content).toEqual([{ type: 'text', text: 'Ok' }]);
    expect(out.startsWith(': keepalive\n\nevent: message_start\n')).toBe(true);
    expect(sseEvents(out).filter((e) => e.event === 'ping')).toHaveLength(1);
  });

  it('calls that share index 0 but carry new ids are separate calls; stop becomes tool_use', async () => {
    const { message } = await anthropicSdkStream(run('chat-same-index-calls').out);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'function-call-1', name: 'get_weather', input: { city: 'Oslo' } },
      { type: 'tool_use', id: 'function-call-2', name: 'get_weather', input: { city: 'Rome' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('unicode split across chunks arrives intact', async () => {
    const { message } = await anthropicSdkStream(translateStream(anthropicToChat, ctx(), fixture('upstream/chat-unicode.sse'), 'bytes').out);
    expect(message.content).toEqual([{ type: 'text', text: 'héllo 🎉 世界 — ✓' }]);
  });

  it('a finish_reason without [DONE] is a complete answer', () => {
    expect(run('chat-no-done').end.outcome).toBe('complete');
  });

  it('an in-band error chunk becomes an Anthropic error event the SDK throws, never assistant text', async () => {
    const { out, end } = run('chat-error');
    expect(end.outcome).toBe('error');
    const err = await anthropicSdkStream(out).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String(err.message)).toMatch(/Rate limit reached/);
    expect(sseEvents(out).at(-1)).toEqual({ event: 'error', data: { type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached for requests' } } });
  });

  it('a stream without its terminal event is truncated (no message_stop); fail() ends it with an error event', async () => {
    const r = run('chat-truncated');
    expect(r.end).toEqual({ text: '', truncated: true, outcome: 'truncated' });
    expect(r.out).not.toContain('message_stop');
    const reader = new FrameReader('openai-chat');
    const t = anthropicToChat.response(ctx());
    let out = '';
    for (const f of reader.push(fixture('upstream/chat-truncated.sse')).frames) out += t.frame(f);
    expect(t.end().truncated).toBe(true);
    out += t.fail({ status: 502, message: 'upstream stream ended early' });
    const err = await anthropicSdkStream(out).catch((e) => e);
    expect(String(err.message)).toMatch(/ended early/);
    expect(t.fail({ status: 502, message: 'again' })).toBe('');
  });
});

describe('Chat clients served by an Anthropic upstream (read back by the openai SDK ChatCompletionStream)', () => {
  const run = (name: string, request: Record<string, unknown> = USAGE) => translateStream(chatToAnthropic, ctx(request), fixture(`upstream/${name}.sse`));

  it('text with usage in the final chunk when the client asked for it', async () => {
    const { out } = run('anthropic-text');
    const c = await chatSdkStream(out);
    expect(c.choices[0]!.message.content).toBe('Hello!');
    expect(c.choices[0]!.finish_reason).toBe('stop');
    expect(c.usage).toMatchObject({ prompt_tokens: 25, completion_tokens: 15, total_tokens: 40 });
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('no usage chunk when the client did not ask for one', () => {
    const { out } = run('anthropic-text', {});
    expect(sseEvents(out).some((e) => Array.isArray(e.data?.choices) && e.data.choices.length === 0)).toBe(false);
  });

  it('text and two parallel tool calls with the Anthropic ids, finish_reason tool_calls, cached prompt tokens', async () => {
    const c = await chatSdkStream(run('anthropic-tools').out);
    const m = c.choices[0]!.message;
    expect(m.content).toBe("Okay, let's check the weather in both cities.");
    expect(m.tool_calls?.map((t: any) => [t.id, t.function.name, JSON.parse(t.function.arguments)])).toEqual([
      ['toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'get_weather', { location: 'San Francisco, CA' }],
      ['toolu_01Hq8LV9Ntwr9uRt3cG5VfZT', 'get_weather', { location: 'Paris, France' }],
    ]);
    expect(c.choices[0]!.finish_reason).toBe('tool_calls');
    expect(c.usage).toMatchObject({ prompt_tokens: 572, prompt_tokens_details: { cached_tokens: 100 } });
  });

  it('thinking arrives as reasoning_content deltas (empty ones included) and the signature is not forwarded', () => {
    const { out } = run('anthropic-thinking');
    const reasoning = sseEvents(out)
      .map((e) => e.data?.choices?.[0]?.delta?.reasoning_content)
      .filter((r) => r !== undefined);
    expect(reasoning.join('')).toBe('I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0');
    expect(reasoning).toContain('');
    expect(out).not.toContain('EqQBCgIYAhIM');
  });

  it('max_tokens becomes finish_reason length', async () => {
    const c = await chatSdkStream(run('anthropic-max-tokens').out);
    expect(c.choices[0]!.finish_reason).toBe('length');
    expect(c.choices[0]!.message.content).toBe('Once upon a time, there');
  });

  it('an overloaded error event becomes an OpenAI error chunk the SDK throws', async () => {
    const { out, end } = run('anthropic-error');
    expect(end.outcome).toBe('error');
    const err = await chatSdkStream(out).catch((e) => e);
    expect(String(err.message)).toMatch(/Overloaded/);
    expect(sseEvents(out).at(-1)!.data).toEqual({ error: { message: 'Overloaded', type: 'service_unavailable', param: null, code: 'server_is_overloaded' } });
  });

  it('a stream cut before message_stop is truncated, and the SDK refuses the unfinished answer', async () => {
    const { out, end } = run('anthropic-truncated');
    expect(end.truncated).toBe(true);
    expect(out).not.toContain('[DONE]');
    await expect(chatSdkStream(out)).rejects.toThrow(/finish_reason/);
  });

  it('redacted thinking is not shown to a Chat client', async () => {
    const c = await chatSdkStream(run('anthropic-redacted', {}).out);
    expect(c.choices[0]!.message.content).toBe('Done.');
    expect(JSON.stringify(c)).not.toContain('EmwKAhgB');
  });
});

describe('Responses clients (read back by the openai SDK ResponseStream)', () => {
  it('Chat text: created, in_progress, one message item, completed with usage; sequence numbers count from 0', async () => {
    const { out } = translateStream(responsesToChat, ctx(), fixture('upstream/chat-text.sse'));
    const { response, events } = await responsesSdkStream(out);
    expect(events.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(events.at(-1)).toBe('response.completed');
    expect(response.output_text).toBe('Hello!');
    expect(response.status).toBe('completed');
    expect(response.usage).toMatchObject({ input_tokens: 19, output_tokens: 10, input_tokens_details: { cached_tokens: 4 } });
    const seq = sseEvents(out).map((e) => e.data.sequence_number);
    expect(seq).toEqual(seq.map((_, i) => i));
  });

  it('Chat parallel tool calls become function_call items with the upstream call ids', async () => {
    const { response } = await responsesSdkStream(translateStream(responsesToChat, ctx(), fixture('upstream/chat-tools-parallel.sse')).out);
    expect(response.output.map((o: any) => o.type)).toEqual(['message', 'function_call', 'function_call']);
    expect(response.output.slice(1).map((o: any) => [o.call_id, o.name, JSON.parse(o.arguments)])).toEqual([
      ['call_DdmO9pD3xa9XTPNJ32zg2hcA', 'get_weather', { location: 'Paris, France' }],
      ['call_9pD3xa9XTPNJ32zg2hcADdmO', 'get_time', { tz: 'Europe/Paris' }],
    ]);
  });

  it('Chat reasoning becomes a reasoning item with a summary; without a signature there is no encrypted content', async () => {
    const { response } = await responsesSdkStream(translateStream(responsesToChat, ctx(ENCRYPTED), fixture('upstream/chat-reasoning.sse')).out);
    const [rs, msg] = response.output as any[];
    expect(rs).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'The user greets me. I should reply briefly.' }], encrypted_content: null });
    expect(msg.content[0].text).toBe('Hi there.');
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(18);
  });

  it('Anthropic thinking keeps its signature in encrypted_content when the client includes it', async () => {
    const { response } = await responsesSdkStream(translateStream(responsesToAnthropic, ctx(ENCRYPTED), fixture('upstream/anthropic-thinking.sse')).out);
    expect((response.output[0] as any).encrypted_content).toBe('swy.anthropic.thinking:EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds');
    expect(response.output_text).toBe('The greatest common divisor (GCD) of 1071 and 462 is **21**.');
  });

  it('without include, no encrypted content is sent', async () => {
    const { response } = await responsesSdkStream(translateStream(responsesToAnthropic, ctx(), fixture('upstream/anthropic-thinking.sse')).out);
    expect(response.output[0]).not.toHaveProperty('encrypted_content');
  });

  it('Anthropic parallel tool_use blocks become function_call items', async () => {
    const { response } = await responsesSdkStream(translateStream(responsesToAnthropic, ctx(), fixture('upstream/anthropic-tools.sse')).out);
    expect(response.output.map((o: any) => [o.type, o.call_id ?? null])).toEqual([
      ['message', null],
      ['function_call', 'toolu_01T1x1fJ34qAmk2tNTrN7Up6'],
      ['function_call', 'toolu_01Hq8LV9Ntwr9uRt3cG5VfZT'],
    ]);
    expect(response.usage).toMatchObject({ input_tokens: 572, input_tokens_details: { cached_tokens: 100 }, output_tokens: 89 });
  });

  it('max_tokens ends in response.incomplete with reason max_output_tokens', async () => {
    const { response, events } = await responsesSdkStream(translateStream(responsesToAnthropic, ctx(), fixture('upstream/anthropic-max-tokens.sse')).out);
    expect(events.at(-1)).toBe('response.incomplete');
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('in-band errors become response.failed with a code Codex acts on', async () => {
    const rate = translateStream(responsesToChat, ctx(), fixture('upstream/chat-error.sse'));
    expect(rate.end.outcome).toBe('error');
    const failed = sseEvents(rate.out).at(-1)!;
    expect(failed.event).toBe('response.failed');
    expect(failed.data.response.error).toEqual({ code: 'rate_limit_exceeded', message: 'Rate limit reached for requests' });
    const { response } = await responsesSdkStream(rate.out);
    expect(response.status).toBe('failed');
    const overloaded = sseEvents(translateStream(responsesToAnthropic, ctx(), fixture('upstream/anthropic-error.sse')).out).at(-1)!;
    expect(overloaded.data.response.error.code).toBe('server_is_overloaded');
  });

  it('a truncated upstream leaves the response unfinished until fail() ends it as failed', async () => {
    const r = translateStream(responsesToChat, ctx(), fixture('upstream/chat-truncated.sse'));
    expect(r.end.truncated).toBe(true);
    expect(r.out).not.toContain('response.completed');
    await expect(responsesSdkStream(r.out)).resolves.toMatchObject({ response: { status: 'in_progress' } });
  });

  it('redacted thinking rides in encrypted_content with no summary', async () => {
    const { response } = await responsesSdkStream(translateStream(responsesToAnthropic, ctx(ENCRYPTED), fixture('upstream/anthropic-redacted.sse')).out);
    expect(response.output[0]).toMatchObject({ type: 'reasoning', summary: [], encrypted_content: expect.stringMatching(/^swy\.anthropic\.redacted:EmwK/) });
  });
});
