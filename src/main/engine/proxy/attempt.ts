// One upstream attempt, as a chain of interceptors around the call itself, in the shape of
// undici's interceptors: `(next) => (ctx) => Promise<AttemptOutcome>`. The innermost dispatch
// sends the request and waits until the response is worth committing (its first body chunk).
// Interceptors (credential refresh, the Claude low-priority lane, status restatement, ...) may add
// upstream headers, retry on the same connection, or rewrite an outcome, and each is testable
// alone with a fake `next`. Committing the response to the client is not part of an attempt
// (commit.ts); reporting outcomes to the resilience layer is the pipeline's. The innermost step is
// the HTTP call wrapped in the translation step (translation.ts), which is a no-op for native
// attempts and turns a translated attempt's answer into the inbound protocol's.
import type { AttemptEntry } from '../../../shared/model';
import type { Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import type { SecretRedactor } from '../logger';
import type { UpstreamFailure } from '../resilience/port';
import type { Target } from '../routing/target';
import type { ResolvedSettings } from '../settings/resolve';
import { readBodyText, toTransportError, type UpstreamClient, type UpstreamResponse } from '../upstream/client';
import { buildUpstreamHeaders, upstreamTarget } from '../upstream/headers';
import type { TimeoutResolver } from '../upstream/timeouts';
import { BodyReader, type FirstChunk, type ResponseBody } from './bodyReader';
import { emptyAnswerDispatch } from './emptyAnswer';
import { continuingDispatch, type Continuation } from './continuing';
import { AttemptWatch, holdBack } from './holdBack';
import type { InboundCall } from './inbound';
import { streamPolicyFor } from './streamPolicy';
import { errorMessageFrom, leadingStreamError } from './streamErrors';
import { translatingDispatch, upstreamRequestOf, upstreamShapeOf } from './translation';
import type { UpstreamStream } from './upstreamStream';

/** Abort reasons of a request's signal: the client went away, or an execution budget ran out. */
export const CLIENT_GONE = new Error('client closed the connection');
export const EXECUTION_EXPIRED = new Error('execution budget ran out');

export interface AttemptContext {
  readonly call: InboundCall;
  readonly target: Target;
  readonly stream: boolean;
  /** Aborted when the client goes away or the execution budget runs out (see its reason). */
  readonly signal: AbortSignal;
  /** Upstream headers an interceptor adds or overrides for this attempt. */
  readonly extraHeaders: Record<string, string>;
  /** The request-log entry of this attempt; interceptors may annotate it. */
  readonly entry: AttemptEntry;
  /** Set when this attempt continues a broken answer the client is reading (mid-stream recovery). */
  readonly continuation?: Continuation | null;
}

/** An upstream error response as it may be relayed to the client. */
export interface RelayableResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A 2xx response worth committing: a stream whose first progress frame (or hold-back budget) has
 * arrived, or another body's first chunk. Nothing has reached the client yet.
 */
export interface ReadyResponse<R extends ResponseBody | UpstreamStream = ResponseBody | UpstreamStream> {
  status: number;
  headers: Record<string, string>;
  /** A stream read as frames (UpstreamStream, delivered by clientStream.ts), or a body commit.ts pipes (BodyReader, a translated answer). */
  reader: R;
  /** The first chunk, or the end of an empty body. */
  first: Exclude<FirstChunk, { kind: 'error' }>;
  ttfbMs: number;
  /** Monotonic time of the first body byte. */
  firstByteAt: number;
}

export type AttemptOutcome<R extends ResponseBody | UpstreamStream = ResponseBody | UpstreamStream> =
  | { kind: 'ready'; response: ReadyResponse<R> }
  | { kind: 'failed'; failure: UpstreamFailure; response: RelayableResponse | null; ttfbMs: number | null }
  | { kind: 'aborted' }
  | { kind: 'execution_timeout' };

export type Dispatch<R extends ResponseBody | UpstreamStream = ResponseBody | UpstreamStream> = (ctx: AttemptContext) => Promise<AttemptOutcome<R>>;
export type AttemptInterceptor = (next: Dispatch) => Dispatch;

/** Wraps `base` in the interceptors, the first one outermost. */
export function composeDispatch(base: Dispatch, interceptors: readonly AttemptInterceptor[]): Dispatch {
  let d = base;
  for (let i = interceptors.length - 1; i >= 0; i--) d = interceptors[i]!(d);
  return d;
}

export interface UpstreamCallDeps {
  registry: ConnectionRegistry;
  upstream: UpstreamClient;
  timeouts: TimeoutResolver;
  /** Scrubs known secrets out of upstream error text before it is stored or relayed. */
  redactor: SecretRedactor;
  clock: Clock;
  /** The resolved settings (stream deadlines and recovery switches). */
  settings: { readonly snapshot: ResolvedSettings };
}

const flatHeaders = (h: UpstreamResponse['headers']): Record<string, string> => {
  const out: Record<string, string> = {};
  // for-in, not Object.entries: no array of pairs per attempt (undici's headers are a plain object).
  for (const k in h) {
    const v = h[k];
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
};

const abortedOutcome = (signal: AbortSignal): { kind: 'aborted' } | { kind: 'execution_timeout' } | null =>
  !signal.aborted ? null : signal.reason === EXECUTION_EXPIRED ? { kind: 'execution_timeout' } : { kind: 'aborted' };

/**
 * The innermost dispatch: a continuation's request body (when the attempt continues a broken
 * answer), the translation step, the empty-answer check (emptyAnswer.ts), and one HTTP call to
 * the target's connection.
 */
export function upstreamDispatch(deps: UpstreamCallDeps): Dispatch {
  return continuingDispatch(translatingDispatch(deps, emptyAnswerDispatch(httpDispatch(deps))));
}

const isEventStream = (headers: Record<string, string>) => {
  const ct = headers['content-type'];
  return ct === undefined || ct.includes('event-stream');
};

/** One HTTP call: the body (native bytes or the translation) to the target's endpoint. */
function httpDispatch(deps: UpstreamCallDeps): Dispatch<BodyReader | UpstreamStream> {
  return async (ctx) => {
    const { call, target, signal, stream } = ctx;
    const { conn } = target;
    const secret = deps.registry.secretOf(conn);
    const { body, endpoint, translated } = upstreamRequestOf(call, target);
    const timeouts = deps.timeouts.of(conn);
    const headers = buildUpstreamHeaders(conn, secret, call.req.headers, { stream, hasBody: true });
    for (const k in ctx.extraHeaders) headers[k] = ctx.extraHeaders[k]!;

    const t0 = deps.clock.monotonic();
    // A connection configured to leave through a proxy never goes direct (it would show the real IP).
    if (deps.registry.outboundProxyUnreadable(conn)) {
      const message = 'the outbound proxy of this connection cannot be decrypted on this machine; enter it again';
      return { kind: 'failed', failure: { kind: 'network', status: null, headers: {}, body: '', message }, response: null, ttfbMs: null };
    }
    // A stream's watchdogs start with the request: time to first output includes the wait for headers.
    const policy = stream ? streamPolicyFor(deps.settings.snapshot, target) : null;
    const watch = policy ? new AttemptWatch(deps.clock, policy, signal) : null;
    watch?.watch.start();
    let upstream: UpstreamResponse;
    const { origin, path } = upstreamTarget(conn, endpoint, target.model, stream);
    try {
      upstream = await deps.upstream.request({
        origin,
        path,
        method: 'POST',
        headers,
        body,
        signal: watch ? watch.signal : signal,
        connectTimeoutMs: timeouts.connectMs,
        headersTimeoutMs: target.headersTimeoutMs ?? timeouts.headersMs,
        idleTimeoutMs: timeouts.idleMs,
        proxy: deps.registry.outboundProxyOf(conn),
      });
    } catch (err) {
      watch?.watch.stop();
      const a = abortedOutcome(signal);
      if (a) return a;
      const fired = watch?.fired;
      if (fired) {
        ctx.entry.watchdog = fired.watchdog;
        return { kind: 'failed', failure: { kind: 'stall', status: null, headers: {}, body: '', message: fired.message }, response: null, ttfbMs: null };
      }
      const te = toTransportError(err);
      return {
        kind: 'failed',
        failure: { kind: te.kind === 'aborted' ? 'network' : te.kind, status: null, headers: {}, body: '', message: te.message },
        response: null,
        ttfbMs: null,
      };
    }

    const resHeaders = flatHeaders(upstream.headers);
    const is2xx = upstream.status >= 200 && upstream.status < 300;
    if (watch && policy && is2xx && isEventStream(resHeaders)) {
      // A stream is held back until its first model output (holdBack.ts).
      return holdBack(deps, {
        shape: upstreamShapeOf(call, target),
        native: !translated,
        status: upstream.status,
        headers: resHeaders,
        body: upstream.body,
        t0,
        watch,
        policy,
        entry: ctx.entry,
        aborted: () => abortedOutcome(signal),
      });
    }
    watch?.watch.stop();
    if (!is2xx) {
      // An upstream that quotes the key back ("Incorrect API key provided: sk-...") must not hand it
      // to the agent, the connection's last error or the dashboard: scrub before anything reads it.
      const text = deps.redactor.scrub(await readBodyText(upstream.body));
      const a = abortedOutcome(signal);
      if (a) return a;
      return {
        kind: 'failed',
        failure: {
          kind: 'http',
          status: upstream.status,
          headers: resHeaders,
          body: text,
          message: errorMessageFrom(text) ?? `upstream answered ${upstream.status}`,
        },
        response: { status: upstream.status, headers: resHeaders, body: text },
        ttfbMs: Math.round(deps.clock.monotonic() - t0),
      };
    }

    // Any other 2xx (a JSON answer): hold the client response until the first body chunk, so a
    // body that dies before producing anything can still fail over.
    const reader = new BodyReader(upstream.body);
    const first = await reader.first();
    const firstByteAt = deps.clock.monotonic();
    const ttfbMs = Math.round(firstByteAt - t0);
    if (first.kind === 'error') {
      const a = abortedOutcome(signal);
      if (a) return a;
      const te = toTransportError(first.error);
      return {
        kind: 'failed',
        failure: { kind: te.kind === 'idle_timeout' ? 'stall' : 'network', status: null, headers: resHeaders, body: '', message: te.message },
        response: null,
        ttfbMs,
      };
    }
    // (A translated stream is read into frames by the translation step, which checks them itself.)
    if (first.kind === 'chunk' && stream && !translated) {
      const streamErr = leadingStreamError(first.chunk, deps.redactor);
      if (streamErr) {
        reader.destroy();
        return {
          kind: 'failed',
          failure: { kind: 'stream_error', status: streamErr.status, headers: resHeaders, body: streamErr.body, message: streamErr.message },
          response: { status: streamErr.status, headers: { 'content-type': 'application/json' }, body: streamErr.body },
          ttfbMs,
        };
      }
    }
    return { kind: 'ready', response: { status: upstream.status, headers: resHeaders, reader, first, ttfbMs, firstByteAt } };
  };
}
