// Flat names for namespaced Responses tools: within the target's name rules, unique among the
// request's tools, stable across turns, and mapped back to the exact (namespace, tool) pair; and
// provider-hosted tools left out of a translated request rather than refusing it.
import { describe, expect, it } from 'vitest';
import { anthropicToChat, responsesToAnthropic, responsesToChat } from '../../../src/main/engine/codecs';
import { responsesCallName, toolNameMap } from '../../../src/main/engine/codecs/toolNames';
import { writeResponse } from '../../../src/main/engine/codecs/responsesResponse';
import { CODEX_DEFAULT_TOOLS } from '../../support/codexRequest';
import { ctx } from './support';

const NAME_RULE = /^[a-zA-Z0-9_-]{1,64}$/;
const fn = (name: string) => ({ type: 'function', name, parameters: { type: 'object', properties: {} } });
const ns = (name: string, ...tools: string[]) => ({ type: 'namespace', name, tools: tools.map(fn) });

describe('flat names for namespaced tools', () => {
  it('uses <namespace>__<tool> when it fits and maps each back to its pair', () => {
    const map = toolNameMap(CODEX_DEFAULT_TOOLS)!;
    expect([...map.byFlat.keys()]).toEqual(['spawn_agent', 'send_input', 'resume_agent', 'wait_agent', 'close_agent'].map((n) => `multi_agent_v1__${n}`));
    expect(responsesCallName(map, 'multi_agent_v1__wait_agent')).toEqual({ name: 'wait_agent', namespace: 'multi_agent_v1' });
    expect(responsesCallName(map, 'exec_command')).toEqual({ name: 'exec_command' });
    expect(toolNameMap([fn('a'), { type: 'web_search' }])).toBeNull();
  });

  it('keeps names within the Chat and Anthropic rule and free of collisions, the same on every turn', () => {
    const long = 'mcp__a_server_with_a_rather_long_name_for_its_namespace';
    const tools = [
      fn('mcp__files__read'), // a plain tool already holding the preferred flat name of the pair below
      ns('mcp__files', 'read', 'write'),
      ns('mcp.odd name!', 'do it'),
      ns(long, 'search_everything_in_the_index', 'search_everything_in_the_indey'),
    ];
    const map = toolNameMap(tools)!;
    const flat = [...map.byFlat.keys()];
    for (const n of flat) expect(n).toMatch(NAME_RULE);
    expect(new Set([...flat, 'mcp__files__read']).size).toBe(flat.length + 1);
    expect(map.byFlat.get('mcp__files__write')).toEqual({ namespace: 'mcp__files', name: 'write' });
    const readFlat = map.flatName('mcp__files', 'read');
    expect(readFlat).not.toBe('mcp__files__read');
    expect(map.byFlat.get(readFlat)).toEqual({ namespace: 'mcp__files', name: 'read' });
    expect(map.byFlat.get(map.flatName('mcp.odd name!', 'do it'))).toEqual({ namespace: 'mcp.odd name!', name: 'do it' });
    const a = map.flatName(long, 'search_everything_in_the_index');
    const b = map.flatName(long, 'search_everything_in_the_indey');
    expect(a).not.toBe(b);
    expect(toolNameMap(tools)!.flatName(long, 'search_everything_in_the_index')).toBe(a);

    // The upstream request offers exactly these names, and an answer's call of one comes back as the pair.
    const out = responsesToChat.request({ model: 'x', input: 'hi', tools }, { model: 'm', stream: false });
    expect((out.body.tools as any[]).map((t) => t.function.name)).toEqual(['mcp__files__read', ...flat]);
    const r = writeResponse(
      { id: 'x', model: 'm', content: [{ type: 'tool_call', id: 'c1', name: readFlat, arguments: '{}' }], stop: 'tool_use', stopSequence: null, usage: { input: 1, output: 1, cachedInput: null, cacheWrite: null, reasoning: null } },
      ctx({ tools }),
    );
    expect((r.output as any[])[0]).toMatchObject({ type: 'function_call', call_id: 'c1', name: 'read', namespace: 'mcp__files' });
  });

  it('reads a replayed namespaced call, and a namespaced tool_choice, to the flat name', () => {
    const out = responsesToAnthropic.request(
      {
        model: 'x',
        tools: CODEX_DEFAULT_TOOLS,
        tool_choice: { type: 'function', name: 'wait_agent', namespace: 'multi_agent_v1' },
        input: [
          { role: 'user', content: 'go' },
          { type: 'function_call', call_id: 'c1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        ],
      },
      { model: 'claude-sonnet-4-5', stream: false },
    );
    const body = out.body as any;
    expect(body.messages[1].content[0]).toMatchObject({ type: 'tool_use', id: 'c1', name: 'multi_agent_v1__spawn_agent' });
    expect(body.tool_choice).toMatchObject({ type: 'tool', name: 'multi_agent_v1__wait_agent' });
    expect(out.droppedTools).toEqual(['web_search']);
  });
});

describe('provider-hosted tools are left out, not refused', () => {
  it('OpenAI-hosted tools beside function tools', () => {
    const out = responsesToChat.request(
      { model: 'x', input: 'hi', tools: [fn('a'), { type: 'web_search', external_web_access: true }, { type: 'image_generation' }, { type: 'web_search' }] },
      { model: 'm', stream: false },
    );
    expect((out.body.tools as any[]).map((t) => t.function.name)).toEqual(['a']);
    expect(out.droppedTools).toEqual(['web_search', 'image_generation']);
    expect(out.dropped).toEqual([
      'tools[1]: the "web_search" tool runs only on OpenAI; left out for this target',
      'tools[2]: the "image_generation" tool runs only on OpenAI; left out for this target',
      'tools[3]: the "web_search" tool runs only on OpenAI; left out for this target',
    ]);
  });

  it('an earlier web search call in the conversation is left out, the answer after it kept', () => {
    const out = responsesToChat.request(
      {
        model: 'x',
        tools: CODEX_DEFAULT_TOOLS,
        input: [
          { role: 'user', content: 'news?' },
          { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'news' } },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Here is the news.' }] },
          { role: 'user', content: 'thanks' },
        ],
      },
      { model: 'm', stream: false },
    );
    expect((out.body.messages as any[]).map((m) => [m.role, m.content])).toEqual([
      ['user', 'news?'],
      ['assistant', 'Here is the news.'],
      ['user', 'thanks'],
    ]);
    expect(out.dropped).toContain('input[1]: an OpenAI web search call from earlier in the conversation; its answer is kept');
  });

  it('Anthropic server tools beside custom tools, sent to a Chat target', () => {
    const out = anthropicToChat.request(
      {
        model: 'x',
        max_tokens: 5,
        tools: [{ name: 'Bash', input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search' }, { type: 'code_execution_20250825', name: 'code_execution' }],
        messages: [{ role: 'user', content: 'hi' }],
      },
      { model: 'm', stream: false },
    );
    expect((out.body.tools as any[]).map((t) => t.function.name)).toEqual(['Bash']);
    expect(out.droppedTools).toEqual(['web_search_20250305', 'code_execution_20250825']);
    expect(out.dropped[0]).toBe('tools[1]: the "web_search_20250305" tool runs only on Anthropic; left out for this target');
  });
});
