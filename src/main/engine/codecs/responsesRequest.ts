// OpenAI Responses requests read into the neutral model, for a Chat or an Anthropic target. What
// needs OpenAI's server-side state (previous_response_id, conversation, stored prompts, item
// references, background runs) cannot be translated and is refused by name. Namespaced function
// tools are offered under flat names (toolNames.ts); OpenAI-hosted tools are left out (hostedTools.ts).
import { invalid, untranslatable } from './codecError';
import { fileMediaType, imageSourceFromUrl, isObject } from './content';
import { checkToolsLeft, dropHostedTool } from './hostedTools';
import { emptyRequest, type IrPart, type IrRequest, type IrTextPart, type IrTool } from './ir';
import { chatToolChoice } from './chatRequest';
import { arrayAt, note, numberAt, objectAt, optionalNumber, otherField, present, stringAt, type OtherFields } from './read';
import { isEffort } from './reasoning';
import { fromEnvelope } from './reasoningEnvelope';
import { flatToolName, toolNameMap, type ToolNameMap } from './toolNames';

const SILENT = new Set([
  'model',
  'input',
  'stream',
  'stream_options',
  'include',
  'store',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'client_metadata',
]);
const NOTED: Record<string, string> = {
  metadata: 'translated responses are not stored, so their tags have nowhere to go',
  service_tier: 'an OpenAI capacity tier',
  truncation: 'the target does not truncate context for us',
  context_management: 'server-side compaction exists only on OpenAI',
  moderation: 'OpenAI moderation settings',
};
const REFUSED: Record<string, string> = {
  previous_response_id: 'translated responses are not stored; send the whole conversation as input',
  conversation: 'OpenAI conversations live on OpenAI; send the whole conversation as input',
  prompt: 'stored prompt templates live on OpenAI',
  max_tool_calls: 'the target has no limit on built-in tool calls',
};

const OTHER: OtherFields = { silent: SILENT, noted: NOTED, refused: REFUSED };

export function readResponsesRequest(j: Record<string, any>): IrRequest {
  const ir = emptyRequest();
  const names = toolNameMap(j.tools);
  for (const key of Object.keys(j)) {
    const v = j[key];
    if (!present(v)) continue;
    switch (key) {
      case 'instructions':
        if (typeof v === 'string') ir.system.push({ kind: 'text', text: v, path: key });
        else throw untranslatable(key, 'instructions given as input items cannot be translated; send a string');
        break;
      case 'max_output_tokens':
        ir.maxTokens = { value: numberAt(v, key), path: key };
        break;
      case 'temperature':
        ir.temperature = optionalNumber(v, key);
        break;
      case 'top_p':
        ir.topP = optionalNumber(v, key);
        break;
      case 'tools':
        readTools(ir, arrayAt(v, key), names);
        break;
      case 'tool_choice':
        if (isObject(v) && v.type === 'function') {
          const name = stringAt(v.name, `${key}.name`);
          const flat = typeof v.namespace === 'string' ? flatToolName(names, v.namespace, name) : name;
          ir.toolChoice = { value: { type: 'tool', name: flat }, path: key };
        } else ir.toolChoice = { value: chatToolChoice(v, key), path: key };
        break;
      case 'parallel_tool_calls':
        if (typeof v !== 'boolean') throw invalid(key, `${key} must be a boolean`);
        ir.parallelToolCalls = { value: v, path: key };
        break;
      case 'reasoning': {
        const r = objectAt(v, key);
        if (present(r.effort)) {
          if (!isEffort(r.effort)) throw invalid(`${key}.effort`, `unknown reasoning effort "${String(r.effort)}"`);
          ir.reasoning = { effort: r.effort, budgetTokens: null, path: `${key}.effort` };
        }
        break;
      }
      case 'text': {
        const t = objectAt(v, key);
        if (present(t.format)) readFormat(ir, objectAt(t.format, `${key}.format`), `${key}.format`);
        if (present(t.verbosity)) ir.verbosity = { value: stringAt(t.verbosity, `${key}.verbosity`), path: `${key}.verbosity` };
        break;
      }
      case 'user':
        ir.user = { value: stringAt(v, key), path: key };
        break;
      case 'safety_identifier':
        if (!present(j.user)) ir.user = { value: stringAt(v, key), path: key };
        break;
      case 'background':
        if (v === true) throw untranslatable(key, 'background responses need OpenAI to store them');
        break;
      case 'top_logprobs':
        if (v !== 0) throw untranslatable(key, 'the target returns no log probabilities');
        break;
      default:
        otherField(ir.dropped, key, OTHER);
    }
  }
  if (Array.isArray(j.include) && j.include.includes('message.output_text.logprobs')) {
    throw untranslatable('include', 'the target returns no log probabilities');
  }
  const input = j.input;
  if (typeof input === 'string') ir.items.push({ type: 'user', parts: [{ kind: 'text', text: input, path: 'input' }], path: 'input' });
  else if (present(input)) {
    const items = arrayAt(input, 'input');
    for (let i = 0; i < items.length; i++) readItem(ir, objectAt(items[i], `input[${i}]`), `input[${i}]`, names);
  }
  return ir;
}

