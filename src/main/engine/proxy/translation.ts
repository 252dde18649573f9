// The glue between the pipeline and the codecs: for one target, which API shape it is called in,
// whether the request can be expressed there, the upstream body and endpoint, and the dispatch step
// that turns a translated upstream answer into the inbound protocol's (a stream running on frames,
// a JSON answer read whole, errors in the inbound error shape). Native targets pass through here
// untouched. The codecs are pure (../codecs); this module owns what needs I/O or the clock.
import { CodecError, codecFor, geminiToGemini, upstreamEndpointOf, type Codec, type RequestOptions, type UpstreamShape } from '../codecs';
import { errorEventBody } from '../codecs/errors';
import { DROPPED_TOOLS_HEADER } from '../codecs/hostedTools';
import type { Clock } from '../clock';
import type { SecretRedactor } from '../logger';
import type { Exclusion, UpstreamFailure } from '../resilience/port';
import type { Target } from '../routing/target';
import { inboundShapeOf, upstreamShapeFor } from '../routing/upstreamShape';
import type { ResolvedSettings } from '../settings/resolve';
import type { InbandError } from '../streams/errorStatus';
import { jsonOutcome } from '../streams/jsonOutcome';
import type { ApiShape } from '../streams/shape';
import { toTransportError, type UpstreamBody } from '../upstream/client';
import type { UpstreamEndpoint } from '../upstream/headers';
import type { AttemptOutcome, Dispatch, ReadyResponse, RelayableResponse } from './attempt';
import { rewriteModel } from './body';
import type { BodyReader } from './bodyReader';
import { wantsStream, type InboundCall } from './inbound';
import { ParsedCall, readsTopLevelOnly, topLevelOf } from './parsedCall';
import { streamPolicyFor } from './streamPolicy';
import { TranslatedJson } from './translatedBody';
import { UpstreamStream } from './upstreamStream';

/** The largest non-stream upstream answer read for translation (a long answer is well under 1 MiB). */
export const TRANSLATED_ANSWER_LIMIT = 32 * 1024 * 1024;

/** The shape the target is called in for this request. */
export function upstreamShapeOf(call: InboundCall, target: Target): ApiShape {
  return target.upstream ?? upstreamShapeFor(target.conn, inboundShapeOf(call.protocol));
}

/** The codec for this attempt, or null when it is native (or count_tokens, which is never translated). */
export function codecOf(call: InboundCall, target: Target): Codec | null {
  if (call.protocol === 'anthropic-count-tokens' || call.protocol === 'gemini-count-tokens' || call.protocol === 'models') return null;
  const inbound = inboundShapeOf(call.protocol);
  const upstream = upstreamShapeOf(call, target);
  // A Gemini client streaming a JSON array, on a Gemini connection (always called with SSE): rewritten.
  if (upstream === 'gemini' && inbound === 'gemini') return call.gemini?.stream && !call.gemini.sse ? geminiToGemini : null;
  return upstream === inbound ? null : codecFor(inbound, upstream as UpstreamShape);
}

/**
 * OpenAI's own API (kind `openai`) and OpenAI reasoning models anywhere (`o1`, `o3`, `o4-mini`,
 * `gpt-5*`, also behind a vendor prefix such as `openai/o3`) take `max_completion_tokens` and
 * refuse `max_tokens`; every other Chat server reads `max_tokens`. A connection can pin the
 * field with `providerSpecificData.chatMaxTokensField`.
 */
export function chatMaxTokensField(target: Target): RequestOptions['chatMaxTokensField'] {
  const pinned = target.conn.providerSpecificData?.chatMaxTokensField;
  if (pinned === 'max_tokens' || pinned === 'max_completion_tokens') return pinned;
  if (target.conn.kind === 'openai') return 'max_completion_tokens';
  const bare = target.model.slice(target.model.lastIndexOf('/') + 1).toLowerCase();
  return /^(o\d|gpt-5)/.test(bare) ? 'max_completion_tokens' : 'max_tokens';
}

