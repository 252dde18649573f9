// Anthropic Messages requests: read an inbound one into the neutral model (for a Chat target), and
// write one for an Anthropic target from the neutral model (for Chat and Responses clients).
import type {
  ContentBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
  Tool as AnthropicTool,
  ToolChoice as AnthropicToolChoice,
} from '@anthropic-ai/sdk/resources/messages/messages';
import { anthropicModelTraits } from './anthropicModels';
import { invalid, untranslatable } from './codecError';
import { checkToolsLeft, dropHostedTool, isAnthropicServerTool } from './hostedTools';
import { anthropicToolId, argumentsObject, isObject } from './content';
import {
  emptyRequest,
  type IrPart,
  type IrRequest,
  type IrTextPart,
  type IrToolChoice,
} from './ir';
import { arrayAt, note, numberAt, objectAt, optionalNumber, otherField, present, stringAt, type OtherFields } from './read';
import { anthropicEffort, EFFORT_BUDGET, isEffort, MIN_THINKING_BUDGET } from './reasoning';
import type { RequestOptions } from './types';

// ---- reading an inbound Anthropic request ------------------------------------------------------

/** Fields that change nothing a non-Anthropic target could honour, noted in `dropped`. */
const NOTED: Record<string, string> = {
  service_tier: 'an Anthropic capacity tier',
  inference_geo: 'an Anthropic inference region',
  speed: 'an Anthropic priority mode',
  diagnostics: 'Anthropic prompt-cache diagnostics',
  context_management: 'server-side context editing exists only on Anthropic',
  workspace_id: 'an Anthropic workspace',
  user_profile_id: 'an Anthropic user profile',
};
const SILENT = new Set(['model', 'stream', 'messages', 'cache_control']);
const REFUSED: Record<string, string> = {
  container: 'containers run only on Anthropic',
  mcp_servers: 'Anthropic-hosted MCP connectors have no equivalent on this target',
};

const OTHER: OtherFields = { silent: SILENT, noted: NOTED, refused: REFUSED };

export function readAnthropicRequest(j: Record<string, any>): IrRequest {
  const ir = emptyRequest();
  for (const key of Object.keys(j)) {
    const v = j[key];
    if (!present(v)) continue;
    switch (key) {
      case 'system':
        readSystem(ir, v);
        break;
      case 'max_tokens':
        ir.maxTokens = { value: numberAt(v, key), path: key };
        break;
      case 'stop_sequences':
        ir.stop = { value: arrayAt(v, key).map((s, i) => stringAt(s, `${key}[${i}]`)), path: key };
        break;
      case 'temperature':
        ir.temperature = optionalNumber(v, key);
        break;
      case 'top_p':
        ir.topP = optionalNumber(v, key);
        break;
      case 'top_k':
        ir.topK = optionalNumber(v, key);
        break;
      case 'tools':
        readTools(ir, arrayAt(v, key));
        break;
      case 'tool_choice':
        readToolChoice(ir, objectAt(v, key));
        break;
      case 'thinking':
        readThinking(ir, objectAt(v, key), j.output_config);
        break;
      case 'output_config':
        readOutputConfig(ir, objectAt(v, key), j.thinking);
        break;
      case 'metadata': {
        const m = objectAt(v, key);
        if (typeof m.user_id === 'string' && m.user_id) ir.user = { value: m.user_id, path: 'metadata.user_id' };
        break;
      }
      default:
        otherField(ir.dropped, key, OTHER);
    }
  }
  const messages = arrayAt(j.messages, 'messages');
  for (let i = 0; i < messages.length; i++) readMessage(ir, objectAt(messages[i], `messages[${i}]`), `messages[${i}]`);
  return ir;
}

function textParts(v: unknown, path: string): IrTextPart[] {
  if (typeof v === 'string') return [{ kind: 'text', text: v, path }];
  return arrayAt(v, path).map((b, i) => {
    const p = `${path}[${i}]`;
    const o = objectAt(b, p);
    if (o.type !== 'text') throw untranslatable(`${p}.type`, `only text blocks can appear here, not "${String(o.type)}"`);
    return { kind: 'text', text: stringAt(o.text, `${p}.text`), path: p };
  });
}

