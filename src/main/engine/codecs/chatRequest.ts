// OpenAI Chat Completions requests: read an inbound one into the neutral model (for an Anthropic
// target), and write one for a Chat target from the neutral model (for Anthropic and Responses
// clients).
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption,
} from 'openai/resources/chat/completions/completions';
import { invalid, untranslatable } from './codecError';
import { dataUrl, fileMediaType, imageSourceFromUrl, imageUrlOf, isObject, joinText } from './content';
import { emptyRequest, type IrPart, type IrRequest, type IrTextPart, type IrToolChoice } from './ir';
import { arrayAt, note, numberAt, objectAt, optionalNumber, otherField, present, stringAt, type OtherFields } from './read';
import { effortForBudget, isEffort } from './reasoning';
import type { RequestOptions } from './types';

// ---- reading an inbound Chat request ----------------------------------------------------------

const SILENT = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'store',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'modalities',
]);
const NOTED: Record<string, string> = {
  metadata: 'OpenAI stored-completion tags',
  seed: 'Anthropic has no sampling seed',
  service_tier: 'an OpenAI capacity tier',
  prediction: 'predicted outputs only speed OpenAI up',
  moderation: 'OpenAI moderation settings',
};

const OTHER: OtherFields = { silent: SILENT, noted: NOTED };

export function readChatRequest(j: Record<string, any>): IrRequest {
  const ir = emptyRequest();
  for (const key of Object.keys(j)) {
    const v = j[key];
    if (!present(v)) continue;
    switch (key) {
      case 'max_tokens':
      case 'max_completion_tokens':
        if (key === 'max_tokens' && present(j.max_completion_tokens)) break;
        ir.maxTokens = { value: numberAt(v, key), path: key };
        break;
      case 'temperature':
        ir.temperature = optionalNumber(v, key);
        break;
      case 'top_p':
        ir.topP = optionalNumber(v, key);
        break;
      case 'stop':
        ir.stop = {
          value: typeof v === 'string' ? [v] : arrayAt(v, key).map((s, i) => stringAt(s, `${key}[${i}]`)),
          path: key,
        };
        break;
      case 'tools':
        arrayAt(v, key).forEach((t, i) => {
          const p = `tools[${i}]`;
          const o = objectAt(t, p);
          if (o.type !== 'function') throw untranslatable(`${p}.type`, `"${String(o.type)}" tools cannot be translated; only function tools can`);
          const f = objectAt(o.function, `${p}.function`);
          ir.tools.push({
            name: stringAt(f.name, `${p}.function.name`),
            description: typeof f.description === 'string' ? f.description : null,
            parameters: isObject(f.parameters) ? f.parameters : null,
            strict: typeof f.strict === 'boolean' ? f.strict : null,
            path: `${p}.function`,
          });
        });
        break;
      case 'tool_choice':
        ir.toolChoice = { value: chatToolChoice(v, key), path: key };
        break;
      case 'parallel_tool_calls':
        if (typeof v !== 'boolean') throw invalid(key, `${key} must be a boolean`);
        ir.parallelToolCalls = { value: v, path: key };
        break;
      case 'reasoning_effort':
        if (!isEffort(v)) throw invalid(key, `unknown reasoning_effort "${String(v)}"`);
        ir.reasoning = { effort: v, budgetTokens: null, path: key };
        break;
      case 'response_format':
        readResponseFormat(ir, objectAt(v, key), key);
        break;
      case 'user':
        ir.user = { value: stringAt(v, key), path: key };
        break;
      case 'safety_identifier':
        if (!present(j.user)) ir.user = { value: stringAt(v, key), path: key };
        break;
      case 'verbosity':
        ir.verbosity = { value: stringAt(v, key), path: key };
        break;
      case 'n':
        if (v !== 1) throw untranslatable(key, 'Anthropic returns one choice per request (n must be 1)');
        break;
      case 'logprobs':
        if (v === true) throw untranslatable(key, 'Anthropic returns no log probabilities');
        break;
      case 'top_logprobs':
        throw untranslatable(key, 'Anthropic returns no log probabilities');
      case 'logit_bias':
        if (isObject(v) && Object.keys(v).length > 0) throw untranslatable(key, 'Anthropic has no logit bias');
        break;
      case 'frequency_penalty':
      case 'presence_penalty':
        if (v !== 0) throw untranslatable(key, `Anthropic has no ${key.replace('_', ' ')}`);
        break;
      case 'audio':
        throw untranslatable(key, 'Anthropic has no audio output');
      case 'web_search_options':
        throw untranslatable(key, 'OpenAI web search has no equivalent on Anthropic');
      case 'functions':
      case 'function_call':
        throw untranslatable(key, 'legacy function calling cannot be translated; use tools and tool_choice');
      default:
        otherField(ir.dropped, key, OTHER);
    }
  }
  if (Array.isArray(j.modalities) && j.modalities.includes('audio')) throw untranslatable('modalities', 'Anthropic has no audio output');
  const messages = arrayAt(j.messages, 'messages');
  for (let i = 0; i < messages.length; i++) readMessage(ir, objectAt(messages[i], `messages[${i}]`), `messages[${i}]`);
  return ir;
}

