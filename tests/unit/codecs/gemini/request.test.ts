// The Gemini request codec: golden mappings written from Google's v1beta reference, round trips
// Gemini → IR → Gemini, the pivot Gemini → IR → Chat / Anthropic through the existing writers, and
// the 400s naming the field.
import { describe, expect, it } from 'vitest';
import { CodecError } from '../../../../src/main/engine/codecs';
import { writeAnthropicRequest } from '../../../../src/main/engine/codecs/anthropicRequest';
import { readChatRequest, writeChatRequest } from '../../../../src/main/engine/codecs/chatRequest';
import {
  geminiCall,
  geminiUpstreamPath,
  readGeminiRequest,
  SKIP_SIGNATURE,
  writeGeminiRequest,
} from '../../../../src/main/engine/codecs/geminiRequest';
import { readAnthropicRequest } from '../../../../src/main/engine/codecs/anthropicRequest';
import { fixtureJson } from '../support';

const loop = fixtureJson('gemini/request-tool-loop.json');
const GEMINI = { model: 'gemini-2.5-pro', stream: false };
const user = (text: string) => ({ role: 'user', parts: [{ text }] });

/** Gemini → IR → Gemini. */
const roundTrip = (req: Record<string, unknown>, model = 'gemini-2.5-pro') => {
  const ir = readGeminiRequest(structuredClone(req));
  return { body: writeGeminiRequest(ir, { model, stream: false }), dropped: ir.dropped };
};

function refusal(fn: () => unknown): CodecError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CodecError) return e;
    throw e;
  }
  throw new Error('expected a CodecError');
}

describe('the Gemini URL', () => {
  it('reads the model and method, and whether the stream is SSE', () => {
    expect(geminiCall('/v1beta/models/gemini-2.5-pro:generateContent')).toEqual({ model: 'gemini-2.5-pro', method: 'generateContent', stream: false, sse: false });
    expect(geminiCall('/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse&key=k')).toEqual({
      model: 'gemini-3-pro-preview',
      method: 'streamGenerateContent',
      stream: true,
      sse: true,
    });
    expect(geminiCall('/v1beta/models/gemini-2.5-flash:streamGenerateContent')?.sse).toBe(false);
    expect(geminiCall('/v1beta/models/gemini-2.5-flash:countTokens')?.method).toBe('countTokens');
    expect(geminiCall('/v1beta/models/gemini-2.5-flash:embedContent')).toBeNull();
    expect(geminiCall('/v1/chat/completions')).toBeNull();
  });

  it('builds the upstream path, streams as SSE', () => {
    expect(geminiUpstreamPath('gemini-2.5-pro', false)).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(geminiUpstreamPath('models/gemini-2.5-pro', true)).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  });
});

