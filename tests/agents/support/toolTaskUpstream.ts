// The scripted model behind the agent conformance suite: a FakeUpstream that plays a two-turn tool
// task in whichever API shape it is called in (Anthropic Messages, OpenAI Chat, OpenAI Responses,
// Gemini), as JSON or as a stream, whatever the request asks. Turn one calls the agent's own shell tool
// (found in the request's tool list) with a command whose output is not in the command text; once
// that output comes back in the conversation, the final turn answers with a known sentence. A
// request without a shell tool (an agent's title or topic side call) gets a short plain answer.
import {
  anthropicMessage,
  anthropicStream,
  anthropicToolMessage,
  anthropicToolStream,
  FakeUpstream,
  geminiResult,
  geminiStream,
  geminiStreamChunks,
  openaiCompletion,
  openaiStream,
  openaiToolCompletion,
  openaiToolStream,
  responsesResult,
  sse,
  type Chunk,
  type FakeToolCall,
  type RecordedRequest,
  type ScriptedResponse,
} from '../../support/fakeUpstream';

/**
 * The shell command the model asks for, and what only running it prints. No `$(...)` in it:
 * Gemini CLI refuses any command with a substitution in it as an injection.
 */
export const TOOL_COMMAND = "printf 'conformance-%d\\n' 42";
export const TOOL_OUTPUT = 'conformance-42';
/** The final answer, once the tool's output came back. */
export const FINAL_TEXT = 'Task finished: the command printed conformance-42.';
const SIDE_TEXT = 'Shell check';

/** Tool names agents give their shell tool. */
const SHELL_TOOLS = ['Bash', 'bash', 'shell', 'exec_command', 'run_shell_command', 'local_shell'];

interface ToolSpec {
  name: string;
  schema: { properties?: Record<string, { type?: string | string[] }>; required?: string[] };
}

/** The tools a request offers, in any of the four shapes. */
export function offeredTools(body: Record<string, unknown> | null): ToolSpec[] {
  const tools = Array.isArray(body?.tools) ? (body!.tools as Record<string, any>[]) : [];
  return tools.flatMap((t): ToolSpec[] => {
    if (Array.isArray(t.functionDeclarations))
      return (t.functionDeclarations as Record<string, any>[]).map((f) => ({ name: f.name, schema: f.parametersJsonSchema ?? f.parameters ?? {} }));
    if (t.function && typeof t.function.name === 'string') return [{ name: t.function.name, schema: t.function.parameters ?? {} }];
    if (typeof t.name === 'string') return [{ name: t.name, schema: t.input_schema ?? t.parameters ?? {} }];
    return [];
  });
}

/** Arguments for the shell tool: the command in the form its schema wants, required fields filled. */
function shellArguments(tool: ToolSpec): Record<string, unknown> {
  const props = tool.schema.properties ?? {};
  const args: Record<string, unknown> = {};
  const commandKey = ['command', 'cmd'].find((k) => k in props) ?? 'command';
  const type = props[commandKey]?.type;
  args[commandKey] = type === 'array' ? ['bash', '-lc', TOOL_COMMAND] : TOOL_COMMAND;
  for (const req of tool.schema.required ?? []) {
    if (req in args) continue;
    const t = props[req]?.type;
    const kind = Array.isArray(t) ? t[0] : t;
    args[req] = kind === 'boolean' ? false : kind === 'number' || kind === 'integer' ? 30_000 : kind === 'array' ? [] : 'Print a marker';
  }
  return args;
}

type Shape = 'anthropic' | 'chat' | 'responses' | 'gemini';

function shapeOf(rec: RecordedRequest): Shape | null {
  const path = rec.path;
  if (rec.gemini) return rec.gemini.method === 'countTokens' ? null : 'gemini';
  if (path.endsWith('/messages')) return 'anthropic';
  if (path.endsWith('/chat/completions')) return 'chat';
  if (path.endsWith('/responses')) return 'responses';
  return null;
}

/** What the scripted model does for one request. */
export type Turn = { kind: 'tool'; call: FakeToolCall } | { kind: 'final' } | { kind: 'side' };

export function turnFor(rec: RecordedRequest): Turn {
  if (rec.rawBody.includes(TOOL_OUTPUT)) return { kind: 'final' };
  const shell = offeredTools(rec.body).find((t) => SHELL_TOOLS.includes(t.name));
  if (!shell) return { kind: 'side' };
  return { kind: 'tool', call: { id: `call_conf_${rec.seq}`, name: shell.name, arguments: shellArguments(shell) } };
}