function functionTool(o: Record<string, any>, p: string, name: string): IrTool {
  return {
    name,
    description: typeof o.description === 'string' ? o.description : null,
    parameters: isObject(o.parameters) ? o.parameters : null,
    strict: typeof o.strict === 'boolean' ? o.strict : null,
    path: p,
  };
}

/** Function tools as they are; a namespace's function tools under their flat names; hosted tools left out. */
function readTools(ir: IrRequest, tools: any[], names: ToolNameMap | null): void {
  tools.forEach((t, i) => {
    const p = `tools[${i}]`;
    const o = objectAt(t, p);
    if (o.type === 'function') {
      ir.tools.push(functionTool(o, p, stringAt(o.name, `${p}.name`)));
    } else if (o.type === 'namespace') {
      const ns = stringAt(o.name, `${p}.name`);
      arrayAt(o.tools, `${p}.tools`).forEach((inner, k) => {
        const q = `${p}.tools[${k}]`;
        const f = objectAt(inner, q);
        if (f.type !== 'function') throw untranslatable(`${q}.type`, `a "${String(f.type)}" tool inside a namespace cannot be translated; only function tools can`);
        ir.tools.push(functionTool(f, q, flatToolName(names, ns, stringAt(f.name, `${q}.name`))));
      });
    } else if (o.type === 'custom') {
      throw untranslatable(`${p}.type`, 'custom (free-form) tools cannot be translated; only function tools can');
    } else {
      dropHostedTool(ir, p, String(o.type), 'OpenAI');
    }
  });
  checkToolsLeft(ir, 'OpenAI');
}

function readFormat(ir: IrRequest, f: Record<string, any>, path: string): void {
  if (f.type === 'text') return;
  if (f.type === 'json_object') {
    ir.responseFormat = { value: { type: 'json_object' }, path };
    return;
  }
  if (f.type !== 'json_schema') throw invalid(`${path}.type`, `unknown text format "${String(f.type)}"`);
  ir.responseFormat = {
    value: {
      type: 'json_schema',
      name: typeof f.name === 'string' ? f.name : null,
      description: typeof f.description === 'string' ? f.description : null,
      schema: objectAt(f.schema, `${path}.schema`),
      strict: typeof f.strict === 'boolean' ? f.strict : null,
    },
    path,
  };
}

