// The openai SDK's Responses API (Codex CLI's protocol) served by a Chat-only upstream through
// translation: a streamed two-turn tool loop whose call ids survive, a non-stream answer, and the
// connection switch that sends Responses natively where the server has /responses.
import type OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView } from '../../../src/shared/model';
import { openaiCompletion, openaiStream, openaiToolStream } from '../../support/fakeUpstream';
import { translationSuite, WEATHER_TOOL_RESPONSES } from './support';

type Event = OpenAI.Responses.ResponseStreamEvent;

async function collect(stream: AsyncIterable<Event>): Promise<{ types: string[]; done: OpenAI.Responses.Response; text: string }> {
  const types: string[] = [];
  let text = '';
  let done: OpenAI.Responses.Response | null = null;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') done = ev.response;
  }
  if (!done) throw new Error(`no response.completed in ${types.join(',')}`);
  return { types, done, text };
}

describe('Responses client on a Chat Completions upstream', () => {
  const s = translationSuite();
  let compat: ConnectionView;
  beforeAll(async () => {
    compat = await s.t.addConnection({ name: 'Compat', kind: 'openai-compatible', provider: 'compat', baseUrl: s.fake.openaiUrl, secret: 'sk-compat-upstream-1' });
  });

  it('defaults servesResponses by kind: off for OpenAI-compatible, on for OpenAI, and a kind change brings its default', async () => {
    expect(compat.servesResponses).toBe(false);
    const own = await s.t.addConnection({ name: 'Own', kind: 'openai', baseUrl: s.fake.openaiUrl, secret: 'sk-own-1', enabled: false });
    expect(own.servesResponses).toBe(true);
    expect((await s.t.api.updateConnection({ id: own.id, patch: { kind: 'local' } })).servesResponses).toBe(false);
    expect((await s.t.api.updateConnection({ id: own.id, patch: { servesResponses: true } })).servesResponses).toBe(true);
    await s.t.api.deleteConnection({ id: own.id });
  });

  it('streams a two-turn tool loop; the call ids survive the round trip', async () => {
    s.fake.script({ path: '/v1/chat/completions' }, [
      { chunks: openaiToolStream('qwen-coder', [{ id: 'call_r1', name: 'get_weather', arguments: { city: 'Oslo' } }]) },
      { chunks: openaiStream('qwen-coder', ['Oslo is ', '4°C.']) },
    ]);
    const first = await collect(
      await s.openai.responses.create({ model: 'qwen-coder', instructions: 'You are a coding agent.', input: 'Weather in Oslo?', tools: [WEATHER_TOOL_RESPONSES], stream: true }),
    );
    expect(first.types[0]).toBe('response.created');
    expect(first.types).toContain('response.function_call_arguments.delta');
    expect(first.types.at(-1)).toBe('response.completed');
    const fc = first.done.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(fc).toMatchObject({ call_id: 'call_r1', name: 'get_weather', arguments: '{"city":"Oslo"}' });
    const up1 = s.fake.requests.at(-1)!;
    expect(up1.path).toBe('/v1/chat/completions');
    expect(up1.body).toMatchObject({
      model: 'qwen-coder',
      stream: true,
      messages: [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: 'Weather in Oslo?' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
    });

    const second = await collect(
      await s.openai.responses.create({
        model: 'qwen-coder',
        input: [
          { role: 'user', content: 'Weather in Oslo?' },
          ...(first.done.output as OpenAI.Responses.ResponseInputItem[]),
          { type: 'function_call_output', call_id: 'call_r1', output: '4°C, cloudy' },
        ],
        tools: [WEATHER_TOOL_RESPONSES],
        stream: true,
      }),
    );
    expect(second.text).toBe('Oslo is 4°C.');
    expect(second.done.output_text ?? second.done.output.map((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')).join('') : '')).join('')).toBe('Oslo is 4°C.');
    const msgs = (s.fake.requests.at(-1)!.body as { messages: { role: string; tool_call_id?: string; tool_calls?: { id: string; function: { name: string } }[] }[] }).messages;
    expect(msgs.find((m) => m.role === 'assistant')!.tool_calls).toEqual([expect.objectContaining({ id: 'call_r1', function: expect.objectContaining({ name: 'get_weather' }) })]);
    expect(msgs.find((m) => m.role === 'tool')).toMatchObject({ tool_call_id: 'call_r1', content: '4°C, cloudy' });
    const e = await s.logOf('qwen-coder');
    expect(e.attempts.at(-1)).toMatchObject({ translated: 'openai-responses→openai-chat' });
  });

  it('answers a non-stream Responses request from a Chat completion', async () => {
    s.fake.script({ path: '/v1/chat/completions' }, [{ json: openaiCompletion('qwen-plain', 'Plain answer.') }]);
    const r = await s.openai.responses.create({ model: 'qwen-plain', input: 'hi' });
    expect(r.object).toBe('response');
    expect(r.output_text).toBe('Plain answer.');
    expect(r.usage).toMatchObject({ input_tokens: 9, output_tokens: 6 });
  });

  it('goes native to /responses once the connection says it serves them', async () => {
    await s.t.api.updateConnection({ id: compat.id, patch: { servesResponses: true } });
    try {
      const r = await s.openai.responses.create({ model: 'qwen-native', input: 'hi' });
      expect(r.output_text).toBe('Hello from the fake upstream.');
      expect(s.fake.requests.at(-1)!.path).toBe('/v1/responses');
      const e = await s.logOf('qwen-native');
      expect(e.attempts[0]!.translated ?? null).toBeNull();
    } finally {
      await s.t.api.updateConnection({ id: compat.id, patch: { servesResponses: false } });
    }
  });

  it('background: true is served in the foreground, translated or native, with a Warning header (R-OTH-03)', async () => {
    s.fake.script({ path: '/v1/chat/completions' }, [{ json: openaiCompletion('qwen-bg', 'Done in the foreground.') }]);
    const { data, response } = await s.openai.responses.create({ model: 'qwen-bg', input: 'hi', background: true }).withResponse();
    expect(data.status).toBe('completed');
    expect(data.output_text).toBe('Done in the foreground.');
    expect(response.headers.get('warning')).toMatch(/^299 switchyard "background mode is not supported/);
    expect(s.fake.requests.at(-1)!.body).not.toHaveProperty('background');

    // Native: the flag never reaches the upstream either, so it answers in full at once.
    await s.t.api.updateConnection({ id: compat.id, patch: { servesResponses: true } });
    try {
      const native = await s.openai.responses.create({ model: 'qwen-bg-native', input: 'hi', background: true, stream: true });
      const out = await collect(native);
      expect(out.done.status).toBe('completed');
      const up = s.fake.requests.at(-1)!;
      expect(up.path).toBe('/v1/responses');
      expect(up.body).not.toHaveProperty('background');
      expect(up.body).toMatchObject({ model: 'qwen-bg-native', input: 'hi', stream: true });
    } finally {
      await s.t.api.updateConnection({ id: compat.id, patch: { servesResponses: false } });
    }

    // A request without the flag gets no warning.
    s.fake.script({ path: '/v1/chat/completions' }, [{ json: openaiCompletion('qwen-fg', 'Plain.') }]);
    const plain = await s.openai.responses.create({ model: 'qwen-fg', input: 'hi' }).withResponse();
    expect(plain.response.headers.get('warning')).toBeNull();
  });
});