interface Prepared {
  body: Buffer;
  endpoint: UpstreamEndpoint;
  dropped: string[];
  /** The provider-hosted tools left out, for the client's `x-switchyard-dropped-tools` header. */
  droppedTools: string[];
  /** `inbound→upstream`, for the request log. */
  label: string;
}

/** Translated requests per inbound call and (upstream shape, model, token field): a failover to a like target translates once. */
const prepared = new WeakMap<InboundCall, Map<string, Prepared | CodecError>>();

function prepare(call: InboundCall, target: Target, codec: Codec): Prepared | CodecError {
  const maxField = codec.upstream === 'openai-chat' ? chatMaxTokensField(target) : undefined;
  const key = `${codec.upstream}|${maxField ?? ''}|${target.model}`;
  let m = prepared.get(call);
  if (!m) prepared.set(call, (m = new Map()));
  let p = m.get(key);
  if (!p) {
    try {
      const r = codec.request(call.json, { model: target.model, stream: wantsStream(call), chatMaxTokensField: maxField });
      p = { body: Buffer.from(JSON.stringify(r.body)), endpoint: upstreamEndpointOf(codec), dropped: r.dropped, droppedTools: r.droppedTools, label: `${codec.inbound}→${codec.upstream}` };
    } catch (err) {
      if (!(err instanceof CodecError)) throw err;
      p = err;
    }
    m.set(key, p);
  }
  return p;
}

export type Refusal = { kind: 'estimate' } | { kind: 'untranslatable'; error: CodecError; skip: Exclusion };

/**
 * Whether this target can take the request, asked before it queues: a count_tokens request for a
 * target of another protocol is answered with the local estimate; a request the target's protocol
 * cannot express is skipped (its field named). null = go.
 */
export function refusalFor(call: InboundCall, target: Target): Refusal | null {
  if (call.protocol === 'anthropic-count-tokens') return target.conn.protocol === 'anthropic' ? null : { kind: 'estimate' };
  if (call.protocol === 'gemini-count-tokens') return target.conn.protocol === 'gemini' ? null : { kind: 'estimate' };
  const codec = codecOf(call, target);
  if (!codec) return null;
  const p = prepare(call, target, codec);
  if (!(p instanceof CodecError)) return null;
  return { kind: 'untranslatable', error: p, skip: { reason: 'untranslatable', until: null, detail: `${p.field}: ${p.message}` } };
}

/**
 * After routing: a large request whose first target takes it natively lets go of its parsed body
 * (parsedCall.ts). Its attempt sends the client's bytes and reads only the top-level model; a
 * translated first target would read the whole body at once, and a small body costs the collector
 * nothing worth a second parse. The call is told which it was (parsedCall.ts BodyReads: how the
 * client's next large body is read).
 */
export function letGoOfParsedBody(call: InboundCall, first: Target | undefined): void {
  if (!(call instanceof ParsedCall) || first === undefined || !readsTopLevelOnly(call.protocol, call.gemini, call.body)) return;
  const translated = codecOf(call, first) !== null;
  call.onRouted?.(translated);
  if (!translated) call.letGo();
}

/** The upstream body and endpoint of an attempt: the inbound bytes (model rewritten if needed), or the translation. */
export function upstreamRequestOf(call: InboundCall, target: Target): { body: UpstreamBody; endpoint: UpstreamEndpoint; translated: boolean } {
  const codec = codecOf(call, target);
  if (codec) {
    const p = prepare(call, target, codec);
    if (!(p instanceof CodecError)) return { body: p.body, endpoint: p.endpoint, translated: true };
  }
  // A Gemini body names no model (its URL does: upstream/headers.ts).
  const asked = call.gemini ? null : topLevelOf(call, 'model');
  const span = call instanceof ParsedCall ? call.valueSpan('model') : null;
  const body = call.gemini || target.model === asked ? call.body : rewriteModel(call.body, asked, target.model, () => call.json, span);
  return { body, endpoint: call.endpoint, translated: false };
}

export interface TranslationDeps {
  clock: Clock;
  redactor: SecretRedactor;
  settings: { readonly snapshot: ResolvedSettings };
}