export function chatToolChoice(v: unknown, path: string): IrToolChoice {
  if (v === 'auto') return { type: 'auto' };
  if (v === 'required') return { type: 'required' };
  if (v === 'none') return { type: 'none' };
  const o = objectAt(v, path);
  if (o.type === 'function') return { type: 'tool', name: stringAt(o.function?.name, `${path}.function.name`) };
  throw untranslatable(`${path}.type`, `tool_choice "${String(o.type)}" cannot be translated`);
}

function readResponseFormat(ir: IrRequest, o: Record<string, any>, path: string): void {
  if (o.type === 'text') return;
  if (o.type === 'json_object') {
    ir.responseFormat = { value: { type: 'json_object' }, path };
    return;
  }
  if (o.type !== 'json_schema') throw invalid(`${path}.type`, `unknown response_format "${String(o.type)}"`);
  const s = objectAt(o.json_schema, `${path}.json_schema`);
  ir.responseFormat = {
    value: {
      type: 'json_schema',
      name: typeof s.name === 'string' ? s.name : null,
      description: typeof s.description === 'string' ? s.description : null,
      schema: isObject(s.schema) ? s.schema : { type: 'object' },
      strict: typeof s.strict === 'boolean' ? s.strict : null,
    },
    path,
  };
}

function chatTextParts(v: unknown, path: string, allowRefusal = false): IrTextPart[] {
  if (v === null || v === undefined) return [];
  if (typeof v === 'string') return [{ kind: 'text', text: v, path }];
  return arrayAt(v, path).map((b, i) => {
    const p = `${path}[${i}]`;
    const o = objectAt(b, p);
    if (o.type === 'text') return { kind: 'text', text: stringAt(o.text, `${p}.text`), path: p };
    if (allowRefusal && o.type === 'refusal') return { kind: 'text', text: stringAt(o.refusal, `${p}.refusal`), path: p };
    throw untranslatable(`${p}.type`, `a "${String(o.type)}" part cannot appear here`);
  });
}

function userParts(v: unknown, path: string): IrPart[] {
  if (typeof v === 'string') return [{ kind: 'text', text: v, path }];
  return arrayAt(v, path).map((b, i): IrPart => {
    const p = `${path}[${i}]`;
    const o = objectAt(b, p);
    switch (o.type) {
      case 'text':
        return { kind: 'text', text: stringAt(o.text, `${p}.text`), path: p };
      case 'image_url': {
        const img = objectAt(o.image_url, `${p}.image_url`);
        const detail = typeof img.detail === 'string' ? img.detail : null;
        return { kind: 'image', source: imageSourceFromUrl(stringAt(img.url, `${p}.image_url.url`)), detail, path: p };
      }
      case 'file': {
        const f = objectAt(o.file, `${p}.file`);
        if (typeof f.file_data !== 'string') throw untranslatable(`${p}.file.file_id`, 'uploaded OpenAI files cannot be sent to another provider; send file_data');
        const filename = typeof f.filename === 'string' ? f.filename : null;
        const { mediaType, data } = fileMediaType(f.file_data, filename);
        return { kind: 'file', mediaType, data, filename, path: p };
      }
      case 'input_audio':
        throw untranslatable(`${p}.type`, 'audio input cannot be translated');
      default:
        throw untranslatable(`${p}.type`, `a "${String(o.type)}" part cannot be translated`);
    }
  });
}