function inputParts(v: unknown, path: string): IrPart[] {
  if (typeof v === 'string') return [{ kind: 'text', text: v, path }];
  return arrayAt(v, path).map((b, i): IrPart => {
    const p = `${path}[${i}]`;
    const o = objectAt(b, p);
    switch (o.type) {
      case 'input_text':
      case 'output_text':
        return { kind: 'text', text: stringAt(o.text, `${p}.text`), path: p };
      case 'refusal':
        return { kind: 'text', text: stringAt(o.refusal, `${p}.refusal`), path: p };
      case 'input_image': {
        if (typeof o.image_url !== 'string') throw untranslatable(`${p}.file_id`, 'uploaded OpenAI files cannot be sent to another provider; send image_url');
        const detail = typeof o.detail === 'string' ? o.detail : null;
        return { kind: 'image', source: imageSourceFromUrl(o.image_url), detail, path: p };
      }
      case 'input_file': {
        const filename = typeof o.filename === 'string' ? o.filename : null;
        if (typeof o.file_data === 'string') {
          const { mediaType, data } = fileMediaType(o.file_data, filename);
          return { kind: 'file', mediaType, data, filename, path: p };
        }
        if (typeof o.file_url === 'string') return { kind: 'file_url', url: o.file_url, filename, path: p };
        throw untranslatable(`${p}.file_id`, 'uploaded OpenAI files cannot be sent to another provider; send file_data');
      }
      default:
        throw untranslatable(`${p}.type`, `a "${String(o.type)}" part cannot be translated`);
    }
  });
}

function textOnly(parts: IrPart[], path: string): IrTextPart[] {
  for (const p of parts) if (p.kind !== 'text') throw untranslatable(p.path, `only text can appear in ${path}`);
  return parts as IrTextPart[];
}

function readItem(ir: IrRequest, o: Record<string, any>, path: string, names: ToolNameMap | null): void {
  const type = o.type ?? 'message';
  switch (type) {
    case 'message': {
      const parts = inputParts(o.content, `${path}.content`);
      switch (o.role) {
        case 'user':
          ir.items.push({ type: 'user', parts, path });
          return;
        case 'assistant':
          ir.items.push({ type: 'assistant', parts: textOnly(parts, `${path}.content`), path });
          return;
        case 'system':
        case 'developer':
          ir.items.push({ type: 'system', parts: textOnly(parts, `${path}.content`), path });
          return;
        default:
          throw invalid(`${path}.role`, `unknown role "${String(o.role)}"`);
      }
    }
    case 'function_call': {
      const name = stringAt(o.name, `${path}.name`);
      // A namespaced call (Codex sends `namespace` beside `name`) goes back under the flat name it was offered as.
      const ns = typeof o.namespace === 'string' && o.namespace !== '' ? o.namespace : null;
      ir.items.push({
        type: 'tool_call',
        id: stringAt(o.call_id, `${path}.call_id`),
        name: ns ? flatToolName(names, ns, name) : name,
        arguments: typeof o.arguments === 'string' ? o.arguments : JSON.stringify(o.arguments ?? {}),
        path,
      });
      return;
    }
    case 'function_call_output': {
      const out = o.output;
      ir.items.push({
        type: 'tool_result',
        callId: stringAt(o.call_id, `${path}.call_id`),
        parts: out === undefined || out === null ? [] : inputParts(out, `${path}.output`),
        isError: false,
        path,
      });
      return;
    }
    case 'reasoning': {
      // The summary, or the raw reasoning text (open-weight models) when there is no summary.
      const parts = Array.isArray(o.summary) && o.summary.length > 0 ? o.summary : Array.isArray(o.content) ? o.content : [];
      const text = parts.map((s: any) => (typeof s?.text === 'string' ? s.text : '')).join('');
      const env = fromEnvelope(o.encrypted_content);
      ir.items.push({ type: 'reasoning', text, signature: env?.signature ?? null, redacted: env?.redacted ?? null, path });
      return;
    }
    case 'web_search_call':
      // A search OpenAI ran earlier in the conversation (its findings are in the message that followed).
      note(ir.dropped, path, 'an OpenAI web search call from earlier in the conversation; its answer is kept');
      return;
    case 'item_reference':
      throw untranslatable(`${path}.type`, 'item references need OpenAI to have stored the items; send them in full');
    default:
      throw untranslatable(`${path}.type`, `"${String(type)}" items belong to OpenAI-hosted tools and cannot be translated`);
  }
}