function readSystem(ir: IrRequest, v: unknown): void {
  ir.system.push(...textParts(v, 'system'));
}

function readTools(ir: IrRequest, tools: any[]): void {
  tools.forEach((t, i) => {
    const p = `tools[${i}]`;
    const o = objectAt(t, p);
    if (o.type !== undefined && o.type !== null && o.type !== 'custom') {
      if (typeof o.type === 'string' && isAnthropicServerTool(o.type)) return dropHostedTool(ir, p, o.type, 'Anthropic');
      throw untranslatable(`${p}.type`, `the Anthropic tool "${String(o.type)}" runs only on Anthropic; only custom tools can be translated`);
    }
    ir.tools.push({
      name: stringAt(o.name, `${p}.name`),
      description: typeof o.description === 'string' ? o.description : null,
      parameters: isObject(o.input_schema) ? o.input_schema : null,
      strict: typeof o.strict === 'boolean' ? o.strict : null,
      path: p,
    });
    if (Array.isArray(o.input_examples) && o.input_examples.length > 0) note(ir.dropped, `${p}.input_examples`, 'no tool examples on this target');
  });
  checkToolsLeft(ir, 'Anthropic');
}

function readToolChoice(ir: IrRequest, o: Record<string, any>): void {
  let choice: IrToolChoice;
  switch (o.type) {
    case 'auto':
      choice = { type: 'auto' };
      break;
    case 'any':
      choice = { type: 'required' };
      break;
    case 'none':
      choice = { type: 'none' };
      break;
    case 'tool':
      choice = { type: 'tool', name: stringAt(o.name, 'tool_choice.name') };
      break;
    default:
      throw invalid('tool_choice.type', `unknown tool_choice type "${String(o.type)}"`);
  }
  ir.toolChoice = { value: choice, path: 'tool_choice' };
  if (o.disable_parallel_tool_use === true) ir.parallelToolCalls = { value: false, path: 'tool_choice.disable_parallel_tool_use' };
}

function readThinking(ir: IrRequest, o: Record<string, any>, outputConfig: unknown): void {
  switch (o.type) {
    case 'enabled': {
      const budget = numberAt(o.budget_tokens, 'thinking.budget_tokens');
      ir.reasoning = { effort: null, budgetTokens: budget, path: 'thinking' };
      return;
    }
    case 'adaptive': {
      const effort = isObject(outputConfig) ? outputConfig.effort : undefined;
      if (!isEffort(effort)) note(ir.dropped, 'thinking', 'adaptive thinking without an effort leaves the target at its default reasoning');
      // With an effort, readOutputConfig sets it.
      return;
    }
    case 'disabled':
      return;
    case 'between_tools':
      note(ir.dropped, 'thinking', 'thinking between tool calls has no equivalent; the target reasons as it defaults to');
      return;
    default:
      throw invalid('thinking.type', `unknown thinking type "${String(o.type)}"`);
  }
}

function readOutputConfig(ir: IrRequest, o: Record<string, any>, thinking: unknown): void {
  if (present(o.effort)) {
    if (!isEffort(o.effort)) throw invalid('output_config.effort', `unknown effort "${String(o.effort)}"`);
    const disabled = isObject(thinking) && thinking.type === 'disabled';
    if (!disabled) ir.reasoning = { effort: o.effort, budgetTokens: null, path: 'output_config.effort' };
  }
  if (present(o.format)) {
    const f = objectAt(o.format, 'output_config.format');
    if (f.type !== 'json_schema') throw invalid('output_config.format.type', `unknown output format "${String(f.type)}"`);
    ir.responseFormat = {
      value: { type: 'json_schema', name: null, description: null, schema: objectAt(f.schema, 'output_config.format.schema'), strict: true },
      path: 'output_config.format',
    };
  }
}