describe('reading a Gemini request', () => {
  it('maps roles, parts, calls and results into the neutral model, with ids generated where Gemini gave none', () => {
    const ir = readGeminiRequest(structuredClone(loop.inbound));
    expect(ir.system).toEqual([{ kind: 'text', text: 'You are a coding agent.', path: 'systemInstruction.parts[0]' }]);
    expect(ir.items.map((i) => i.type)).toEqual(['user', 'reasoning', 'tool_call', 'tool_result', 'assistant', 'tool_call', 'tool_result', 'user']);
    const [, thought, call1, result1, text, call2, result2, last] = ir.items as any[];
    expect(thought).toMatchObject({ text: 'I will list the directory first.', signature: null, redacted: null });
    expect(call1).toMatchObject({ id: 'gcall_1_0', name: 'list_directory', arguments: '{"path":"."}', thoughtSignature: 'c2lnLW9uZQ==' });
    expect(result1).toMatchObject({ callId: 'gcall_1_0', isError: false, parts: [{ kind: 'text', text: 'README.md\nsrc' }] });
    expect(text).toMatchObject({ type: 'assistant', parts: [{ kind: 'text', text: 'Now the readme.' }] });
    expect(call2).toMatchObject({ id: 'call-7f3a', name: 'read_file', thoughtSignature: 'c2lnLXR3bw==' });
    expect(result2).toMatchObject({ callId: 'call-7f3a', path: 'contents[4].parts[0].functionResponse' });
    expect(last.parts.map((p: any) => p.kind)).toEqual(['text', 'image']);
    expect(ir.reasoning).toEqual({ effort: null, budgetTokens: 8192, path: 'generationConfig.thinkingConfig.thinkingBudget' });
    expect(ir.stop).toEqual({ value: ['<END>'], path: 'generationConfig.stopSequences' });
    expect(ir.toolChoice).toEqual({ value: { type: 'auto' }, path: 'toolConfig.functionCallingConfig.mode' });
    expect(ir.tools[1]!.parameters).toEqual({
      type: 'object',
      properties: { absolute_path: { type: 'string' }, limit: { type: ['integer', 'null'] } },
      required: ['absolute_path'],
    });
  });

  it('generated ids are the same on every turn, so a call and its result pair up as the history grows', () => {
    const turn1 = readGeminiRequest(structuredClone({ ...loop.inbound, contents: loop.inbound.contents.slice(0, 3) }));
    const turn2 = readGeminiRequest(structuredClone(loop.inbound));
    const ids = (ir: ReturnType<typeof readGeminiRequest>) => ir.items.filter((i) => i.type === 'tool_call').map((i: any) => i.id);
    expect(ids(turn1)).toEqual(['gcall_1_0']);
    expect(ids(turn2).slice(0, 1)).toEqual(ids(turn1));
  });

  it('pairs responses without ids with parallel calls by name, first unanswered first', () => {
    const ir = readGeminiRequest({
      contents: [
        user('weather in Oslo and Rome, and the time'),
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'weather', args: { city: 'Oslo' } } },
            { functionCall: { name: 'clock', args: {} } },
            { functionCall: { name: 'weather', args: { city: 'Rome' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'clock', response: { output: '12:00' } } },
            { functionResponse: { name: 'weather', response: { output: '3C' } } },
            { functionResponse: { name: 'weather', response: { error: 'no station' } } },
          ],
        },
      ],
    });
    const results = ir.items.filter((i) => i.type === 'tool_result') as any[];
    expect(results.map((r) => [r.callId, r.parts[0].text, r.isError])).toEqual([
      ['gcall_1_1', '12:00', false],
      ['gcall_1_0', '3C', false],
      ['gcall_1_2', 'no station', true],
    ]);
  });

  it('a response whose id the client made up still pairs with its call by name', () => {
    const ir = readGeminiRequest({
      contents: [
        user('go'),
        { role: 'model', parts: [{ functionCall: { name: 'run', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'run-1712-x', name: 'run', response: { output: 'ok' } } }] },
      ],
    });
    expect((ir.items[2] as any).callId).toBe('gcall_1_0');
  });

  it('function calling modes become tool choices; several allowed names narrow the tools offered', () => {
    const tools = [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }];
    const read = (functionCallingConfig: unknown) => readGeminiRequest({ contents: [user('x')], tools, toolConfig: { functionCallingConfig } });
    expect(read({ mode: 'ANY' }).toolChoice?.value).toEqual({ type: 'required' });
    expect(read({ mode: 'NONE' }).toolChoice?.value).toEqual({ type: 'none' });
    expect(read({ mode: 'ANY', allowedFunctionNames: ['b'] }).toolChoice?.value).toEqual({ type: 'tool', name: 'b' });
    const two = read({ mode: 'ANY', allowedFunctionNames: ['a', 'c'] });
    expect(two.toolChoice?.value).toEqual({ type: 'required' });
    expect(two.tools.map((t) => t.name)).toEqual(['a', 'c']);
    const validated = read({ mode: 'VALIDATED' });
    expect(validated.toolChoice?.value).toEqual({ type: 'auto' });
    expect(validated.dropped[0]).toMatch(/^toolConfig\.functionCallingConfig\.mode: schema-validated calls exist only on Gemini/);
  });

  it('thinking: a level becomes an effort, budget 0 turns it off, -1 (model decides) is a middle effort', () => {
    const r = (thinkingConfig: unknown) => readGeminiRequest({ contents: [user('x')], generationConfig: { thinkingConfig } }).reasoning;
    expect(r({ thinkingLevel: 'HIGH' })).toMatchObject({ effort: 'high', budgetTokens: null });
    expect(r({ thinkingLevel: 'low' })).toMatchObject({ effort: 'low' });
    expect(r({ thinkingBudget: 0 })).toMatchObject({ effort: 'none' });
    expect(r({ thinkingBudget: -1 })).toMatchObject({ effort: 'medium' });
    expect(r({ includeThoughts: true })).toBeNull();
  });

  it('JSON output: responseJsonSchema as it is, an OpenAPI responseSchema as JSON Schema, a bare JSON mime type as JSON mode', () => {
    const f = (generationConfig: unknown) => readGeminiRequest({ contents: [user('x')], generationConfig }).responseFormat;
    const schema = { type: 'object', properties: { n: { type: 'integer' } } };
    expect(f({ responseMimeType: 'application/json', responseJsonSchema: schema })).toEqual({
      value: { type: 'json_schema', name: null, description: null, schema, strict: null },
      path: 'generationConfig.responseJsonSchema',
    });
    expect(f({ responseMimeType: 'application/json', responseSchema: { type: 'OBJECT', properties: { n: { type: 'INTEGER' } } } })?.value).toMatchObject({ schema });
    expect(f({ responseMimeType: 'application/json' })?.value).toEqual({ type: 'json_object' });
    expect(f({ responseMimeType: 'text/plain' })).toBeNull();
  });
});

