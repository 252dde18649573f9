// Non-stream answers: an upstream JSON body (tests/fixtures/codecs/upstream/*.json, from the API
// references' examples) translated for the client, checked against its golden file and read back
// by the client's SDK.
import { describe, expect, it } from 'vitest';
import { anthropicToChat, chatToAnthropic, responsesToAnthropic, responsesToChat } from '../../../src/main/engine/codecs';
import { anthropicSdkJson, chatSdkJson, ctx, fixtureJson, responsesSdkJson } from './support';

const golden = (dir: string, name: string, body: unknown) =>
  expect(JSON.stringify(body, null, 2) + '\n').toMatchFileSnapshot(`../../fixtures/codecs/golden/${dir}/${name}.json`);

describe('Anthropic clients, Chat upstream answers', () => {
  it('parallel tool calls become tool_use blocks with the same ids and parsed input', async () => {
    const t = anthropicToChat.response(ctx());
    const body = t.json(fixtureJson('upstream/chat-completion-tools.json'));
    await golden('anthropic-from-chat', 'chat-completion-tools', body);
    const m = await anthropicSdkJson(body);
    expect(m.content).toEqual([
      { type: 'tool_use', id: 'call_abc123', name: 'get_current_weather', input: { location: 'Boston, MA' } },
      { type: 'tool_use', id: 'call_def456', name: 'get_current_weather', input: { location: 'Paris' } },
    ]);
    expect(m.stop_reason).toBe('tool_use');
    expect(m.usage).toMatchObject({ input_tokens: 82, output_tokens: 17 });
    expect(t.usage()).toEqual({ inputTokens: 82, outputTokens: 17, cacheReadTokens: 0, cacheWriteTokens: null });
  });

  it('reasoning_content becomes a thinking block; length becomes max_tokens', async () => {
    const body = anthropicToChat.response(ctx()).json(fixtureJson('upstream/chat-completion-reasoning.json'));
    await golden('anthropic-from-chat', 'chat-completion-reasoning', body);
    expect((body.content as any[]).map((b) => b.type)).toEqual(['thinking', 'text']);
    expect((body.content as any[])[1].text).toBe('9.8 is greater than 9.11.');
    const len = anthropicToChat.response(ctx()).json(fixtureJson('upstream/chat-completion-length.json'));
    expect(len.stop_reason).toBe('max_tokens');
  });
});

describe('Chat clients, Anthropic upstream answers', () => {
  it('text and tool_use become content and tool_calls; cache reads count as cached prompt tokens', async () => {
    const t = chatToAnthropic.response(ctx());
    const body = t.json(fixtureJson('upstream/anthropic-message-tools.json'));
    await golden('chat-from-anthropic', 'anthropic-message-tools', body);
    const c = await chatSdkJson(body);
    expect(c.choices[0]!.message.content).toBe("I'll check the current weather in San Francisco for you.");
    expect(c.choices[0]!.message.tool_calls).toEqual([
      { id: 'toolu_01A09q90qw90lq917835lq9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' } },
    ]);
    expect(c.choices[0]!.finish_reason).toBe('tool_calls');
    expect(c.usage).toMatchObject({ prompt_tokens: 1584, completion_tokens: 92, prompt_tokens_details: { cached_tokens: 1200 } });
    expect(c.created).toBe(1767323045);
    expect(t.usage()).toEqual({ inputTokens: 1584, outputTokens: 92, cacheReadTokens: 1200, cacheWriteTokens: 0 });
  });

  it('thinking becomes reasoning_content; redacted thinking and signatures are not shown', async () => {
    const body = chatToAnthropic.response(ctx()).json(fixtureJson('upstream/anthropic-message-thinking.json'));
    await golden('chat-from-anthropic', 'anthropic-message-thinking', body);
    const m = (body.choices as any[])[0].message;
    expect(m.reasoning_content).toBe("To approach this, let's think about what we know about prime numbers...");
    expect(m.content).toBe('Yes, there are infinitely many prime numbers such that...');
    expect(JSON.stringify(body)).not.toMatch(/zbbJhbG|EmwKAhgB/);
  });
});

describe('Responses clients', () => {
  it('Chat tool calls become function_call items; the answer echoes the request settings', async () => {
    const request = { model: 'gpt-5', input: 'x', instructions: 'Be brief.', tools: [{ type: 'function', name: 'get_current_weather', parameters: {} }], max_output_tokens: 500 };
    const body = responsesToChat.response(ctx(request)).json(fixtureJson('upstream/chat-completion-tools.json'));
    await golden('responses-from-chat', 'chat-completion-tools', body);
    const r = await responsesSdkJson(body);
    expect(r.status).toBe('completed');
    expect(r.output.map((o: any) => [o.type, o.call_id])).toEqual([
      ['function_call', 'call_abc123'],
      ['function_call', 'call_def456'],
    ]);
    expect(r).toMatchObject({ instructions: 'Be brief.', max_output_tokens: 500, model: 'gpt-4.1-2025-04-14', object: 'response' });
    expect(r.usage).toMatchObject({ input_tokens: 82, output_tokens: 17, total_tokens: 99 });
  });

  it('a length stop is an incomplete response', async () => {
    const r = await responsesSdkJson(responsesToChat.response(ctx()).json(fixtureJson('upstream/chat-completion-length.json')));
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(r.output_text).toBe('Once upon a');
  });

  it('Anthropic thinking and redacted thinking become reasoning items carrying what Anthropic needs back', async () => {
    const body = responsesToAnthropic.response(ctx({ include: ['reasoning.encrypted_content'] })).json(fixtureJson('upstream/anthropic-message-thinking.json'));
    await golden('responses-from-anthropic', 'anthropic-message-thinking', body);
    const r = await responsesSdkJson(body);
    expect(r.output.map((o: any) => o.type)).toEqual(['reasoning', 'reasoning', 'message']);
    expect((r.output[0] as any).encrypted_content).toBe('swy.anthropic.thinking:zbbJhbGciOiJFUzI1NiIsImtpZCI6ImtleS0xMjM0In0');
    expect((r.output[1] as any).encrypted_content).toBe('swy.anthropic.redacted:EmwKAhgBEgy3va3pzix/LafPsn4a');
    expect(r.output_text).toBe('Yes, there are infinitely many prime numbers such that...');
  });
});
