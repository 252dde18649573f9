import { describe, expect, it } from 'vitest';
import {
  anthropicToChat,
  chatToAnthropic,
  codecFor,
  CodecError,
  responsesToAnthropic,
  responsesToChat,
  type Codec,
} from '../../../src/main/engine/codecs';
import { fixtureJson } from './support';

const PAIRS: Record<string, Codec> = {
  'anthropic-to-chat': anthropicToChat,
  'chat-to-anthropic': chatToAnthropic,
  'responses-to-chat': responsesToChat,
  'responses-to-anthropic': responsesToAnthropic,
};

describe('golden request mappings', () => {
  it.each([
    'anthropic-to-chat.claude-code',
    'chat-to-anthropic.tools',
    'responses-to-chat.codex',
    'responses-to-anthropic.codex',
  ])('%s', (name) => {
    const f = fixtureJson(`requests/${name}.json`);
    const codec = PAIRS[name.split('.')[0]!]!;
    const out = codec.request(structuredClone(f.inbound), f.options);
    expect(out.body).toEqual(f.expected);
    expect(out.dropped).toEqual(f.dropped);
  });

  it('does not modify the inbound request', () => {
    const f = fixtureJson('requests/anthropic-to-chat.claude-code.json');
    const inbound = structuredClone(f.inbound);
    anthropicToChat.request(inbound, f.options);
    expect(inbound).toEqual(f.inbound);
  });
});

describe('codecFor', () => {
  it('is null for native pairs and picks the pair otherwise', () => {
    expect(codecFor('anthropic-messages', 'anthropic-messages')).toBeNull();
    expect(codecFor('openai-chat', 'openai-chat')).toBeNull();
    expect(codecFor('anthropic-messages', 'openai-chat')).toBe(anthropicToChat);
    expect(codecFor('openai-chat', 'anthropic-messages')).toBe(chatToAnthropic);
    expect(codecFor('openai-responses', 'openai-chat')).toBe(responsesToChat);
    expect(codecFor('openai-responses', 'anthropic-messages')).toBe(responsesToAnthropic);
  });
});

const user = (content: unknown) => ({ role: 'user', content });

