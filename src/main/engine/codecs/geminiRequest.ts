// Google Gemini (Generative Language API, v1beta) requests: read an inbound GenerateContentRequest
// into the neutral model (for a Chat, Anthropic or Responses target), and write one for a native
// Gemini target from the neutral model. The model and streaming live in the URL
// (`models/{model}:generateContent` / `:streamGenerateContent`), not the body: `geminiCall` reads
// them from the path, `geminiUpstreamPath` builds them. Gemini may omit function call ids; the
// reader makes stable ones from the position of the call (contents index and call index), and pairs
// each functionResponse with its call by id, else by name. See
// docs/decisions/gemini-24-request-codec.md.
import { invalid, untranslatable } from './codecError';
import { isObject } from './content';
import { checkToolsLeft, dropHostedTool } from './hostedTools';
import { emptyRequest, type Effort, type IrPart, type IrReasoning, type IrRequest, type IrTextPart, type IrToolChoice } from './ir';
import { arrayAt, note, numberAt, objectAt, optionalNumber, otherField, present, stringAt, type OtherFields } from './read';
import { EFFORT_BUDGET, effortForBudget } from './reasoning';
import { fromEnvelope } from './reasoningEnvelope';
import type { RequestOptions } from './types';

// ---- the URL ---------------------------------------------------------------------------------

export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens';

export interface GeminiCall {
  /** The model id without its `models/` prefix. */
  model: string;
  method: GeminiMethod;
  stream: boolean;
  /** `alt=sse` was asked (SSE frames); without it a stream is one JSON array. */
  sse: boolean;
}

// The model may hold a slash (a routed `provider/model`) or a colon (`qwen2.5:7b`): the method is after the last colon.
const CALL_PATH = /^\/(?:v1beta|v1|v1alpha)\/models\/(.+):(generateContent|streamGenerateContent|countTokens)$/;

/** The model and method of an inbound Gemini URL (`/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`), or null. */
export function geminiCall(url: string): GeminiCall | null {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const m = CALL_PATH.exec(path);
  if (!m) return null;
  let model = m[1]!;
  if (model.indexOf('%') >= 0) {
    try {
      model = decodeURIComponent(model);
    } catch {
      return null;
    }
  }
  if (!model) return null;
  const method = m[2] as GeminiMethod;
  // The usual query is exactly `alt=sse`; anything else is read as a query.
  const query = q < 0 ? '' : url.slice(q + 1);
  const sse = query === 'alt=sse' || (query !== '' && new URLSearchParams(query).get('alt') === 'sse');
  return { model, method, stream: method === 'streamGenerateContent', sse };
}