describe('Gemini → IR → Gemini', () => {
  it('the tool loop comes back with its ids, signatures, tools, settings and safety settings', () => {
    const { body, dropped } = roundTrip(loop.inbound);
    const contents = body.contents as any[];
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user', 'model', 'user']);
    expect(contents[1].parts).toEqual([{ functionCall: { id: 'gcall_1_0', name: 'list_directory', args: { path: '.' } }, thoughtSignature: 'c2lnLW9uZQ==' }]);
    expect(contents[2].parts).toEqual([{ functionResponse: { id: 'gcall_1_0', name: 'list_directory', response: { output: 'README.md\nsrc' } } }]);
    expect(contents[3].parts).toEqual([
      { text: 'Now the readme.' },
      { functionCall: { id: 'call-7f3a', name: 'read_file', args: { absolute_path: '/w/README.md' } }, thoughtSignature: 'c2lnLXR3bw==' },
    ]);
    expect(contents[4].parts).toEqual(loop.inbound.contents[4].parts);
    expect(body.systemInstruction).toEqual(loop.inbound.systemInstruction);
    expect(body.safetySettings).toEqual(loop.inbound.safetySettings);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 8192,
      temperature: 0.2,
      topP: 0.95,
      stopSequences: ['<END>'],
      thinkingConfig: { thinkingBudget: 8192, includeThoughts: true },
    });
    expect((body.tools as any[])[0].functionDeclarations[0]).toEqual(loop.inbound.tools[0].functionDeclarations[0]);
    expect((body.tools as any[])[0].functionDeclarations[1].parametersJsonSchema.properties.limit).toEqual({ type: ['integer', 'null'] });
    // Gemini's own unsigned thought summary is not sent back.
    expect(dropped).toEqual(['contents[1].parts[0]: earlier reasoning without a Gemini signature is not sent to a Gemini target']);
    expect(body).not.toHaveProperty('model');
    expect(body).not.toHaveProperty('stream');
  });

  it('a signed Gemini thought part, text signatures, topK and JSON schema output survive', () => {
    const req = {
      contents: [
        user('hi'),
        { role: 'model', parts: [{ text: 'pondering', thought: true, thoughtSignature: 'dGhpbms=' }, { text: 'Hello.', thoughtSignature: 'dGV4dA==' }] },
        user('again, as JSON'),
      ],
      generationConfig: { topK: 40, responseMimeType: 'application/json', responseJsonSchema: { type: 'object' }, candidateCount: 1 },
    };
    const { body } = roundTrip(req);
    expect(body.contents).toEqual(req.contents);
    expect(body.generationConfig).toEqual({ topK: 40, responseMimeType: 'application/json', responseJsonSchema: { type: 'object' } });
  });

  it('function calls and thinking levels: Gemini 3 gets a level, 2.5 a budget', () => {
    const req = (thinkingConfig: unknown) => ({ contents: [user('x')], generationConfig: { thinkingConfig } });
    expect(roundTrip(req({ thinkingLevel: 'LOW' }), 'gemini-3-pro-preview').body.generationConfig).toEqual({ thinkingConfig: { thinkingLevel: 'LOW', includeThoughts: true } });
    expect(roundTrip(req({ thinkingBudget: 30000 }), 'gemini-3-pro-preview').body.generationConfig).toEqual({ thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true } });
    expect(roundTrip(req({ thinkingBudget: 0 }), 'gemini-2.5-flash').body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(roundTrip(req({ thinkingBudget: 50000 }), 'gemini-2.5-flash').body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } });
    const pro = roundTrip(req({ thinkingBudget: 0 }), 'gemini-2.5-pro');
    expect(pro.body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 128, includeThoughts: true } });
    expect(pro.dropped).toEqual(['generationConfig.thinkingConfig.thinkingBudget: Gemini 2.5 Pro always thinks; it thinks as little as it can']);
  });
});

