// The scripted upstream the agent suite stands on, checked with the real SDKs in every shape and
// both forms: a tool call on the first turn, the final text once the tool's output comes back, so
// that an agent case failing points at the agent or the engine, never at the script.
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, type Content } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../support/fakeUpstream';
import { FINAL_TEXT, startToolTaskUpstream, TOOL_COMMAND, TOOL_OUTPUT } from './support/toolTaskUpstream';

const MODEL = 'conformance-model';
const shellSchema = { type: 'object' as const, properties: { command: { type: 'string' }, description: { type: 'string' } }, required: ['command', 'description'] };

let fake: FakeUpstream;
beforeAll(async () => (fake = await startToolTaskUpstream()));
afterAll(() => fake.close());

describe('tool-task upstream', () => {
  for (const stream of [false, true]) {
    it(`Anthropic Messages (${stream ? 'streamed' : 'JSON'}): Bash call, then the final text`, async () => {
      const client = new Anthropic({ baseURL: fake.anthropicUrl, apiKey: 'k', maxRetries: 0 });
      const tools = [{ name: 'Bash', description: 'run', input_schema: shellSchema }];
      const ask = async (messages: Anthropic.MessageParam[]) =>
        stream ? client.messages.stream({ model: MODEL, max_tokens: 100, tools, messages }).finalMessage() : client.messages.create({ model: MODEL, max_tokens: 100, tools, messages });
      const first = await ask([{ role: 'user', content: 'go' }]);
      const call = first.content.find((b) => b.type === 'tool_use')!;
      expect(call).toMatchObject({ name: 'Bash', input: { command: TOOL_COMMAND, description: expect.any(String) } });
      const second = await ask([
        { role: 'user', content: 'go' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.type === 'tool_use' ? call.id : '', content: TOOL_OUTPUT }] },
      ]);
      expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: FINAL_TEXT })]);
    });

    it(`OpenAI Chat (${stream ? 'streamed' : 'JSON'}): a shell call with an array command, then the final text`, async () => {
      const client = new OpenAI({ baseURL: fake.openaiUrl, apiKey: 'k', maxRetries: 0 });
      const tools = [{ type: 'function' as const, function: { name: 'shell', parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } }, required: ['command'] } } }];
      const ask = async (messages: OpenAI.ChatCompletionMessageParam[]) =>
        stream ? client.chat.completions.stream({ model: MODEL, tools, messages }).finalChatCompletion() : client.chat.completions.create({ model: MODEL, tools, messages });
      const first = await ask([{ role: 'user', content: 'go' }]);
      const call = first.choices[0]!.message.tool_calls![0]!;
      expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ command: ['bash', '-lc', TOOL_COMMAND] });
      const second = await ask([{ role: 'user', content: 'go' }, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: TOOL_OUTPUT }]);
      expect(second.choices[0]!.message.content).toBe(FINAL_TEXT);
    });

    it(`OpenAI Responses (${stream ? 'streamed' : 'JSON'}): an exec_command call, then the final text`, async () => {
      const client = new OpenAI({ baseURL: fake.openaiUrl, apiKey: 'k', maxRetries: 0 });
      const tools = [{ type: 'function' as const, name: 'exec_command', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } }];
      const ask = async (input: OpenAI.Responses.ResponseInput) =>
        stream ? client.responses.stream({ model: MODEL, tools, input }).finalResponse() : client.responses.create({ model: MODEL, tools, input });
      const first = await ask([{ role: 'user', content: 'go' }]);
      const call = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
      expect([call.name, JSON.parse(call.arguments)]).toEqual(['exec_command', { cmd: TOOL_COMMAND }]);
      const second = await ask([{ role: 'user', content: 'go' }, call, { type: 'function_call_output', call_id: call.call_id, output: TOOL_OUTPUT }]);
      expect(second.output_text).toBe(FINAL_TEXT);
    });

    it(`Gemini (${stream ? 'streamed' : 'JSON'}): a run_shell_command functionCall, then the final text after the functionResponse`, async () => {
      const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: fake.geminiUrl } });
      const config = { tools: [{ functionDeclarations: [{ name: 'run_shell_command', parametersJsonSchema: shellSchema }] }] };
      const ask = async (contents: Content[]) => {
        if (!stream) return ai.models.generateContent({ model: MODEL, contents, config });
        const parts: NonNullable<Content['parts']> = [];
        for await (const c of await ai.models.generateContentStream({ model: MODEL, contents, config })) parts.push(...(c.candidates?.[0]?.content?.parts ?? []));
        return { candidates: [{ content: { role: 'model', parts } }] };
      };
      const user: Content = { role: 'user', parts: [{ text: 'go' }] };
      const first = (await ask([user])).candidates![0]!.content!;
      const call = first.parts!.find((p) => p.functionCall)!.functionCall!;
      expect([call.name, call.args]).toEqual(['run_shell_command', { command: TOOL_COMMAND, description: expect.any(String) }]);
      const answer: Content = { role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response: { output: TOOL_OUTPUT } } }] };
      const second = (await ask([user, first, answer])).candidates![0]!.content!;
      expect(second.parts!.map((p) => p.text).join('')).toBe(FINAL_TEXT);
      expect(fake.requests.at(-1)!.gemini).toEqual({ method: stream ? 'streamGenerateContent' : 'generateContent', sse: stream });
    });
  }

  it('a request without a shell tool (an agent side call) gets a plain short answer', async () => {
    const client = new OpenAI({ baseURL: fake.openaiUrl, apiKey: 'k', maxRetries: 0 });
    const r = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'title this' }] });
    expect(r.choices[0]!.message.content).not.toContain(TOOL_OUTPUT);
    expect(r.choices[0]!.message.tool_calls ?? []).toEqual([]);
  });
});