/** The upstream path for a Gemini target: streams are asked as SSE. */
export function geminiUpstreamPath(model: string, stream: boolean): string {
  const id = encodeURIComponent(model.replace(/^models\//, ''));
  return stream ? `/v1beta/models/${id}:streamGenerateContent?alt=sse` : `/v1beta/models/${id}:generateContent`;
}

// ---- reading an inbound Gemini request --------------------------------------------------------

const SILENT = new Set(['model', 'contents', 'generationConfig', 'toolConfig']);
const NOTED: Record<string, string> = {
  labels: 'Google billing labels',
  serviceTier: 'a Google capacity tier',
  store: 'Google request logging',
};
const REFUSED: Record<string, string> = {
  cachedContent: 'cached content lives on Google; send the whole conversation instead',
};
const OTHER: OtherFields = { silent: SILENT, noted: NOTED, refused: REFUSED };

/** Tools Google runs on its own servers (Tool fields other than functionDeclarations). */
const GOOGLE_HOSTED = new Set(['googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext', 'computerUse', 'fileSearch', 'googleMaps', 'enterpriseWebSearch', 'retrieval']);

/** A function call id the client did not give: stable for a call's place in the history. */
export const geminiCallId = (contentIndex: number, callIndex: number) => `gcall_${contentIndex}_${callIndex}`;

export function readGeminiRequest(j: Record<string, any>): IrRequest {
  const ir = emptyRequest();
  for (const key of Object.keys(j)) {
    const v = j[key];
    if (!present(v)) continue;
    switch (key) {
      case 'systemInstruction':
        ir.system.push(...systemParts(v, key));
        break;
      case 'tools':
        readTools(ir, arrayAt(v, key));
        break;
      case 'safetySettings': {
        const list = arrayAt(v, key).map((s, i) => objectAt(s, `${key}[${i}]`));
        if (list.length) ir.safetySettings = { value: list, path: key };
        break;
      }
      default:
        otherField(ir.dropped, key, OTHER);
    }
  }
  if (present(j.generationConfig)) readGenerationConfig(ir, objectAt(j.generationConfig, 'generationConfig'));
  if (present(j.toolConfig)) readToolConfig(ir, objectAt(j.toolConfig, 'toolConfig'));
  const contents = arrayAt(j.contents, 'contents');
  const calls = new CallPairing();
  for (let i = 0; i < contents.length; i++) readContent(ir, objectAt(contents[i], `contents[${i}]`), i, calls);
  return ir;
}

function systemParts(v: unknown, path: string): IrTextPart[] {
  const c = objectAt(v, path);
  return arrayAt(c.parts, `${path}.parts`).map((p, i) => {
    const pp = `${path}.parts[${i}]`;
    const o = objectAt(p, pp);
    if (typeof o.text !== 'string') throw untranslatable(pp, 'a system instruction can hold text parts only');
    return { kind: 'text', text: o.text, path: pp };
  });
}

function readTools(ir: IrRequest, tools: any[]): void {
  tools.forEach((t, i) => {
    const p = `tools[${i}]`;
    const o = objectAt(t, p);
    for (const field of Object.keys(o)) {
      if (!present(o[field])) continue;
      if (field === 'functionDeclarations') {
        arrayAt(o[field], `${p}.functionDeclarations`).forEach((d, k) => readDeclaration(ir, objectAt(d, `${p}.functionDeclarations[${k}]`), `${p}.functionDeclarations[${k}]`));
      } else if (GOOGLE_HOSTED.has(field)) {
        dropHostedTool(ir, `${p}.${field}`, field, 'Google');
      } else {
        throw untranslatable(`${p}.${field}`, `the Gemini tool "${field}" cannot be translated; only function declarations can`);
      }
    }
  });
  checkToolsLeft(ir, 'Google');
}

function readDeclaration(ir: IrRequest, d: Record<string, any>, p: string): void {
  let parameters: Record<string, unknown> | null = null;
  if (present(d.parametersJsonSchema)) {
    if (present(d.parameters)) throw invalid(`${p}.parametersJsonSchema`, 'give parameters or parametersJsonSchema, not both');
    parameters = objectAt(d.parametersJsonSchema, `${p}.parametersJsonSchema`);
  } else if (present(d.parameters)) {
    parameters = jsonSchemaOf(objectAt(d.parameters, `${p}.parameters`));
  }
  ir.tools.push({
    name: stringAt(d.name, `${p}.name`),
    description: typeof d.description === 'string' ? d.description : null,
    parameters,
    strict: null,
    path: p,
  });
  if (present(d.behavior)) note(ir.dropped, `${p}.behavior`, 'non-blocking function calls exist only on Gemini');
  if (present(d.response) || present(d.responseJsonSchema)) note(ir.dropped, `${p}.response`, 'the target takes no schema for what a function returns');
}

/**
 * Gemini's Schema (an OpenAPI subset: upper-case `type`, `nullable`, `propertyOrdering`) as the
 * JSON Schema Chat and Anthropic tools take. Anything else is kept as it is.
 */
export function jsonSchemaOf(s: Record<string, any>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    switch (k) {
      case 'type':
        out.type = typeof v === 'string' ? v.toLowerCase() : v;
        break;
      case 'nullable':
      case 'propertyOrdering':
        break;
      case 'properties':
        out.properties = isObject(v) ? Object.fromEntries(Object.entries(v).map(([n, sub]) => [n, isObject(sub) ? jsonSchemaOf(sub) : sub])) : v;
        break;
      case 'items':
        out.items = isObject(v) ? jsonSchemaOf(v) : v;
        break;
      case 'anyOf':
        out.anyOf = Array.isArray(v) ? v.map((sub) => (isObject(sub) ? jsonSchemaOf(sub) : sub)) : v;
        break;
      default:
        out[k] = v;
    }
  }
  if (s.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function readToolConfig(ir: IrRequest, tc: Record<string, any>): void {
  if (present(tc.retrievalConfig)) note(ir.dropped, 'toolConfig.retrievalConfig', 'a location for Google-hosted tools');
  if (!present(tc.functionCallingConfig)) return;
  const base = 'toolConfig.functionCallingConfig';
  const fc = objectAt(tc.functionCallingConfig, base);
  const mode = present(fc.mode) ? String(fc.mode).toUpperCase() : 'MODE_UNSPECIFIED';
  const path = `${base}.mode`;
  let allowed: string[] | null = null;
  if (present(fc.allowedFunctionNames)) {
    allowed = arrayAt(fc.allowedFunctionNames, `${base}.allowedFunctionNames`).map((n, i) => stringAt(n, `${base}.allowedFunctionNames[${i}]`));
    for (const [i, name] of allowed.entries()) {
      if (!ir.tools.some((t) => t.name === name)) throw invalid(`${base}.allowedFunctionNames[${i}]`, `no function named "${name}" is declared in tools`);
    }
  }
  let choice: IrToolChoice | null;
  switch (mode) {
    case 'MODE_UNSPECIFIED':
    case 'AUTO':
      choice = present(fc.mode) ? { type: 'auto' } : null;
      break;
    case 'VALIDATED':
      choice = { type: 'auto' };
      note(ir.dropped, path, 'schema-validated calls exist only on Gemini; the target calls functions in its usual way');
      break;
    case 'ANY':
      choice = allowed && allowed.length === 1 ? { type: 'tool', name: allowed[0]! } : { type: 'required' };
      break;
    case 'NONE':
      choice = { type: 'none' };
      break;
    default:
      throw invalid(path, `unknown function calling mode "${String(fc.mode)}"`);
  }
  // Several allowed names: the other functions are not offered at all (the same meaning).
  if (allowed && allowed.length > 0 && mode !== 'NONE') ir.tools = ir.tools.filter((t) => allowed.includes(t.name));
  if (choice) ir.toolChoice = { value: choice, path };
}

function readGenerationConfig(ir: IrRequest, g: Record<string, any>): void {
  const at = (k: string) => `generationConfig.${k}`;
  for (const key of Object.keys(g)) {
    const v = g[key];
    if (!present(v)) continue;
    const p = at(key);
    switch (key) {
      case 'maxOutputTokens':
        ir.maxTokens = { value: numberAt(v, p), path: p };
        break;
      case 'temperature':
        ir.temperature = optionalNumber(v, p);
        break;
      case 'topP':
        ir.topP = optionalNumber(v, p);
        break;
      case 'topK':
        ir.topK = optionalNumber(v, p);
        break;
      case 'stopSequences': {
        const stops = arrayAt(v, p).map((s, i) => stringAt(s, `${p}[${i}]`));
        if (stops.length) ir.stop = { value: stops, path: p };
        break;
      }
      case 'candidateCount':
        if (numberAt(v, p) !== 1) throw untranslatable(p, 'the target returns one candidate per request (candidateCount must be 1)');
        break;
      case 'thinkingConfig':
        ir.reasoning = readThinking(objectAt(v, p), p);
        break;
      case 'responseMimeType':
      case 'responseSchema':
      case 'responseJsonSchema':
      case '_responseJsonSchema':
        break;
      case 'responseModalities': {
        const list = arrayAt(v, p).map((m, i) => String(stringAt(m, `${p}[${i}]`)).toUpperCase());
        if (list.some((m) => m !== 'TEXT')) throw untranslatable(p, 'the target answers with text only (no image or audio output)');
        break;
      }
      case 'speechConfig':
        throw untranslatable(p, 'the target has no speech output');
      case 'responseLogprobs':
        if (v === true) throw untranslatable(p, 'the target returns no log probabilities');
        break;
      case 'logprobs':
        throw untranslatable(p, 'the target returns no log probabilities');
      case 'presencePenalty':
      case 'frequencyPenalty':
        if (v !== 0) throw untranslatable(p, `${key === 'presencePenalty' ? 'a presence' : 'a frequency'} penalty cannot be translated`);
        break;
      case 'seed':
        note(ir.dropped, p, 'the target takes no sampling seed');
        break;
      case 'mediaResolution':
        note(ir.dropped, p, 'a Gemini image resolution setting');
        break;
      default:
        note(ir.dropped, p, 'not part of the target protocol');
    }
  }
  readResponseFormat(ir, g);
}

const LEVELS: Record<string, Effort> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' };

function readThinking(t: Record<string, any>, path: string): IrReasoning | null {
  const hasBudget = present(t.thinkingBudget);
  if (hasBudget && present(t.thinkingLevel)) throw invalid(`${path}.thinkingLevel`, 'give thinkingBudget or thinkingLevel, not both');
  if (present(t.thinkingLevel)) {
    const level = String(t.thinkingLevel).toUpperCase();
    if (level === 'THINKING_LEVEL_UNSPECIFIED') return null;
    const effort = LEVELS[level];
    if (!effort) throw invalid(`${path}.thinkingLevel`, `unknown thinking level "${String(t.thinkingLevel)}"`);
    return { effort, budgetTokens: null, path: `${path}.thinkingLevel` };
  }
  if (hasBudget) {
    const budget = numberAt(t.thinkingBudget, `${path}.thinkingBudget`);
    const p = `${path}.thinkingBudget`;
    if (budget === 0) return { effort: 'none', budgetTokens: null, path: p };
    // -1: Gemini decides how long to think; the target gets a middle effort.
    if (budget < 0) return { effort: 'medium', budgetTokens: null, path: p };
    return { effort: null, budgetTokens: budget, path: p };
  }
  return null;
}

function readResponseFormat(ir: IrRequest, g: Record<string, any>): void {
  const mime = present(g.responseMimeType) ? stringAt(g.responseMimeType, 'generationConfig.responseMimeType') : null;
  const jsonKey = present(g.responseJsonSchema) ? 'responseJsonSchema' : present(g._responseJsonSchema) ? '_responseJsonSchema' : null;
  if (jsonKey && present(g.responseSchema)) throw invalid(`generationConfig.${jsonKey}`, 'give responseSchema or responseJsonSchema, not both');
  let schema: Record<string, unknown> | null = null;
  let path = 'generationConfig.responseMimeType';
  if (jsonKey) {
    path = `generationConfig.${jsonKey}`;
    schema = objectAt(g[jsonKey], path);
  } else if (present(g.responseSchema)) {
    path = 'generationConfig.responseSchema';
    schema = jsonSchemaOf(objectAt(g.responseSchema, path));
  }
  if (mime !== null && mime !== 'text/plain' && mime !== 'application/json') {
    throw untranslatable('generationConfig.responseMimeType', `the target cannot answer as "${mime}"; only text/plain and application/json can be translated`);
  }
  if (schema) ir.responseFormat = { value: { type: 'json_schema', name: null, description: null, schema, strict: null }, path };
  else if (mime === 'application/json') ir.responseFormat = { value: { type: 'json_object' }, path };
}

/** Pairs functionResponses with their functionCalls across the history: by id, else by name, first unanswered first. */
class CallPairing {
  private open: { id: string; name: string }[] = [];

  call(id: string, name: string): void {
    this.open.push({ id, name });
  }

  answer(id: string | null, name: string): string | null {
    let i = id !== null ? this.open.findIndex((c) => c.id === id) : -1;
    if (i < 0) i = this.open.findIndex((c) => c.name === name);
    if (i < 0) return null;
    const [c] = this.open.splice(i, 1);
    return c!.id;
  }
}

function readContent(ir: IrRequest, c: Record<string, any>, index: number, calls: CallPairing): void {
  const path = `contents[${index}]`;
  // A single-turn request may leave the role out; `function` is the older SDKs' role for results.
  const role = present(c.role) ? c.role : 'user';
  if (role !== 'user' && role !== 'model' && role !== 'function') throw invalid(`${path}.role`, `unknown role "${String(c.role)}"; Gemini roles are user and model`);
  const model = role === 'model';
  const parts = arrayAt(c.parts, `${path}.parts`);
  let user: IrPart[] = [];
  let text: IrTextPart[] = [];
  const flush = () => {
    if (user.length) ir.items.push({ type: 'user', parts: user, path });
    if (text.length) ir.items.push({ type: 'assistant', parts: text, path });
    user = [];
    text = [];
  };
  let callIndex = 0;
  for (let i = 0; i < parts.length; i++) {
    const p = `${path}.parts[${i}]`;
    const o = objectAt(parts[i], p);
    const signature = typeof o.thoughtSignature === 'string' && o.thoughtSignature ? o.thoughtSignature : undefined;
    if (o.thought === true) {
      if (!model) throw invalid(`${p}.thought`, 'thought parts belong to model turns');
      flush();
      const env = fromEnvelope(signature);
      const item: Extract<IrRequest['items'][number], { type: 'reasoning' }> = {
        type: 'reasoning',
        text: typeof o.text === 'string' ? o.text : '',
        signature: env?.signature ?? null,
        redacted: env?.redacted ?? null,
        path: p,
      };
      if (signature && !env) item.thoughtSignature = signature;
      ir.items.push(item);
      continue;
    }
    if (typeof o.text === 'string') {
      const t: IrTextPart = { kind: 'text', text: o.text, path: p };
      if (signature) t.thoughtSignature = signature;
      (model ? text : user).push(t);
    } else if (present(o.inlineData)) {
      if (model) throw untranslatable(`${p}.inlineData`, 'media in a model turn cannot be translated');
      user.push(inlinePart(objectAt(o.inlineData, `${p}.inlineData`), `${p}.inlineData`));
    } else if (present(o.fileData)) {
      if (model) throw untranslatable(`${p}.fileData`, 'media in a model turn cannot be translated');
      user.push(filePart(objectAt(o.fileData, `${p}.fileData`), `${p}.fileData`));
    } else if (present(o.functionCall)) {
      if (!model) throw invalid(`${p}.functionCall`, 'function calls belong to model turns');
      flush();
      const fc = objectAt(o.functionCall, `${p}.functionCall`);
      const name = stringAt(fc.name, `${p}.functionCall.name`);
      const id = typeof fc.id === 'string' && fc.id ? fc.id : geminiCallId(index, callIndex);
      callIndex++;
      calls.call(id, name);
      const args = present(fc.args) ? objectAt(fc.args, `${p}.functionCall.args`) : {};
      const item: Extract<IrRequest['items'][number], { type: 'tool_call' }> = { type: 'tool_call', id, name, arguments: JSON.stringify(args), path: p };
      if (signature) item.thoughtSignature = signature;
      ir.items.push(item);
    } else if (present(o.functionResponse)) {
      if (model) throw invalid(`${p}.functionResponse`, 'function responses belong to user turns');
      flush();
      ir.items.push(functionResult(objectAt(o.functionResponse, `${p}.functionResponse`), `${p}.functionResponse`, calls, ir.dropped));
    } else if (present(o.executableCode) || present(o.codeExecutionResult)) {
      throw untranslatable(p, 'code Gemini ran on its own servers cannot be translated');
    } else {
      throw invalid(p, 'a part needs text, inlineData, fileData, functionCall or functionResponse');
    }
  }
  flush();
}

function functionResult(fr: Record<string, any>, p: string, calls: CallPairing, dropped: string[]): IrRequest['items'][number] {
  const name = stringAt(fr.name, `${p}.name`);
  const given = typeof fr.id === 'string' && fr.id ? fr.id : null;
  const callId = calls.answer(given, name);
  if (callId === null) throw invalid(`${p}.name`, `this response answers no earlier function call named "${name}"`);
  const response = present(fr.response) ? objectAt(fr.response, `${p}.response`) : {};
  const keys = Object.keys(response);
  let isError = false;
  let text: string;
  if (keys.length === 1 && keys[0] === 'output' && typeof response.output === 'string') text = response.output;
  else if (keys.length === 1 && keys[0] === 'error') {
    isError = true;
    text = typeof response.error === 'string' ? response.error : JSON.stringify(response.error);
  } else text = JSON.stringify(response);
  const parts: IrPart[] = [{ kind: 'text', text, path: `${p}.response` }];
  if (present(fr.parts)) {
    arrayAt(fr.parts, `${p}.parts`).forEach((x, i) => {
      const pp = `${p}.parts[${i}]`;
      const o = objectAt(x, pp);
      if (present(o.inlineData)) parts.push(inlinePart(objectAt(o.inlineData, `${pp}.inlineData`), `${pp}.inlineData`));
      else if (present(o.fileData)) parts.push(filePart(objectAt(o.fileData, `${pp}.fileData`), `${pp}.fileData`));
      else throw untranslatable(pp, 'a function response part can hold media only');
    });
  }
  if (present(fr.willContinue) || present(fr.scheduling)) note(dropped, p, 'non-blocking function responses exist only on Gemini');
  return { type: 'tool_result', callId, parts, isError, path: p };
}

function inlinePart(d: Record<string, any>, p: string): IrPart {
  const mediaType = stringAt(d.mimeType, `${p}.mimeType`);
  const data = stringAt(d.data, `${p}.data`);
  if (mediaType.startsWith('image/')) return { kind: 'image', source: { type: 'base64', mediaType, data }, detail: null, path: p };
  if (mediaType === 'application/pdf' || mediaType === 'text/plain') return { kind: 'file', mediaType, data, filename: null, path: p };
  throw untranslatable(`${p}.mimeType`, `"${mediaType}" data cannot be translated; images, PDF and plain text can`);
}

function filePart(d: Record<string, any>, p: string): IrPart {
  const uri = stringAt(d.fileUri, `${p}.fileUri`);
  if (/^https:\/\/generativelanguage\.googleapis\.com\//.test(uri) || uri.startsWith('gs://')) {
    throw untranslatable(`${p}.fileUri`, 'a file uploaded to Google cannot be read by another provider; send it inline');
  }
  if (!/^https?:\/\//.test(uri)) throw untranslatable(`${p}.fileUri`, 'only files at a web address can be translated');
  const mediaType = typeof d.mimeType === 'string' ? d.mimeType : guessMediaType(uri);
  if (mediaType?.startsWith('image/')) return { kind: 'image', source: { type: 'url', url: uri }, detail: null, path: p };
  if (mediaType === 'application/pdf') return { kind: 'file_url', url: uri, filename: null, path: p };
  throw untranslatable(`${p}.mimeType`, `a "${mediaType ?? 'unknown'}" file cannot be translated; images and PDF can`);
}

const EXTENSIONS: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  pdf: 'application/pdf',
};

function guessMediaType(url: string): string | null {
  const m = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url);
  return m ? (EXTENSIONS[m[1]!.toLowerCase()] ?? null) : null;
}

// ---- writing a request for a Gemini target ----------------------------------------------------

/** Google's documented placeholder for a function call Gemini 3 did not make (it then skips signature checks). */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

type GeminiPart = Record<string, unknown>;
interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

/** Gemini's generation number from a model id (`gemini-3-pro-preview` → 3), or null. */
function generation(model: string): number | null {
  const m = /^(?:models\/)?gemini-(\d+)/.exec(model);
  return m ? Number(m[1]) : null;
}

export function writeGeminiRequest(ir: IrRequest, opts: RequestOptions): Record<string, unknown> {
  const dropped = ir.dropped;
  const gen = generation(opts.model);
  const system: GeminiPart[] = [];
  for (const p of ir.system) if (p.text !== '') system.push({ text: p.text });

  const contents: GeminiContent[] = [];
  const names = new Map<string, string>();
  let reasoningNoted = false;
  const into = (role: 'user' | 'model'): GeminiPart[] => {
    const last = contents[contents.length - 1];
    if (last && last.role === role) return last.parts;
    const c: GeminiContent = { role, parts: [] };
    contents.push(c);
    return c.parts;
  };

  for (const item of ir.items) {
    switch (item.type) {
      case 'system':
        for (const p of item.parts) if (p.text !== '') system.push({ text: p.text });
        break;
      case 'user': {
        const parts = item.parts.map(geminiPart).filter((p) => p !== null);
        if (parts.length) into('user').push(...parts);
        break;
      }
      case 'assistant': {
        const parts = item.parts.filter((p) => p.text !== '' || p.thoughtSignature).map(geminiPart).filter((p) => p !== null);
        if (parts.length) into('model').push(...parts);
        break;
      }
      case 'reasoning':
        if (item.thoughtSignature) {
          // Gemini's own thought, sent back as it came.
          into('model').push({ text: item.text, thought: true, thoughtSignature: item.thoughtSignature });
        } else if (!reasoningNoted) {
          reasoningNoted = true;
          note(dropped, item.path, 'earlier reasoning without a Gemini signature is not sent to a Gemini target');
        }
        break;
      case 'tool_call': {
        names.set(item.id, item.name);
        let args: unknown = {};
        if (item.arguments.trim() !== '') {
          try {
            args = JSON.parse(item.arguments);
          } catch {
            args = null;
          }
        }
        if (!isObject(args)) {
          note(dropped, item.path, 'arguments were not a JSON object; kept as _raw_arguments');
          args = { _raw_arguments: item.arguments };
        }
        const part: GeminiPart = { functionCall: { id: item.id, name: item.name, args } };
        if (item.thoughtSignature) part.thoughtSignature = item.thoughtSignature;
        into('model').push(part);
        break;
      }
      case 'tool_result': {
        const name = names.get(item.callId);
        if (name === undefined) throw untranslatable(item.path, `no earlier function call has the id "${item.callId}"; Gemini needs the function's name`);
        const texts = item.parts.filter((p): p is IrTextPart => p.kind === 'text');
        const media = item.parts.filter((p) => p.kind !== 'text');
        const text = texts.map((p) => p.text).join('\n');
        const parsed = parseObject(text);
        const response = item.isError ? { error: parsed ?? text } : (parsed ?? { output: text });
        const parts = into('user');
        parts.push({ functionResponse: { id: item.callId, name, response } });
        // Media a function returned follow its response in the same turn (every Gemini model reads them there).
        for (const m of media) {
          const p = geminiPart(m);
          if (p) parts.push(p);
        }
        break;
      }
    }
  }

  // Gemini 3 refuses a model turn whose function calls carry no signature (calls another provider made).
  if (gen !== null && gen >= 3) {
    for (const c of contents) {
      if (c.role !== 'model') continue;
      const first = c.parts.find((p) => p.functionCall !== undefined);
      if (first && !c.parts.some((p) => p.functionCall !== undefined && p.thoughtSignature)) first.thoughtSignature = SKIP_SIGNATURE;
    }
  }

  const body: Record<string, unknown> = { contents };
  if (system.length) body.systemInstruction = { parts: system };

  if (ir.tools.length) {
    body.tools = [
      {
        functionDeclarations: ir.tools.map((t) => {
          const d: Record<string, unknown> = { name: t.name };
          if (t.description) d.description = t.description;
          d.parametersJsonSchema = t.parameters ?? { type: 'object', properties: {} };
          return d;
        }),
      },
    ];
    const c = ir.toolChoice?.value;
    if (c) body.toolConfig = { functionCallingConfig: functionCallingConfig(c) };
    if (ir.parallelToolCalls?.value === false) note(dropped, ir.parallelToolCalls.path, 'Gemini has no switch for parallel function calls');
  }

  const g: Record<string, unknown> = {};
  if (ir.maxTokens) g.maxOutputTokens = ir.maxTokens.value;
  if (ir.temperature) g.temperature = ir.temperature.value;
  if (ir.topP) g.topP = ir.topP.value;
  if (ir.topK) g.topK = ir.topK.value;
  if (ir.stop && ir.stop.value.length) {
    if (ir.stop.value.length > 5) throw untranslatable(ir.stop.path, 'Gemini takes at most 5 stop sequences');
    g.stopSequences = ir.stop.value;
  }
  if (ir.responseFormat) {
    const f = ir.responseFormat.value;
    g.responseMimeType = 'application/json';
    if (f.type === 'json_schema') g.responseJsonSchema = f.schema;
  }
  if (ir.reasoning) {
    const t = thinkingConfig(ir.reasoning, opts.model, gen, dropped);
    if (t) g.thinkingConfig = t;
  }
  if (Object.keys(g).length) body.generationConfig = g;
  if (ir.safetySettings) body.safetySettings = ir.safetySettings.value;
  if (ir.user) note(dropped, ir.user.path, 'Gemini takes no end-user id');
  if (ir.verbosity) note(dropped, ir.verbosity.path, 'Gemini has no verbosity setting');
  return body;
}

function geminiPart(p: IrPart): GeminiPart | null {
  switch (p.kind) {
    case 'text': {
      if (p.text === '' && !p.thoughtSignature) return null;
      const part: GeminiPart = { text: p.text };
      if (p.thoughtSignature) part.thoughtSignature = p.thoughtSignature;
      return part;
    }
    case 'image':
      if (p.source.type === 'base64') return { inlineData: { mimeType: p.source.mediaType, data: p.source.data } };
      return { fileData: fileData(p.source.url, null) };
    case 'file':
      return { inlineData: { mimeType: p.mediaType, data: p.data } };
    case 'file_url':
      return { fileData: fileData(p.url, 'application/pdf') };
  }
}

function fileData(url: string, fallback: string | null): Record<string, string> {
  const mimeType = guessMediaType(url) ?? fallback;
  return mimeType ? { mimeType, fileUri: url } : { fileUri: url };
}

const parseObject = (text: string): Record<string, unknown> | null => {
  if (!text.startsWith('{')) return null;
  try {
    const v = JSON.parse(text);
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
};

function functionCallingConfig(c: IrToolChoice): Record<string, unknown> {
  switch (c.type) {
    case 'auto':
      return { mode: 'AUTO' };
    case 'required':
      return { mode: 'ANY' };
    case 'none':
      return { mode: 'NONE' };
    case 'tool':
      return { mode: 'ANY', allowedFunctionNames: [c.name] };
  }
}

/**
 * Reasoning as Gemini's thinkingConfig: Gemini 3 takes a level (low or high; Flash also minimal
 * and medium), Gemini 2.5 a token budget (Pro 128..32768 and always on, Flash 0..24576).
 */
function thinkingConfig(r: IrReasoning, model: string, gen: number | null, dropped: string[]): Record<string, unknown> | null {
  const flash = /flash/.test(model);
  const effort: Effort = r.effort ?? (r.budgetTokens !== null ? effortForBudget(r.budgetTokens) : 'medium');
  if (gen !== null && gen >= 3) {
    let level: string;
    if (effort === 'none' || effort === 'minimal') level = flash ? 'MINIMAL' : 'LOW';
    else if (effort === 'low') level = 'LOW';
    else if (effort === 'medium') level = flash ? 'MEDIUM' : 'HIGH';
    else level = 'HIGH';
    if (effort === 'none') note(dropped, r.path, 'Gemini 3 always thinks; it thinks as little as it can');
    return { thinkingLevel: level, includeThoughts: true };
  }
  const pro = /^(?:models\/)?gemini-2\.5-pro/.test(model);
  const [min, max] = pro ? [128, 32768] : [0, 24576];
  if (effort === 'none' && r.budgetTokens === null) {
    if (pro) {
      note(dropped, r.path, 'Gemini 2.5 Pro always thinks; it thinks as little as it can');
      return { thinkingBudget: min, includeThoughts: true };
    }
    return { thinkingBudget: 0 };
  }
  const wanted = r.budgetTokens ?? EFFORT_BUDGET[effort as Exclude<Effort, 'none'>];
  return { thinkingBudget: Math.max(min, Math.min(max, wanted)), includeThoughts: true };
}