describe('writing for a Gemini target from other clients', () => {
  const chatTurn = {
    model: 'x',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'What is here?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"zoom":2}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"seen":"a cat"}' },
    ],
    tools: [{ type: 'function', function: { name: 'look', parameters: { type: 'object', properties: { zoom: { type: 'number' } } } } }],
    tool_choice: { type: 'function', function: { name: 'look' } },
    reasoning_effort: 'low',
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } } } },
    stop: ['\n\n'],
    user: 'u-1',
  };

  it('a Chat request: system instruction, image by URL, the tool result named after its call, tool choice, JSON schema, thinking', () => {
    const ir = readChatRequest(structuredClone(chatTurn));
    const body = writeGeminiRequest(ir, { model: 'gemini-2.5-flash', stream: true });
    expect(body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'What is here?' }, { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png' } }] },
        { role: 'model', parts: [{ functionCall: { id: 'call_1', name: 'look', args: { zoom: 2 } } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'call_1', name: 'look', response: { seen: 'a cat' } } }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [{ functionDeclarations: [{ name: 'look', parametersJsonSchema: { type: 'object', properties: { zoom: { type: 'number' } } } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['look'] } },
      generationConfig: {
        stopSequences: ['\n\n'],
        responseMimeType: 'application/json',
        responseJsonSchema: { type: 'object', properties: { a: { type: 'string' } } },
        thinkingConfig: { thinkingBudget: 4096, includeThoughts: true },
      },
    });
    expect(ir.dropped).toEqual(['user: Gemini takes no end-user id']);
  });

  it('Gemini 3: calls another provider made get the documented placeholder signature (first call of each turn only)', () => {
    const ir = readAnthropicRequest({
      model: 'x',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_a', name: 'a', input: {} },
            { type: 'tool_use', id: 'toolu_b', name: 'b', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: 'A', is_error: true },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: 'B' }, { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } }] },
          ],
        },
      ],
    });
    const contents = writeGeminiRequest(ir, { model: 'gemini-3-flash-preview', stream: false }).contents as any[];
    expect(contents[1].parts).toEqual([
      { functionCall: { id: 'toolu_a', name: 'a', args: {} }, thoughtSignature: SKIP_SIGNATURE },
      { functionCall: { id: 'toolu_b', name: 'b', args: {} } },
    ]);
    expect(contents[2].parts).toEqual([
      { functionResponse: { id: 'toolu_a', name: 'a', response: { error: 'A' } } },
      { functionResponse: { id: 'toolu_b', name: 'b', response: { output: 'B' } } },
      { inlineData: { mimeType: 'image/jpeg', data: '/9j/' } },
    ]);
    // Gemini 2.5 does not check signatures: nothing is added.
    const older = writeGeminiRequest(readAnthropicRequest({ model: 'x', max_tokens: 1, messages: [{ role: 'user', content: 'go' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'a', input: {} }] }] }), GEMINI);
    expect((older.contents as any[])[1].parts[0].thoughtSignature).toBeUndefined();
  });

  it('a tool result whose call is not in the history is refused: Gemini needs the function name', () => {
    const ir = readChatRequest({ model: 'x', messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'call_9', content: 'r' }] });
    const e = refusal(() => writeGeminiRequest(ir, GEMINI));
    expect(e.field).toBe('messages[1]');
    expect(e.message).toMatch(/call_9/);
  });

  it('more than five stop sequences are refused', () => {
    const ir = readAnthropicRequest({ model: 'x', max_tokens: 1, stop_sequences: ['a', 'b', 'c', 'd', 'e', 'f'], messages: [{ role: 'user', content: 'x' }] });
    expect(refusal(() => writeGeminiRequest(ir, GEMINI)).field).toBe('stop_sequences');
  });
});

describe('Gemini → IR → Chat / Anthropic (the pivot)', () => {
  it('the tool loop as a Chat Completions body', () => {
    const ir = readGeminiRequest(structuredClone(loop.inbound));
    expect(writeChatRequest(ir, { model: 'gpt-4.1', stream: true })).toEqual(loop.chat);
    expect(ir.dropped).toEqual(loop.chatDropped);
  });

  it('the tool loop as an Anthropic Messages body', () => {
    const ir = readGeminiRequest(structuredClone(loop.inbound));
    expect(writeAnthropicRequest(ir, { model: 'claude-sonnet-4-5', stream: false })).toEqual(loop.anthropic);
    expect(ir.dropped).toEqual(loop.anthropicDropped);
  });

  it('does not modify the inbound request', () => {
    const inbound = structuredClone(loop.inbound);
    writeChatRequest(readGeminiRequest(inbound), { model: 'm', stream: false });
    expect(inbound).toEqual(loop.inbound);
  });

  it('an Anthropic thinking signature carried in a thought part (behind the envelope prefix) goes back to Anthropic', () => {
    const ir = readGeminiRequest({
      contents: [user('x'), { role: 'model', parts: [{ text: 'thinking…', thought: true, thoughtSignature: 'swy.anthropic.thinking:EqQBCkY' }, { text: 'Hi.' }] }, user('y')],
    });
    const body = writeAnthropicRequest(ir, { model: 'claude-sonnet-4-5', stream: false }) as any;
    expect(body.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'thinking…', signature: 'EqQBCkY' });
  });
});