describe('max tokens, sampling and reasoning', () => {
  it('Anthropic targets get a max_tokens by model when the inbound sets none', () => {
    const body = (model: string) => chatToAnthropic.request({ model: 'x', messages: [user('hi')] }, { model, stream: false }).body;
    expect(body('claude-3-haiku-20240307').max_tokens).toBe(4096);
    expect(body('claude-3-5-sonnet-20241022').max_tokens).toBe(8192);
    expect(body('claude-sonnet-4-5-20250929').max_tokens).toBe(32000);
    expect(body('glm-4.6').max_tokens).toBe(8192);
    expect(chatToAnthropic.request({ model: 'x', messages: [user('hi')] }, { model: 'glm-4.6', stream: false, defaultMaxTokens: 1000 }).body.max_tokens).toBe(1000);
  });

  it('Chat targets get max_tokens, or max_completion_tokens when the connection asks for it', () => {
    const req = { model: 'x', max_tokens: 500, messages: [user('hi')] };
    expect(anthropicToChat.request(req, { model: 'gpt-4.1', stream: false }).body).toMatchObject({ max_tokens: 500 });
    const o = anthropicToChat.request(req, { model: 'o3', stream: false, chatMaxTokensField: 'max_completion_tokens' }).body;
    expect(o.max_completion_tokens).toBe(500);
    expect(o.max_tokens).toBeUndefined();
  });

  it('reasoning effort becomes a thinking budget below max_tokens on budget-style Claude models', () => {
    const b = (effort: string, max?: number) =>
      chatToAnthropic.request(
        { model: 'x', reasoning_effort: effort, ...(max ? { max_completion_tokens: max } : {}), messages: [user('hi')] },
        { model: 'claude-sonnet-4-5', stream: false },
      );
    expect(b('low').body.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(b('high').body.thinking).toEqual({ type: 'enabled', budget_tokens: 24576 });
    expect(b('high', 3000).body.thinking).toEqual({ type: 'enabled', budget_tokens: 2999 });
    const tiny = b('high', 800);
    expect(tiny.body.thinking).toBeUndefined();
    expect(tiny.dropped[0]).toMatch(/^reasoning_effort: max tokens 800 leave no room/);
    expect(b('none').body.thinking).toBeUndefined();
  });

  it('adaptive-thinking Claude models get thinking adaptive with output_config.effort; 4.7+ take no sampling parameters', () => {
    const out = chatToAnthropic.request(
      { model: 'x', reasoning_effort: 'minimal', temperature: 0, top_p: 0.9, messages: [user('hi')] },
      { model: 'claude-opus-4-7', stream: false },
    );
    expect(out.body.thinking).toEqual({ type: 'adaptive' });
    expect(out.body.output_config).toEqual({ effort: 'low' });
    expect(out.body.temperature).toBeUndefined();
    expect(out.body.top_p).toBeUndefined();
    expect(out.dropped).toEqual(['temperature: this Claude model takes no sampling parameters', 'top_p: this Claude model takes no sampling parameters']);
    const sonnet46 = chatToAnthropic.request({ model: 'x', reasoning_effort: 'xhigh', messages: [user('hi')] }, { model: 'claude-sonnet-4-6', stream: false });
    expect(sonnet46.body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'xhigh' } });
  });

  it('thinking runs with default sampling: a non-default temperature is left out and said so', () => {
    const out = chatToAnthropic.request({ model: 'x', reasoning_effort: 'low', temperature: 0.3, messages: [user('hi')] }, { model: 'claude-3-7-sonnet-latest', stream: false });
    expect(out.body.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(out.body.temperature).toBeUndefined();
    expect(out.dropped).toEqual(['temperature: Anthropic thinking runs with default sampling']);
  });

  it('Claude thinking budgets map to efforts (think 4000 → low, think hard 10000 → medium, ultrathink 31999 → high); adaptive uses output_config.effort', () => {
    const e = (thinking: unknown, extra: Record<string, unknown> = {}) =>
      anthropicToChat.request({ model: 'x', max_tokens: 64000, thinking, messages: [user('hi')], ...extra }, { model: 'm', stream: false }).body.reasoning_effort;
    expect(e({ type: 'enabled', budget_tokens: 4000 })).toBe('low');
    expect(e({ type: 'enabled', budget_tokens: 10000 })).toBe('medium');
    expect(e({ type: 'enabled', budget_tokens: 31999 })).toBe('high');
    expect(e({ type: 'adaptive' }, { output_config: { effort: 'max' } })).toBe('max');
    expect(e({ type: 'disabled' })).toBeUndefined();
    const adaptive = anthropicToChat.request({ model: 'x', max_tokens: 10, thinking: { type: 'adaptive' }, messages: [user('hi')] }, { model: 'm', stream: false });
    expect(adaptive.body.reasoning_effort).toBeUndefined();
    expect(adaptive.dropped).toEqual(['thinking: adaptive thinking without an effort leaves the target at its default reasoning']);
  });

  it('a turn that continues tool calls made without Anthropic thinking runs without thinking (Anthropic would refuse it)', () => {
    const out = chatToAnthropic.request(
      {
        model: 'x',
        reasoning_effort: 'high',
        messages: [
          user('weather?'),
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        ],
        tools: [{ type: 'function', function: { name: 'w', parameters: { type: 'object', properties: {} } } }],
      },
      { model: 'claude-sonnet-4-5', stream: true },
    );
    expect(out.body.thinking).toBeUndefined();
    expect(out.dropped[0]).toMatch(/^reasoning_effort: this turn continues tool calls made without Anthropic thinking/);
  });

  it('stream asks Chat targets for usage in the final chunk', () => {
    expect(anthropicToChat.request({ model: 'x', max_tokens: 1, stream: true, messages: [user('hi')] }, { model: 'm', stream: true }).body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    const nonStream = anthropicToChat.request({ model: 'x', max_tokens: 1, messages: [user('hi')] }, { model: 'm', stream: false }).body;
    expect(nonStream.stream).toBeUndefined();
    expect(nonStream.stream_options).toBeUndefined();
  });
});

describe('content mapping', () => {
  it('Chat data-URL images become base64 Anthropic images, http URLs stay URLs; PDFs become documents', () => {
    const out = chatToAnthropic.request(
      {
        model: 'x',
        messages: [
          user([
            { type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGR' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.gif' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0x', filename: 'spec.pdf' } },
          ]),
        ],
      },
      { model: 'claude-sonnet-4-5', stream: false },
    );
    expect((out.body.messages as any)[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'UklGR' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.gif' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'spec.pdf' },
    ]);
  });

  it('Anthropic PDF documents become Chat file parts; text documents become text', () => {
    const out = anthropicToChat.request(
      {
        model: 'x',
        max_tokens: 10,
        messages: [
          user([
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'spec.pdf' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
          ]),
        ],
      },
      { model: 'm', stream: false },
    );
    expect((out.body.messages as any)[0].content).toEqual([
      { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0x', filename: 'spec.pdf' } },
      { type: 'text', text: 'plain words' },
    ]);
  });

  it('merges system messages at any position into Anthropic system blocks and consecutive turns into one message', () => {
    const out = chatToAnthropic.request(
      { model: 'x', messages: [user('a'), { role: 'system', content: 'late rule' }, user('b'), { role: 'assistant', content: 'c  ' }] },
      { model: 'claude-sonnet-4-5', stream: false },
    );
    expect(out.body.system).toBe('late rule');
    expect(out.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      // A final assistant message is a prefill, and Anthropic refuses trailing whitespace there.
      { role: 'assistant', content: [{ type: 'text', text: 'c' }] },
    ]);
  });

  it('Anthropic tool choices map to Chat and back', () => {
    const tools = [{ name: 't', input_schema: { type: 'object' } }];
    const chat = (tool_choice: unknown) =>
      anthropicToChat.request({ model: 'x', max_tokens: 1, tools, tool_choice, messages: [user('hi')] }, { model: 'm', stream: false }).body;
    expect(chat({ type: 'any' }).tool_choice).toBe('required');
    expect(chat({ type: 'none' }).tool_choice).toBe('none');
    expect(chat({ type: 'tool', name: 't', disable_parallel_tool_use: true })).toMatchObject({
      tool_choice: { type: 'function', function: { name: 't' } },
      parallel_tool_calls: false,
    });
    const anthropic = (tool_choice: unknown, parallel?: boolean) =>
      chatToAnthropic.request(
        {
          model: 'x',
          tools: [{ type: 'function', function: { name: 't', parameters: { type: 'object' } } }],
          tool_choice,
          ...(parallel === undefined ? {} : { parallel_tool_calls: parallel }),
          messages: [user('hi')],
        },
        { model: 'claude-sonnet-4-5', stream: false },
      ).body.tool_choice;
    expect(anthropic('auto')).toEqual({ type: 'auto' });
    expect(anthropic('none')).toEqual({ type: 'none' });
    expect(anthropic({ type: 'function', function: { name: 't' } }, false)).toEqual({ type: 'tool', name: 't', disable_parallel_tool_use: true });
    expect(anthropic(undefined, false)).toEqual({ type: 'auto', disable_parallel_tool_use: true });
  });

  it('JSON schema output formats map to Chat response_format and Anthropic output_config.format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const chat = responsesToChat.request(
      { model: 'x', input: 'hi', text: { format: { type: 'json_schema', name: 'thing', schema, strict: true } } },
      { model: 'm', stream: false },
    ).body;
    expect(chat.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'thing', schema, strict: true } });
    const anthropic = chatToAnthropic.request(
      { model: 'x', response_format: { type: 'json_schema', json_schema: { name: 'thing', schema } }, messages: [user('hi')] },
      { model: 'claude-sonnet-4-5', stream: false },
    ).body;
    expect(anthropic.output_config).toEqual({ format: { type: 'json_schema', schema } });
  });

  it('Responses tool results with images reach Anthropic as tool_result content blocks', () => {
    const out = responsesToAnthropic.request(
      {
        model: 'x',
        input: [
          { type: 'function_call', call_id: 'c1', name: 'screenshot', arguments: '' },
          {
            type: 'function_call_output',
            call_id: 'c1',
            output: [
              { type: 'input_text', text: 'here' },
              { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
            ],
          },
        ],
      },
      { model: 'claude-sonnet-4-5', stream: false },
    );
    expect(out.body.messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'screenshot', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'c1',
            content: [
              { type: 'text', text: 'here' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            ],
          },
        ],
      },
    ]);
  });

  it('tool-call arguments that are not a JSON object are kept, wrapped, and said so', () => {
    const out = chatToAnthropic.request(
      {
        model: 'x',
        messages: [
          user('go'),
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"broken' } }] },
          { role: 'tool', tool_call_id: 'c', content: 'bad json' },
        ],
      },
      { model: 'claude-sonnet-4-5', stream: false },
    );
    expect((out.body.messages as any)[1].content[0].input).toEqual({ _raw_arguments: '{"broken' });
    expect(out.dropped).toEqual(['messages[1].tool_calls[0]: arguments were not a JSON object; kept as _raw_arguments']);
  });
});