function readMessage(ir: IrRequest, m: Record<string, any>, path: string): void {
  if (present(m.name) && m.role !== 'tool') note(ir.dropped, `${path}.name`, 'participant names have no equivalent');
  switch (m.role) {
    case 'system':
    case 'developer':
      ir.items.push({ type: 'system', parts: chatTextParts(m.content, `${path}.content`), path });
      return;
    case 'user':
      ir.items.push({ type: 'user', parts: userParts(m.content, `${path}.content`), path });
      return;
    case 'assistant': {
      if (present(m.audio)) throw untranslatable(`${path}.audio`, 'audio replies cannot be translated');
      if (present(m.function_call)) throw untranslatable(`${path}.function_call`, 'legacy function calls cannot be translated; use tool_calls');
      if (typeof m.reasoning_content === 'string' && m.reasoning_content) {
        ir.items.push({ type: 'reasoning', text: m.reasoning_content, signature: null, redacted: null, path: `${path}.reasoning_content` });
      }
      const parts = chatTextParts(m.content, `${path}.content`, true);
      if (typeof m.refusal === 'string' && m.refusal) parts.push({ kind: 'text', text: m.refusal, path: `${path}.refusal` });
      if (parts.length) ir.items.push({ type: 'assistant', parts, path });
      if (present(m.tool_calls)) {
        arrayAt(m.tool_calls, `${path}.tool_calls`).forEach((tc, i) => {
          const p = `${path}.tool_calls[${i}]`;
          const o = objectAt(tc, p);
          if (o.type !== undefined && o.type !== 'function') throw untranslatable(`${p}.type`, `"${String(o.type)}" tool calls cannot be translated`);
          const f = objectAt(o.function, `${p}.function`);
          ir.items.push({
            type: 'tool_call',
            id: stringAt(o.id, `${p}.id`),
            name: stringAt(f.name, `${p}.function.name`),
            arguments: typeof f.arguments === 'string' ? f.arguments : JSON.stringify(f.arguments ?? {}),
            path: p,
          });
        });
      }
      return;
    }
    case 'tool':
      ir.items.push({
        type: 'tool_result',
        callId: stringAt(m.tool_call_id, `${path}.tool_call_id`),
        parts: chatTextParts(m.content, `${path}.content`),
        isError: false,
        path,
      });
      return;
    case 'function':
      throw untranslatable(`${path}.role`, 'legacy function messages cannot be translated; use tool messages');
    default:
      throw invalid(`${path}.role`, `unknown role "${String(m.role)}"`);
  }
}

// ---- writing a request for a Chat target ------------------------------------------------------

type ChatMessage = ChatCompletionMessageParam;