/** The answer to one model request in its own shape (JSON or stream, as asked). */
export function toolTaskAnswer(rec: RecordedRequest): ScriptedResponse | undefined {
  const shape = shapeOf(rec);
  if (!shape) return undefined;
  const model = rec.model ?? 'conformance-model';
  const stream = rec.body?.stream === true;
  const turn = turnFor(rec);
  const text = turn.kind === 'final' ? FINAL_TEXT : SIDE_TEXT;
  if (shape === 'gemini') return geminiAnswer(rec, model, turn, text);
  if (shape === 'anthropic') {
    if (turn.kind === 'tool') return stream ? { chunks: anthropicToolStream(model, [turn.call]) } : { json: anthropicToolMessage(model, [turn.call]) };
    return stream ? { chunks: anthropicStream(model, [text]) } : { json: anthropicMessage(model, text) };
  }
  if (shape === 'chat') {
    if (turn.kind === 'tool') return stream ? { chunks: openaiToolStream(model, [turn.call]) } : { json: openaiToolCompletion(model, [turn.call]) };
    return stream ? { chunks: openaiStream(model, [text]) } : { json: openaiCompletion(model, text) };
  }
  if (turn.kind === 'tool') return stream ? { chunks: responsesToolStream(model, turn.call) } : { json: responsesToolResult(model, turn.call) };
  return stream ? { chunks: responsesTextStream(model, text) } : { json: responsesResult(model, text) };
}

/** Gemini: a functionCall part, or the text; JSON, SSE (alt=sse) or the JSON-array stream, as the path asks. */
function geminiAnswer(rec: RecordedRequest, model: string, turn: Turn, text: string): ScriptedResponse {
  const calls = turn.kind === 'tool' ? [turn.call] : [];
  const reply = turn.kind === 'tool' ? null : text;
  if (rec.gemini!.method === 'generateContent') return { json: geminiResult(model, reply, calls) };
  const pieces = reply === null ? [] : [reply];
  if (rec.gemini!.sse) return { chunks: geminiStream(model, pieces, calls) };
  return { body: JSON.stringify(geminiStreamChunks(model, pieces, calls)), headers: { 'content-type': 'application/json' } };
}

function functionCallItem(call: FakeToolCall) {
  return { type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: JSON.stringify(call.arguments), status: 'completed' };
}

function responsesToolResult(model: string, call: FakeToolCall) {
  return { ...responsesResult(model), id: 'resp_conf_tool', output: [functionCallItem(call)] };
}

function responsesSeq() {
  let seq = 0;
  return (type: string, body: Record<string, unknown>) => sse(type, { type, ...body, sequence_number: seq++ });
}

function responsesToolStream(model: string, call: FakeToolCall): Chunk[] {
  const ev = responsesSeq();
  const done = responsesToolResult(model, call);
  const item = functionCallItem(call);
  const args = item.arguments;
  return [
    ev('response.created', { response: { ...done, status: 'in_progress', output: [], usage: null } }),
    ev('response.output_item.added', { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } }),
    ev('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: args.slice(0, 10) }),
    ev('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: args.slice(10) }),
    ev('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: args }),
    ev('response.output_item.done', { output_index: 0, item }),
    ev('response.completed', { response: done }),
  ];
}

function responsesTextStream(model: string, text: string): Chunk[] {
  const ev = responsesSeq();
  const done = responsesResult(model, text);
  const item = done.output[0]!;
  return [
    ev('response.created', { response: { ...done, status: 'in_progress', output: [], usage: null } }),
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
    ev('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
    ev('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text }),
    ev('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text }),
    ev('response.content_part.done', { item_id: item.id, output_index: 0, content_index: 0, part: { type: 'output_text', text, annotations: [] } }),
    ev('response.output_item.done', { output_index: 0, item }),
    ev('response.completed', { response: done }),
  ];
}

/** A fake upstream that plays the tool task on every model path (other paths get the fake's defaults). */
export async function startToolTaskUpstream(): Promise<FakeUpstream> {
  const fake = await FakeUpstream.start();
  scriptToolTask(fake);
  return fake;
}

export function scriptToolTask(fake: FakeUpstream): void {
  fake.script({}, [toolTaskAnswer]);
}