describe('untranslatable requests are a 400 naming the field', () => {
  const cases: [string, Codec, Record<string, unknown>, string, RegExp][] = [
    ['top_k to Chat', anthropicToChat, { model: 'x', max_tokens: 5, top_k: 40, messages: [user('hi')] }, 'top_k', /top_k/],
    [
      'an Anthropic-defined client tool',
      anthropicToChat,
      { model: 'x', max_tokens: 5, tools: [{ name: 'ok', input_schema: { type: 'object' } }, { type: 'bash_20250124', name: 'bash' }], messages: [user('hi')] },
      'tools[1].type',
      /runs only on Anthropic/,
    ],
    [
      'only Anthropic server tools',
      anthropicToChat,
      { model: 'x', max_tokens: 5, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [user('hi')] },
      'tools',
      /every tool in this request \(web_search_20250305\)/,
    ],
    [
      'a search_result block',
      anthropicToChat,
      { model: 'x', max_tokens: 5, messages: [user('a'), { role: 'assistant', content: 'b' }, user([{ type: 'search_result', source: 's', title: 't', content: [] }])] },
      'messages[2].content[0].type',
      /"search_result" block exists only on Anthropic/,
    ],
    [
      'an image from the Files API',
      anthropicToChat,
      { model: 'x', max_tokens: 5, messages: [user([{ type: 'image', source: { type: 'file', file_id: 'file_1' } }])] },
      'messages[0].content[0].source.type',
      /"file" source/,
    ],
    ['an Anthropic container', anthropicToChat, { model: 'x', max_tokens: 5, container: 'c', messages: [user('hi')] }, 'container', /containers/],
    ['n > 1', chatToAnthropic, { model: 'x', n: 2, messages: [user('hi')] }, 'n', /one choice/],
    ['logprobs', chatToAnthropic, { model: 'x', logprobs: true, messages: [user('hi')] }, 'logprobs', /log probabilities/],
    [
      'audio input',
      chatToAnthropic,
      { model: 'x', messages: [user([{ type: 'text', text: 'a' }, { type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }])] },
      'messages[0].content[1].type',
      /audio/,
    ],
    ['temperature above Anthropic’s range', chatToAnthropic, { model: 'x', temperature: 1.5, messages: [user('hi')] }, 'temperature', /0\.\.1/],
    ['a schemaless JSON mode to Anthropic', chatToAnthropic, { model: 'x', response_format: { type: 'json_object' }, messages: [user('hi')] }, 'response_format.type', /schemaless/],
    ['legacy functions', chatToAnthropic, { model: 'x', functions: [{ name: 'f' }], messages: [user('hi')] }, 'functions', /legacy/],
    ['a frequency penalty', chatToAnthropic, { model: 'x', frequency_penalty: 0.5, messages: [user('hi')] }, 'frequency_penalty', /frequency penalty/],
    ['previous_response_id', responsesToChat, { model: 'x', previous_response_id: 'resp_1', input: 'hi' }, 'previous_response_id', /not stored/],
    ['only hosted OpenAI tools', responsesToChat, { model: 'x', tools: [{ type: 'web_search' }], input: 'hi' }, 'tools', /every tool in this request \(web_search\) runs only on OpenAI/],
    ['a custom (free-form) tool', responsesToChat, { model: 'x', tools: [{ type: 'custom', name: 'apply_patch' }], input: 'hi' }, 'tools[0].type', /free-form/],
    ['an item reference', responsesToAnthropic, { model: 'x', input: [user('hi'), { type: 'item_reference', id: 'msg_1' }] }, 'input[1].type', /item references/],
    [
      'an uploaded file id',
      responsesToChat,
      { model: 'x', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] },
      'input[0].content[0].file_id',
      /uploaded OpenAI files/,
    ],
    [
      'a file by URL to Chat',
      responsesToChat,
      { model: 'x', input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] },
      'input[0].content[0]',
      /inline only/,
    ],
    ['verbosity to Anthropic', responsesToAnthropic, { model: 'x', input: 'hi', text: { verbosity: 'low' } }, 'text.verbosity', /verbosity/],
    ['a local shell call item', responsesToChat, { model: 'x', input: [{ type: 'local_shell_call', call_id: 'c', action: {} }] }, 'input[0].type', /OpenAI-hosted tools/],
  ];

  it.each(cases)('%s', (_name, codec, inbound, field, message) => {
    let err: unknown = null;
    try {
      codec.request(inbound, { model: codec.upstream === 'anthropic-messages' ? 'claude-sonnet-4-5' : 'gpt-4.1', stream: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CodecError);
    const ce = err as CodecError;
    expect(ce.status).toBe(400);
    expect(ce.code).toBe('untranslatable_request');
    expect(ce.field).toBe(field);
    expect(ce.message).toMatch(message);
  });

  it('a malformed request is an invalid_request naming the field', () => {
    expect(() => chatToAnthropic.request({ model: 'x', messages: 'hi' }, { model: 'm', stream: false })).toThrow(
      expect.objectContaining({ code: 'invalid_request', field: 'messages', status: 400 }),
    );
    expect(() => anthropicToChat.request({ model: 'x', messages: [{ role: 'robot', content: 'x' }] }, { model: 'm', stream: false })).toThrow(
      expect.objectContaining({ code: 'invalid_request', field: 'messages[0].role' }),
    );
    expect(() =>
      anthropicToChat.request({ model: 'x', messages: [user([{ type: 'tool_result' }])] }, { model: 'm', stream: false }),
    ).toThrow(expect.objectContaining({ field: 'messages[0].content[0].tool_use_id' }));
  });

  it('harmless fields without an equivalent are dropped and listed, unknown ones too', () => {
    const out = anthropicToChat.request(
      { model: 'x', max_tokens: 5, service_tier: 'auto', context_management: { edits: [] }, shiny_new_field: 1, messages: [user('hi')] },
      { model: 'm', stream: false },
    );
    expect(out.dropped).toEqual([
      'service_tier: an Anthropic capacity tier',
      'context_management: server-side context editing exists only on Anthropic',
      'shiny_new_field: not part of the target protocol',
    ]);
    expect(out.body).not.toHaveProperty('service_tier');
    expect(out.body).not.toHaveProperty('shiny_new_field');
  });
});