describe('refused with a 400 naming the field', () => {
  const base = { contents: [user('x')] };
  it.each([
    ['candidateCount > 1', { ...base, generationConfig: { candidateCount: 2 } }, 'generationConfig.candidateCount'],
    ['an unknown role', { contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'contents[0].role'],
    ['the system role', { contents: [{ role: 'system', parts: [{ text: 'x' }] }] }, 'contents[0].role'],
    ['cached content', { ...base, cachedContent: 'cachedContents/abc' }, 'cachedContent'],
    ['audio data', { contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'audio/wav', data: 'UklG' } }] }] }, 'contents[0].parts[0].inlineData.mimeType'],
    ['a file uploaded to Google', { contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'application/pdf', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc' } }] }] }, 'contents[0].parts[0].fileData.fileUri'],
    ['an answer to no call', { contents: [user('x'), { role: 'user', parts: [{ functionResponse: { name: 'ghost', response: {} } }] }] }, 'contents[1].parts[0].functionResponse.name'],
    ['a function call in a user turn', { contents: [{ role: 'user', parts: [{ functionCall: { name: 'a' } }] }] }, 'contents[0].parts[0].functionCall'],
    ['a budget and a level', { ...base, generationConfig: { thinkingConfig: { thinkingBudget: 1, thinkingLevel: 'LOW' } } }, 'generationConfig.thinkingConfig.thinkingLevel'],
    ['an enum answer', { ...base, generationConfig: { responseMimeType: 'text/x.enum' } }, 'generationConfig.responseMimeType'],
    ['image output', { ...base, generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } }, 'generationConfig.responseModalities'],
    ['code execution history', { contents: [{ role: 'model', parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }] }] }, 'contents[0].parts[0]'],
    ['an undeclared allowed name', { ...base, tools: [{ functionDeclarations: [{ name: 'a' }] }], toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['b'] } } }, 'toolConfig.functionCallingConfig.allowedFunctionNames[0]'],
    ['only Google-hosted tools', { ...base, tools: [{ googleSearch: {} }] }, 'tools'],
    ['contents missing', {}, 'contents'],
  ])('%s', (_, req, field) => {
    const e = refusal(() => readGeminiRequest(req as Record<string, any>));
    expect(e.field).toBe(field);
    expect(e.status).toBe(400);
  });

  it('Google-hosted tools next to functions are left out and named', () => {
    const ir = readGeminiRequest({ ...base, tools: [{ googleSearch: {} }, { functionDeclarations: [{ name: 'a' }] }] });
    expect(ir.tools.map((t) => t.name)).toEqual(['a']);
    expect(ir.droppedTools).toEqual(['googleSearch']);
  });

  it('topK (Gemini CLI sends 64 on every request) is left out of a Chat target and noted, and is top_k on Anthropic', () => {
    const chatIr = readGeminiRequest({ ...base, generationConfig: { topK: 64, temperature: 1, topP: 0.95 } });
    const chat = writeChatRequest(chatIr, { model: 'm', stream: false });
    expect(chat).not.toHaveProperty('top_k');
    expect(chat).toMatchObject({ temperature: 1, top_p: 0.95 });
    expect(chatIr.dropped).toContain('generationConfig.topK: OpenAI Chat Completions has no top_k');
    const anthropic = writeAnthropicRequest(readGeminiRequest({ ...base, generationConfig: { topK: 64 } }), { model: 'claude-sonnet-4-5', stream: false });
    expect(anthropic.top_k).toBe(64);
    // With thinking on, Anthropic takes no top_k: noted, not sent.
    const thinking = readGeminiRequest({ ...base, generationConfig: { topK: 64, thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 }, maxOutputTokens: 8192 } });
    expect(writeAnthropicRequest(thinking, { model: 'claude-sonnet-4-5', stream: false })).not.toHaveProperty('top_k');
    expect(thinking.dropped).toContain('generationConfig.topK: Anthropic thinking runs with default sampling');
    expect(refusal(() => writeAnthropicRequest(readGeminiRequest({ ...base, generationConfig: { topK: 0.5 } }), { model: 'claude-sonnet-4-5', stream: false })).field).toBe('generationConfig.topK');
  });
});