function readMessage(ir: IrRequest, m: Record<string, any>, path: string): void {
  const role = m.role;
  if (role === 'system') {
    ir.items.push({ type: 'system', parts: textParts(m.content, `${path}.content`), path });
    return;
  }
  if (role !== 'user' && role !== 'assistant') throw invalid(`${path}.role`, `unknown role "${String(role)}"`);
  const cpath = `${path}.content`;
  if (typeof m.content === 'string') {
    ir.items.push(
      role === 'user'
        ? { type: 'user', parts: [{ kind: 'text', text: m.content, path: cpath }], path }
        : { type: 'assistant', parts: [{ kind: 'text', text: m.content, path: cpath }], path },
    );
    return;
  }
  const blocks = arrayAt(m.content, cpath);
  let user: IrPart[] = [];
  let assistant: IrTextPart[] = [];
  const flush = () => {
    if (user.length) ir.items.push({ type: 'user', parts: user, path });
    if (assistant.length) ir.items.push({ type: 'assistant', parts: assistant, path });
    user = [];
    assistant = [];
  };
  for (let i = 0; i < blocks.length; i++) {
    const p = `${cpath}[${i}]`;
    const b = objectAt(blocks[i], p);
    switch (b.type) {
      case 'text':
        if (role === 'user') user.push({ kind: 'text', text: stringAt(b.text, `${p}.text`), path: p });
        else assistant.push({ kind: 'text', text: stringAt(b.text, `${p}.text`), path: p });
        break;
      case 'image':
      case 'document':
        if (role !== 'user') throw untranslatable(`${p}.type`, `an assistant "${b.type}" block cannot be translated`);
        user.push(mediaPart(b, p));
        break;
      case 'tool_use':
        if (role !== 'assistant') throw invalid(`${p}.type`, 'tool_use blocks belong to assistant messages');
        flush();
        ir.items.push({
          type: 'tool_call',
          id: stringAt(b.id, `${p}.id`),
          name: stringAt(b.name, `${p}.name`),
          arguments: JSON.stringify(b.input ?? {}),
          path: p,
        });
        break;
      case 'tool_result':
        if (role !== 'user') throw invalid(`${p}.type`, 'tool_result blocks belong to user messages');
        flush();
        ir.items.push({
          type: 'tool_result',
          callId: stringAt(b.tool_use_id, `${p}.tool_use_id`),
          parts: toolResultParts(b.content, `${p}.content`),
          isError: b.is_error === true,
          path: p,
        });
        break;
      case 'thinking':
        if (role !== 'assistant') throw invalid(`${p}.type`, 'thinking blocks belong to assistant messages');
        flush();
        ir.items.push({
          type: 'reasoning',
          text: typeof b.thinking === 'string' ? b.thinking : '',
          signature: typeof b.signature === 'string' && b.signature ? b.signature : null,
          redacted: null,
          path: p,
        });
        break;
      case 'redacted_thinking':
        flush();
        ir.items.push({ type: 'reasoning', text: '', signature: null, redacted: stringAt(b.data, `${p}.data`), path: p });
        break;
      default:
        throw untranslatable(`${p}.type`, `the "${String(b.type)}" block exists only on Anthropic and cannot be translated`);
    }
  }
  flush();
}

function mediaPart(b: Record<string, any>, p: string): IrPart {
  const src = objectAt(b.source, `${p}.source`);
  if (b.type === 'image') {
    if (src.type === 'base64') {
      return {
        kind: 'image',
        source: { type: 'base64', mediaType: stringAt(src.media_type, `${p}.source.media_type`), data: stringAt(src.data, `${p}.source.data`) },
        detail: null,
        path: p,
      };
    }
    if (src.type === 'url') return { kind: 'image', source: { type: 'url', url: stringAt(src.url, `${p}.source.url`) }, detail: null, path: p };
    throw untranslatable(`${p}.source.type`, `an image from an Anthropic "${String(src.type)}" source cannot be sent to this target`);
  }
  const filename = typeof b.title === 'string' && b.title ? b.title : null;
  if (src.type === 'base64') {
    return { kind: 'file', mediaType: stringAt(src.media_type, `${p}.source.media_type`), data: stringAt(src.data, `${p}.source.data`), filename, path: p };
  }
  if (src.type === 'text') {
    const text = stringAt(src.data, `${p}.source.data`);
    return { kind: 'text', text: filename ? `${filename}\n\n${text}` : text, path: p };
  }
  if (src.type === 'url') return { kind: 'file_url', url: stringAt(src.url, `${p}.source.url`), filename, path: p };
  throw untranslatable(`${p}.source.type`, `a document from an Anthropic "${String(src.type)}" source cannot be sent to this target`);
}