describe('Responses reasoning items going back to Anthropic', () => {
  const loop = (reasoning: Record<string, unknown>) =>
    responsesToAnthropic.request(
      {
        model: 'x',
        reasoning: { effort: 'low' },
        input: [
          { role: 'user', content: 'ls' },
          { type: 'reasoning', id: 'rs_1', ...reasoning },
          { type: 'function_call', call_id: 'toolu_1', name: 'shell', arguments: '{}' },
          { type: 'function_call_output', call_id: 'toolu_1', output: 'a' },
        ],
      },
      { model: 'claude-sonnet-4-5', stream: false },
    );

  it('raw reasoning text is read when there is no summary', () => {
    const out = loop({ summary: [], content: [{ type: 'reasoning_text', text: 'raw thoughts' }], encrypted_content: 'swy.anthropic.thinking:S1' });
    expect((out.body.messages as any)[1].content[0]).toEqual({ type: 'thinking', thinking: 'raw thoughts', signature: 'S1' });
    expect(out.body.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
  });

  it('OpenAI’s own encrypted reasoning is not sent to Anthropic, and the continued tool turn runs without thinking', () => {
    const out = loop({ summary: [{ type: 'summary_text', text: 'x' }], encrypted_content: 'gAAAAABopaque' });
    expect((out.body.messages as any)[1].content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'shell', input: {} }]);
    expect(out.body.thinking).toBeUndefined();
    expect(out.dropped).toEqual([
      'input[1]: reasoning without an Anthropic signature cannot be sent back to Anthropic',
      'reasoning.effort: this turn continues tool calls made without Anthropic thinking, which Anthropic refuses to think over',
    ]);
  });
});
