// Codex CLI's default request (its function tools, the multi_agent_v1 namespace of five function
// tools, the hosted web_search) through a Chat connection and an Anthropic connection, with the
// real openai client's Responses API, streamed and not: the namespace's tools are offered under
// flat names, a call of one comes back as `name` + `namespace` (what Codex routes by), web_search
// is left out with a request-log note and the x-switchyard-dropped-tools header, and a second turn
// replaying the namespaced call and its output reaches the upstream as the same flat-named call.
import type OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { anthropicStream, anthropicToolMessage, anthropicToolStream, openaiCompletion, openaiStream, openaiToolCompletion, openaiToolStream } from '../../support/fakeUpstream';
import { codexBody, codexHeaders } from '../../support/codexRequest';
import { translationSuite } from './support';

const FLAT_NAMES = [
  'exec_command',
  'write_stdin',
  'update_plan',
  'view_image',
  'multi_agent_v1__spawn_agent',
  'multi_agent_v1__send_input',
  'multi_agent_v1__resume_agent',
  'multi_agent_v1__wait_agent',
  'multi_agent_v1__close_agent',
];

const CALLS = [
  { id: 'call_exec1', name: 'exec_command', arguments: { cmd: 'ls' } },
  { id: 'call_spawn1', name: 'multi_agent_v1__spawn_agent', arguments: { message: 'count the files' } },
];

type Output = OpenAI.Responses.ResponseOutputItem & Record<string, unknown>;

async function finalOf(stream: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>): Promise<{ response: OpenAI.Responses.Response; added: Record<string, unknown>[] }> {
  let response: OpenAI.Responses.Response | null = null;
  const added: Record<string, unknown>[] = [];
  for await (const ev of stream) {
    if (ev.type === 'response.output_item.added') added.push(ev.item as unknown as Record<string, unknown>);
    if (ev.type === 'response.completed') response = ev.response;
  }
  if (!response) throw new Error('no response.completed');
  return { response, added };
}

const upstreamToolNames = (body: any, shape: 'chat' | 'anthropic'): string[] =>
  (body.tools as any[]).map((t) => (shape === 'chat' ? t.function.name : t.name));