export function writeChatRequest(ir: IrRequest, opts: RequestOptions): Record<string, unknown> {
  const dropped = ir.dropped;
  const messages: ChatMessage[] = [];
  const system = ir.system.filter((p) => p.text !== '');
  if (system.length) messages.push({ role: 'system', content: joinText(system) });

  let assistant: { text: IrTextPart[]; calls: NonNullable<Extract<ChatMessage, { role: 'assistant' }>['tool_calls']> } | null = null;
  // Images a tool returned wait for the end of the run of tool messages (Chat tool messages carry text only).
  let toolImages: ChatCompletionContentPart[] = [];
  let reasoningNoted = false;
  const flushAssistant = () => {
    if (!assistant) return;
    if (!assistant.text.length && !assistant.calls.length) {
      assistant = null;
      return;
    }
    const m: Extract<ChatMessage, { role: 'assistant' }> = {
      role: 'assistant',
      content: assistant.text.length ? joinText(assistant.text) : null,
    };
    if (assistant.calls.length) m.tool_calls = assistant.calls;
    messages.push(m);
    assistant = null;
  };
  const flushToolImages = () => {
    if (!toolImages.length) return;
    messages.push({ role: 'user', content: toolImages });
    toolImages = [];
  };

  for (const item of ir.items) {
    if (item.type !== 'tool_result') flushToolImages();
    switch (item.type) {
      case 'system': {
        flushAssistant();
        const parts = item.parts.filter((p) => p.text !== '');
        if (parts.length) messages.push({ role: 'system', content: joinText(parts) });
        break;
      }
      case 'user': {
        flushAssistant();
        messages.push({ role: 'user', content: chatUserContent(item.parts) });
        break;
      }
      case 'assistant':
        assistant ??= { text: [], calls: [] };
        for (const p of item.parts) if (p.text !== '') assistant.text.push(p);
        break;
      case 'tool_call':
        assistant ??= { text: [], calls: [] };
        assistant.calls.push({ id: item.id, type: 'function', function: { name: item.name, arguments: item.arguments } });
        break;
      case 'reasoning':
        if (!reasoningNoted) note(dropped, item.path, 'earlier reasoning is not sent to a Chat target');
        reasoningNoted = true;
        break;
      case 'tool_result': {
        flushAssistant();
        const texts: IrTextPart[] = [];
        const media: IrPart[] = [];
        for (const p of item.parts) (p.kind === 'text' ? texts : media).push(p as any);
        let content = joinText(texts, '\n');
        if (item.isError) content = content ? `Error: ${content}` : 'Error';
        if (media.length) {
          toolImages.push({ type: 'text', text: `Attachments returned by tool call ${item.callId}:` });
          toolImages.push(...media.map(chatPart));
          if (!content) content = '(attachments follow in the next message)';
        }
        messages.push({ role: 'tool', tool_call_id: item.callId, content });
        break;
      }
    }
  }
  flushAssistant();
  flushToolImages();

  const body: Record<string, unknown> & Partial<ChatCompletionCreateParamsBase> = { model: opts.model, messages };
  if (ir.maxTokens) body[opts.chatMaxTokensField ?? 'max_tokens'] = ir.maxTokens.value;
  if (ir.temperature) body.temperature = ir.temperature.value;
  if (ir.topP) body.top_p = ir.topP.value;
  if (ir.topK) {
    // Gemini clients send topK as a default on every request (Gemini CLI: 64), so from them it is
    // noted and left out; an Anthropic client's top_k is its own choice, refused as before.
    if (ir.topK.path.startsWith('generationConfig.')) note(ir.dropped, ir.topK.path, 'OpenAI Chat Completions has no top_k');
    else throw untranslatable(ir.topK.path, 'OpenAI Chat Completions has no top_k');
  }
  if (ir.stop && ir.stop.value.length) body.stop = ir.stop.value;
  if (ir.tools.length) {
    body.tools = ir.tools.map((t): ChatCompletionTool => {
      const fn: ChatCompletionTool & { type: 'function' } = {
        type: 'function',
        function: { name: t.name, parameters: t.parameters ?? { type: 'object', properties: {} } },
      };
      if (t.description) fn.function.description = t.description;
      if (t.strict !== null) fn.function.strict = t.strict;
      return fn;
    });
    const c = ir.toolChoice?.value;
    if (c) body.tool_choice = chatChoice(c);
    if (ir.parallelToolCalls) body.parallel_tool_calls = ir.parallelToolCalls.value;
  }
  if (ir.reasoning) {
    const r = ir.reasoning;
    const effort = r.effort ?? (r.budgetTokens !== null ? effortForBudget(r.budgetTokens) : null);
    if (effort) body.reasoning_effort = effort;
  }
  if (ir.user) body.user = ir.user.value;
  if (ir.responseFormat) {
    const f = ir.responseFormat.value;
    if (f.type === 'json_object') body.response_format = { type: 'json_object' };
    else {
      const js: Record<string, unknown> = { name: f.name ?? 'response', schema: f.schema };
      if (f.description) js.description = f.description;
      if (f.strict !== null) js.strict = f.strict;
      body.response_format = { type: 'json_schema', json_schema: js as any };
    }
  }
  if (ir.verbosity) body.verbosity = ir.verbosity.value as 'low' | 'medium' | 'high';
  if (ir.safetySettings) note(dropped, ir.safetySettings.path, 'Chat Completions has no safety settings');
  if (opts.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function chatChoice(c: IrToolChoice): ChatCompletionToolChoiceOption {
  switch (c.type) {
    case 'auto':
      return 'auto';
    case 'required':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: c.name } };
  }
}

function chatPart(p: IrPart): ChatCompletionContentPart {
  switch (p.kind) {
    case 'text':
      return { type: 'text', text: p.text };
    case 'image': {
      const image_url: { url: string; detail?: 'auto' | 'low' | 'high' } = { url: imageUrlOf(p.source) };
      if (p.detail === 'low' || p.detail === 'high' || p.detail === 'auto') image_url.detail = p.detail;
      return { type: 'image_url', image_url };
    }
    case 'file': {
      const file: { file_data: string; filename?: string } = { file_data: dataUrl(p.mediaType, p.data) };
      file.filename = p.filename ?? (p.mediaType === 'application/pdf' ? 'document.pdf' : 'document');
      return { type: 'file', file };
    }
    case 'file_url':
      throw untranslatable(p.path, 'Chat Completions takes files inline only, not by URL');
  }
}

/** Text-only content goes as one string (servers such as DeepSeek take nothing else). */
function chatUserContent(parts: IrPart[]): string | ChatCompletionContentPart[] {
  if (parts.every((p) => p.kind === 'text')) return joinText(parts as IrTextPart[]);
  return parts.filter((p) => !(p.kind === 'text' && p.text === '')).map(chatPart);
}