function toolResultParts(content: unknown, path: string): IrPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ kind: 'text', text: content, path }];
  return arrayAt(content, path).map((b, i) => {
    const p = `${path}[${i}]`;
    const o = objectAt(b, p);
    if (o.type === 'text') return { kind: 'text', text: stringAt(o.text, `${p}.text`), path: p } as IrPart;
    if (o.type === 'image' || o.type === 'document') return mediaPart(o, p);
    throw untranslatable(`${p}.type`, `a "${String(o.type)}" block inside a tool result cannot be translated`);
  });
}

// ---- writing a request for an Anthropic target ------------------------------------------------

type Block = ContentBlockParam;

export function writeAnthropicRequest(ir: IrRequest, opts: RequestOptions): Record<string, unknown> {
  const traits = anthropicModelTraits(opts.model);
  const dropped = ir.dropped;
  const system: TextBlockParam[] = [];
  for (const p of ir.system) if (p.text !== '') system.push({ type: 'text', text: p.text });

  const messages: MessageParam[] = [];
  let role: 'user' | 'assistant' | null = null;
  let blocks: Block[] = [];
  const flush = () => {
    if (role && blocks.length) {
      // Anthropic wants the tool results first in a user turn.
      if (role === 'user') blocks = [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')];
      messages.push({ role, content: blocks });
    }
    blocks = [];
  };
  const into = (r: 'user' | 'assistant') => {
    if (role !== r) {
      flush();
      role = r;
    }
  };

  for (const item of ir.items) {
    switch (item.type) {
      case 'system':
        for (const p of item.parts) if (p.text !== '') system.push({ type: 'text', text: p.text });
        break;
      case 'user': {
        const content = item.parts.map(userBlock).filter((b) => b !== null);
        if (content.length === 0) {
          note(dropped, item.path, 'an empty message (Anthropic refuses empty content)');
          break;
        }
        into('user');
        blocks.push(...content);
        break;
      }
      case 'assistant': {
        const content = item.parts.filter((p) => p.text !== '').map((p): Block => ({ type: 'text', text: p.text }));
        if (content.length === 0) break;
        into('assistant');
        blocks.push(...content);
        break;
      }
      case 'tool_call': {
        into('assistant');
        const args = argumentsObject(item.arguments);
        if (args.wrapped) note(dropped, item.path, 'arguments were not a JSON object; kept as _raw_arguments');
        blocks.push({ type: 'tool_use', id: anthropicToolId(item.id), name: item.name, input: args.value });
        break;
      }
      case 'tool_result': {
        into('user');
        const content = item.parts.map(userBlock).filter((b) => b !== null);
        const block: Block = { type: 'tool_result', tool_use_id: anthropicToolId(item.callId) };
        if (content.length > 0) {
          (block as any).content = content.every((b) => b.type === 'text') && content.length === 1 ? (content[0] as any).text : content;
        }
        if (item.isError) (block as any).is_error = true;
        blocks.push(block);
        break;
      }
      case 'reasoning': {
        if (item.signature) {
          into('assistant');
          blocks.push({ type: 'thinking', thinking: item.text, signature: item.signature });
        } else if (item.redacted) {
          into('assistant');
          blocks.push({ type: 'redacted_thinking', data: item.redacted });
        } else {
          note(dropped, item.path, 'reasoning without an Anthropic signature cannot be sent back to Anthropic');
        }
        break;
      }
    }
  }
  flush();

  // A final assistant message is a prefill; Anthropic refuses one that ends in whitespace.
  const last = messages[messages.length - 1];
  if (last && last.role === 'assistant' && Array.isArray(last.content)) {
    const tail = last.content[last.content.length - 1];
    if (tail && tail.type === 'text' && /\s$/.test(tail.text)) tail.text = tail.text.trimEnd();
  }

  const body: Record<string, unknown> & Partial<MessageCreateParamsBase> = { model: opts.model, messages };
  if (system.length === 1) body.system = system[0]!.text;
  else if (system.length > 1) body.system = system;

  const maxTokens = ir.maxTokens?.value ?? opts.defaultMaxTokens ?? traits.defaultMaxTokens;
  body.max_tokens = maxTokens;
  if (ir.stop && ir.stop.value.length > 0) body.stop_sequences = ir.stop.value;

  const thinkingOn = writeThinking(ir, body, traits, maxTokens, messages);
  writeSampling(ir, body, traits, thinkingOn);

  if (ir.tools.length > 0) {
    body.tools = ir.tools.map((t): AnthropicTool => {
      const schema = t.parameters ?? { type: 'object', properties: {} };
      if (schema.type !== undefined && schema.type !== 'object') {
        throw untranslatable(`${t.path}.parameters`, 'Anthropic tools take an object schema (type "object") only');
      }
      const tool: AnthropicTool = { name: t.name, input_schema: { ...schema, type: 'object' } as AnthropicTool['input_schema'] };
      if (t.description) tool.description = t.description;
      if (t.strict === true) tool.strict = true;
      return tool;
    });
    const choice = toolChoice(ir);
    if (choice) body.tool_choice = choice;
  }

  if (ir.user) body.metadata = { user_id: ir.user.value };
  if (ir.responseFormat) {
    const f = ir.responseFormat.value;
    if (f.type === 'json_object') {
      throw untranslatable(`${ir.responseFormat.path}.type`, 'Anthropic has no schemaless JSON mode; send a json_schema format instead');
    }
    body.output_config = { ...(body.output_config as object), format: { type: 'json_schema', schema: f.schema } };
  }
  if (ir.verbosity && ir.verbosity.value !== 'medium') {
    throw untranslatable(ir.verbosity.path, `verbosity "${ir.verbosity.value}" cannot be translated to Anthropic`);
  }
  if (ir.safetySettings) note(dropped, ir.safetySettings.path, 'Anthropic has no safety settings');
  if (opts.stream) body.stream = true;
  return body;
}

function userBlock(p: IrPart): Extract<Block, { type: 'text' | 'image' | 'document' }> | null {
  switch (p.kind) {
    case 'text':
      return p.text === '' ? null : { type: 'text', text: p.text };
    case 'image':
      return p.source.type === 'base64'
        ? { type: 'image', source: { type: 'base64', media_type: p.source.mediaType as any, data: p.source.data } }
        : { type: 'image', source: { type: 'url', url: p.source.url } };
    case 'file': {
      if (p.mediaType === 'application/pdf') {
        const doc: Block = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: p.data } };
        if (p.filename) doc.title = p.filename;
        return doc;
      }
      if (p.mediaType === 'text/plain') {
        const doc: Block = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(p.data, 'base64').toString('utf8') } };
        if (p.filename) doc.title = p.filename;
        return doc;
      }
      throw untranslatable(p.path, `Anthropic takes PDF and plain-text documents, not "${p.mediaType}"`);
    }
    case 'file_url': {
      const doc: Block = { type: 'document', source: { type: 'url', url: p.url } };
      if (p.filename) doc.title = p.filename;
      return doc;
    }
  }
}