describe('Codex CLI default tools on connections without the Responses API', () => {
  const s = translationSuite();
  beforeAll(async () => {
    await s.t.addConnection({ name: 'Compat', kind: 'openai-compatible', provider: 'compat', baseUrl: s.fake.openaiUrl, secret: 'sk-compat-upstream-1' });
    await s.t.addConnection({ name: 'Claude', kind: 'anthropic', provider: 'anth', baseUrl: s.fake.anthropicUrl, secret: 'sk-ant-codex-1' });
  });

  const cases = [
    { label: 'Chat, streamed', model: 'compat/qwen-coder', shape: 'chat' as const, stream: true },
    { label: 'Chat, JSON', model: 'compat/qwen-coder', shape: 'chat' as const, stream: false },
    { label: 'Anthropic, streamed', model: 'anth/claude-sonnet-4-5', shape: 'anthropic' as const, stream: true },
    { label: 'Anthropic, JSON', model: 'anth/claude-sonnet-4-5', shape: 'anthropic' as const, stream: false },
  ];

  it.each(cases)('$label: a two-turn tool loop with a namespaced call and a shell call', async ({ model, shape, stream }) => {
    const bare = model.slice(model.indexOf('/') + 1);
    const path = shape === 'chat' ? '/v1/chat/completions' : '/v1/messages';
    const first =
      shape === 'chat'
        ? stream
          ? { chunks: openaiToolStream(bare, CALLS) }
          : { json: openaiToolCompletion(bare, CALLS) }
        : stream
          ? { chunks: anthropicToolStream(bare, CALLS) }
          : { json: anthropicToolMessage(bare, CALLS) };
    const second =
      shape === 'chat'
        ? stream
          ? { chunks: openaiStream(bare, ['Done: ', '3 files.']) }
          : { json: openaiCompletion(bare, 'Done: 3 files.') }
        : stream
          ? { chunks: anthropicStream(bare, ['Done: ', '3 files.']) }
          : { json: { ...anthropicToolMessage(bare, []), content: [{ type: 'text', text: 'Done: 3 files.' }], stop_reason: 'end_turn' } };
    s.fake.script({ path }, [first, second]);

    const session = `019a-codex-${shape}-${stream}`;
    const user = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'How many files are here?' }] };
    const body1 = codexBody(model, [user], session, stream) as any;
    const { data: d1, response: r1 } = await s.openai.responses.create(body1, { headers: codexHeaders(session) }).withResponse();
    expect(r1.status).toBe(200);
    expect(r1.headers.get('x-switchyard-dropped-tools')).toBe('web_search');

    let output: Output[];
    if (stream) {
      const { response, added } = await finalOf(d1 as unknown as AsyncIterable<OpenAI.Responses.ResponseStreamEvent>);
      output = response.output as Output[];
      // The item announced when the call starts already carries the pair Codex routes by.
      expect(added.filter((i) => i.type === 'function_call').map((i) => [i.name, i.namespace])).toEqual([
        ['exec_command', undefined],
        ['spawn_agent', 'multi_agent_v1'],
      ]);
    } else output = (d1 as unknown as OpenAI.Responses.Response).output as Output[];
    const calls = output.filter((o) => o.type === 'function_call');
    expect(calls).toEqual([
      expect.objectContaining({ call_id: 'call_exec1', name: 'exec_command', arguments: '{"cmd":"ls"}' }),
      expect.objectContaining({ call_id: 'call_spawn1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"message":"count the files"}' }),
    ]);
    expect(calls[0]).not.toHaveProperty('namespace');

    const up1 = s.fake.requests.at(-1)!;
    expect(up1.path).toBe(path);
    expect(upstreamToolNames(up1.body, shape)).toEqual(FLAT_NAMES);
    const entry = await s.logOf(model);
    expect(entry.attempts[0]!.dropped).toContain('tools[5]: the "web_search" tool runs only on OpenAI; left out for this target');

    // Turn 2: Codex replays the calls (with `namespace`) and their outputs.
    const replay = calls.map(({ id: _id, status: _status, ...rest }) => rest);
    const input2 = [
      user,
      ...replay,
      { type: 'function_call_output', call_id: 'call_exec1', output: 'a.txt\nb.txt\nc.txt' },
      { type: 'function_call_output', call_id: 'call_spawn1', output: [{ type: 'input_text', text: 'agent spawned' }] },
    ];
    const { data: d2 } = await s.openai.responses.create(codexBody(model, input2, session, stream) as any, { headers: codexHeaders(session) }).withResponse();
    const final = stream ? (await finalOf(d2 as unknown as AsyncIterable<OpenAI.Responses.ResponseStreamEvent>)).response : (d2 as unknown as OpenAI.Responses.Response);
    const text = (final.output as Output[]).flatMap((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('');
    expect(text).toBe('Done: 3 files.');

    const up2 = s.fake.requests.at(-1)!.body as any;
    if (shape === 'chat') {
      const assistant = up2.messages.find((m: any) => m.role === 'assistant');
      expect(assistant.tool_calls.map((c: any) => [c.id, c.function.name])).toEqual([
        ['call_exec1', 'exec_command'],
        ['call_spawn1', 'multi_agent_v1__spawn_agent'],
      ]);
      expect(up2.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual(['call_exec1', 'call_spawn1']);
    } else {
      const assistant = up2.messages.find((m: any) => m.role === 'assistant');
      expect(assistant.content.filter((b: any) => b.type === 'tool_use').map((b: any) => [b.id, b.name])).toEqual([
        ['call_exec1', 'exec_command'],
        ['call_spawn1', 'multi_agent_v1__spawn_agent'],
      ]);
      const results = up2.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content.filter((b: any) => b.type === 'tool_result') : []));
      expect(results.map((b: any) => b.tool_use_id)).toEqual(['call_exec1', 'call_spawn1']);
    }
  });

  it('refuses, naming the hosted tools, only when every tool offered is hosted', async () => {
    const err = await s.openai.responses
      .create({ model: 'compat/qwen-coder', input: 'search the web', tools: [{ type: 'web_search' }, { type: 'file_search', vector_store_ids: ['vs_1'] }] } as any)
      .catch((e: unknown) => e as { status: number; param: string; message: string });
    expect(err).toMatchObject({ status: 400, param: 'tools' });
    expect((err as { message: string }).message).toContain('web_search, file_search');
  });
});