/**
 * The dispatch step around the HTTP call: native attempts go straight through; a translated one is
 * annotated in the request log, and its outcome is turned into the inbound protocol's: a 2xx into a
 * translated body (an error inside it into a failed attempt that can fail over), an error answer
 * into the inbound error shape (the failure itself keeps the upstream's words for the classifier).
 */
export function translatingDispatch(deps: TranslationDeps, next: Dispatch<BodyReader | UpstreamStream>): Dispatch {
  return async (ctx) => {
    const codec = codecOf(ctx.call, ctx.target);
    if (!codec) return next(ctx);
    const p = prepare(ctx.call, ctx.target, codec);
    if (p instanceof CodecError) return refused(ctx.call, p);
    ctx.entry.translated = p.label;
    ctx.entry.dropped = p.dropped;
    const outcome = await next(ctx);
    if (outcome.kind === 'failed') return outcome.response ? { ...outcome, response: translateRelay(codec, outcome.response) } : outcome;
    if (outcome.kind !== 'ready') return outcome;
    const t = new AttemptTranslation(deps, codec, ctx.call, ctx.target, outcome.response, p.droppedTools);
    return ctx.stream ? t.stream() : t.json();
  };
}

/** A translated request that reached the dispatch without refusalFor (a caller that skipped it): the request's own 400. */
function refused(call: InboundCall, e: CodecError): AttemptOutcome {
  const body = JSON.stringify(errorEventBody(inboundShapeOf(call.protocol), { status: 400, type: 'invalid_request_error', code: e.code, message: `${e.field}: ${e.message}` }));
  return {
    kind: 'failed',
    failure: { kind: 'http', status: 400, headers: {}, body, message: e.message },
    response: { status: 400, headers: { 'content-type': 'application/json' }, body },
    ttfbMs: null,
  };
}

/** An upstream error answer, for the client, in the inbound protocol's shape (non-JSON bodies are left to the relay). */
function translateRelay(codec: Codec, r: RelayableResponse): RelayableResponse {
  if (!/^\s*[{[]/.test(r.body)) return r;
  const t = codec.error(r.status, r.body);
  return { status: t.status, headers: { ...r.headers, 'content-type': 'application/json' }, body: JSON.stringify(t.body) };
}

/** Upstream response headers that describe the upstream's body, not the translated one. */
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'etag', 'last-modified']);

function clientHeaders(upstream: Record<string, string>, own: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in upstream) if (!BODY_HEADERS.has(k)) out[k] = upstream[k]!;
  return Object.assign(out, own);
}

/** One translated attempt's answer: read, checked for an error wearing a 2xx, then translated. */
class AttemptTranslation {
  private readonly upstream: ApiShape;

  constructor(
    private readonly deps: TranslationDeps,
    private readonly codec: Codec,
    private readonly call: InboundCall,
    private readonly target: Target,
    private readonly ready: ReadyResponse<BodyReader | UpstreamStream>,
    private readonly droppedTools: string[],
  ) {
    this.upstream = codec.upstream;
  }

  private translator(trackText = false) {
    const framing = this.call.gemini && !this.call.gemini.sse ? ('json-array' as const) : undefined;
    return this.codec.response({ request: this.call.json, model: this.target.model, now: this.deps.clock.now(), requestId: this.call.requestId, trackText, geminiFraming: framing });
  }

  /** A failed attempt for an error the upstream reported inside a 2xx (body or stream). */
  private inband(kind: UpstreamFailure['kind'], e: InbandError, rawBody: string): AttemptOutcome {
    const message = this.deps.redactor.scrub(e.message);
    const body = JSON.stringify(errorEventBody(this.codec.inbound, { ...e, message }));
    return {
      kind: 'failed',
      failure: { kind, status: e.status, headers: this.ready.headers, body: this.deps.redactor.scrub(rawBody), message },
      response: { status: e.status, headers: { 'content-type': 'application/json' }, body },
      ttfbMs: this.ready.ttfbMs,
    };
  }