function toolChoice(ir: IrRequest): AnthropicToolChoice | null {
  const noParallel = ir.parallelToolCalls?.value === false;
  const c = ir.toolChoice?.value ?? null;
  if (!c) return noParallel ? { type: 'auto', disable_parallel_tool_use: true } : null;
  switch (c.type) {
    case 'auto':
      return noParallel ? { type: 'auto', disable_parallel_tool_use: true } : { type: 'auto' };
    case 'required':
      return noParallel ? { type: 'any', disable_parallel_tool_use: true } : { type: 'any' };
    case 'none':
      return { type: 'none' };
    case 'tool':
      return noParallel ? { type: 'tool', name: c.name, disable_parallel_tool_use: true } : { type: 'tool', name: c.name };
  }
}

/** Thinking for the target model's style; false when the request runs without it. */
function writeThinking(
  ir: IrRequest,
  body: Record<string, unknown>,
  traits: ReturnType<typeof anthropicModelTraits>,
  maxTokens: number,
  messages: MessageParam[],
): boolean {
  const r = ir.reasoning;
  if (!r) return false;
  const effort = r.effort;
  if (effort === 'none' && r.budgetTokens === null) return false;
  if (!continuesSignedTurn(messages)) {
    note(ir.dropped, r.path, 'this turn continues tool calls made without Anthropic thinking, which Anthropic refuses to think over');
    return false;
  }
  if (traits.thinking === 'adaptive') {
    body.thinking = { type: 'adaptive' };
    const e = effort ? anthropicEffort(effort) : null;
    if (e) body.output_config = { ...(body.output_config as object), effort: e };
    return true;
  }
  const wanted = r.budgetTokens ?? EFFORT_BUDGET[(effort ?? 'medium') as keyof typeof EFFORT_BUDGET] ?? EFFORT_BUDGET.medium;
  const budget = Math.min(wanted, maxTokens - 1);
  if (budget < MIN_THINKING_BUDGET) {
    note(ir.dropped, r.path, `max tokens ${maxTokens} leave no room for Anthropic's minimum thinking budget (${MIN_THINKING_BUDGET})`);
    return false;
  }
  body.thinking = { type: 'enabled', budget_tokens: budget };
  return true;
}