  /** The whole answer as text and parsed (null when it is not JSON), or the failed attempt when it cannot be read. */
  private async readAnswer(reader: BodyReader, first: ReadyResponse['first']): Promise<{ text: string; value: unknown } | AttemptOutcome> {
    const read = await reader.readAll(first.kind === 'chunk' ? first.chunk : null, TRANSLATED_ANSWER_LIMIT);
    if (!read.ok) {
      if ('tooLarge' in read) {
        return this.inband('http', { status: 502, type: 'api_error', code: null, message: `the upstream answer is larger than ${TRANSLATED_ANSWER_LIMIT >> 20} MiB` }, '');
      }
      const te = toTransportError(read.error);
      return this.broken(te.kind === 'idle_timeout' ? 'stall' : 'network', te.message);
    }
    const text = read.body.toString('utf8');
    try {
      return { text, value: JSON.parse(text) as unknown };
    } catch {
      return { text, value: null };
    }
  }

  private broken(kind: UpstreamFailure['kind'], message: string): AttemptOutcome {
    return { kind: 'failed', failure: { kind, status: null, headers: this.ready.headers, body: '', message }, response: null, ttfbMs: this.ready.ttfbMs };
  }

  private readyWith(reader: ReadyResponse['reader'], headers: Record<string, string>, first: ReadyResponse['first']): AttemptOutcome {
    if (this.droppedTools.length > 0) headers[DROPPED_TOOLS_HEADER] = this.droppedTools.join(', ');
    // Fields spelled out (not `...this.ready`): a spread makes V8 build the object the slow way.
    const { status, ttfbMs, firstByteAt } = this.ready;
    return { kind: 'ready', response: { status, headers, reader, first, ttfbMs, firstByteAt } };
  }

  /**
   * A non-stream answer: read whole (bounded), an error body fails the attempt, else translated.
   * One the empty-answer check read ahead and parsed (emptyAnswer.ts) is taken as it parsed it.
   */
  async json(): Promise<AttemptOutcome> {
    const { reader, first } = this.ready;
    if (reader instanceof UpstreamStream) return this.broken('network', 'the upstream answered a request without a stream as a stream');
    const answer = reader.whole()?.json ?? (await this.readAnswer(reader, first));
    if ('kind' in answer) return answer;
    const { text, value: parsed } = answer;
    const outcome = jsonOutcome(this.upstream, parsed);
    if (outcome.error) return this.inband('http', outcome.error, text);
    const translator = this.translator();
    let buf: Buffer;
    try {
      buf = Buffer.from(JSON.stringify(translator.json(parsed)));
    } catch (err) {
      return this.inband('http', { status: 502, type: 'api_error', code: null, message: `the upstream answer could not be translated: ${(err as Error).message}` }, text);
    }
    const headers = clientHeaders(this.ready.headers, { 'content-type': 'application/json', 'content-length': String(buf.length) });
    return this.readyWith(new TranslatedJson(buf, translator.usage()), headers, { kind: 'end' });
  }

  /**
   * A stream: held back and checked as frames already (holdBack.ts), so it only gets its
   * translator and the inbound protocol's headers. A JSON answer to a streaming request is an error
   * (or a server that ignored `stream`): read whole, it fails the attempt.
   */
  async stream(): Promise<AttemptOutcome> {
    const { reader, first } = this.ready;
    if (reader instanceof UpstreamStream) {
      reader.translator = this.translator(streamPolicyFor(this.deps.settings.snapshot, this.target).midstream);
      // A Gemini client's stream without alt=sse is one JSON array.
      const type = this.call.gemini && !this.call.gemini.sse ? 'application/json; charset=utf-8' : 'text/event-stream; charset=utf-8';
      const headers = clientHeaders(this.ready.headers, { 'content-type': type, 'cache-control': 'no-cache' });
      return this.readyWith(reader, headers, first);
    }
    const read = await reader.readAll(first.kind === 'chunk' ? first.chunk : null, TRANSLATED_ANSWER_LIMIT);
    const text = read.ok ? read.body.toString('utf8') : '';
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    const e = jsonOutcome(this.upstream, parsed).error ?? { status: 502, type: 'api_error', code: null, message: 'the upstream answered a streaming request without a stream' };
    return this.inband('stream_error', e, text);
  }
}