/**
 * With thinking on, Anthropic requires the assistant turn that a tool-result message continues to
 * start with its (signed) thinking block. A turn whose tool calls were made elsewhere has none.
 */
function continuesSignedTurn(messages: MessageParam[]): boolean {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user' || !Array.isArray(last.content)) return true;
  if (!last.content.some((b) => b.type === 'tool_result')) return true;
  const prev = messages[messages.length - 2];
  if (!prev || prev.role !== 'assistant' || !Array.isArray(prev.content)) return true;
  const first = prev.content[0];
  return !!first && (first.type === 'thinking' || first.type === 'redacted_thinking');
}

function writeSampling(ir: IrRequest, body: Record<string, unknown>, traits: ReturnType<typeof anthropicModelTraits>, thinkingOn: boolean): void {
  for (const [f, key] of [
    [ir.temperature, 'temperature'],
    [ir.topP, 'top_p'],
  ] as const) {
    if (!f) continue;
    if (!traits.sampling) {
      note(ir.dropped, f.path, 'this Claude model takes no sampling parameters');
      continue;
    }
    if (thinkingOn && !(key === 'top_p' && f.value >= 0.95) && !(key === 'temperature' && f.value === 1)) {
      note(ir.dropped, f.path, 'Anthropic thinking runs with default sampling');
      continue;
    }
    if (f.value < 0 || f.value > 1) throw untranslatable(f.path, `${key} ${f.value} is outside Anthropic's range 0..1`);
    body[key] = f.value;
  }
  // top_k (a Gemini client's topK): Anthropic takes a whole number of at least 1, and none with thinking.
  const k = ir.topK;
  if (!k) return;
  if (!traits.sampling) note(ir.dropped, k.path, 'this Claude model takes no sampling parameters');
  else if (thinkingOn) note(ir.dropped, k.path, 'Anthropic thinking runs with default sampling');
  else if (!Number.isInteger(k.value) || k.value < 1) throw untranslatable(k.path, `top_k ${k.value} is not a whole number of at least 1`);
  else body.top_k = k.value;
}
