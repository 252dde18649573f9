// The request pipeline: resolve the model to targets, walk them in selection order, skip what the
// resilience layer excludes, take an admission slot, call the upstream, and either commit the
// response to the client (streamed, with backpressure) or fail over to the next target. Failover
// only ever happens before the first byte reaches the client.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  AttemptEntry,
  InboundProtocol,
  RequestLogEntry,
  SkipEntry,
  WireProtocol,
} from '../../../shared/model';
import { AdmissionError, NEVER_ABORTED, type AdmissionPort } from '../admission/port';
import type { Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import type { Logger, SecretRedactor } from '../logger';
import type { RequestLog } from '../logs/requestLog';
import type { AttemptVerdict, Exclusion, ResiliencePort, UpstreamFailure } from '../resilience/port';
import { resolveTargets } from '../routing/resolve';
import type { LatencyTracker } from '../routing/latencyTracker';
import type { TargetSelector } from '../routing/selector';
import type { Target } from '../routing/target';
import type { SettingsService } from '../settings/settingsService';
import { readBodyText, toTransportError, type UpstreamClient, type UpstreamResponse } from '../upstream/client';
import { buildUpstreamHeaders, HOP_BY_HOP, upstreamTarget, type UpstreamEndpoint } from '../upstream/headers';
import type { TimeoutResolver } from '../upstream/timeouts';
import { UsageTap } from '../upstream/usage';
import { rewriteModel } from './body';
import { ProxyError, sendProxyError } from './errors';

export interface PipelineDeps {
  registry: ConnectionRegistry;
  settings: SettingsService;
  resilience: ResiliencePort;
  admission: AdmissionPort;
  upstream: UpstreamClient;
  selector: TargetSelector;
  /** The p2c latency signal: each attempt's time to first byte and outcome. */
  latency: LatencyTracker;
  requestLog: RequestLog;
  timeouts: TimeoutResolver;
  /** Scrubs known secrets out of upstream error text before it is stored or relayed. */
  redactor: SecretRedactor;
  clock: Clock;
  log: Logger;
}

export interface InboundCall {
  protocol: InboundProtocol;
  endpoint: UpstreamEndpoint;
  wire: WireProtocol;
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  startedAt: number;
  startMono: number;
  clientKeyId: string | null;
  body: Buffer;
  json: Record<string, unknown>;
}

type AttemptResult =
  | {
      kind: 'committed';
      ttfbMs: number;
      /** Monotonic time of the first body byte. */
      firstByteAt: number;
      inputTokens: number | null;
      outputTokens: number | null;
      completed: boolean;
    }
  | {
      kind: 'failed';
      failure: UpstreamFailure;
      response: { status: number; headers: Record<string, string>; body: string } | null;
      ttfbMs: number | null;
    }
  | { kind: 'aborted' }
  | { kind: 'execution_timeout' };

/** Maps our skip reasons to the spec's diagnostics vocabulary (R-DBG-01). */
const DIAG_REASON: Partial<Record<SkipEntry['reason'], string>> = {
  model_lockout: 'model_lockout',
  circuit_open: 'circuit_open',
  provider_cooldown: 'provider_cooldown',
  cooling_down: 'unavailable',
  terminal: 'unavailable',
};

export async function runPipeline(deps: PipelineDeps, call: InboundCall): Promise<void> {
  const { json, res } = call;
  const model = json.model;
  if (typeof model !== 'string' || model.trim() === '') {
    throw new ProxyError(400, 'missing_model', 'the request needs a "model" string', { param: 'model' });
  }
  const stream = json.stream === true;
  const values = deps.settings.values;

  const resolution = resolveTargets(deps.registry.all(), model, call.wire);
  const skipped: SkipEntry[] = resolution.disabled.map((c) => ({
    connectionId: c.id,
    connectionName: c.name,
    provider: c.provider,
    reason: 'disabled',
    until: null,
    detail: null,
  }));
  const attempts: AttemptEntry[] = [];
  const logBase = { call, model, stream, attempts, skipped };

  if (resolution.targets.length === 0) {
    const err = new ProxyError(404, 'model_not_found', `model "${model}" is not available: ${resolution.hint}`, {
      param: 'model',
    });
    finishWithError(deps, logBase, err, null);
    return;
  }

  const order = deps.selector.order(
    `${call.wire}|${model}`,
    resolution.targets,
    values['routing.strategy'],
    values['p2cLatency.weight'],
  );
  deps.resilience.orderForProbe(order, deps.clock.now());
  // One controller per request: aborted when the client goes away or an execution budget runs
  // out; the reason tells which. It is the signal undici sees, so either ends the upstream call.
  const clientGone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) clientGone.abort(CLIENT_GONE);
  };
  res.on('close', onClose);

  const maxAttempts = values['proxy.maxAttempts'];
  let last: { failure: UpstreamFailure; verdict: AttemptVerdict; response: AttemptResult & { kind: 'failed' } } | null =
    null;
  let lastAdmission: AdmissionError | null = null;
  const exclusions: { target: Target; ex: Exclusion }[] = [];
  let countTokensUnsupported = false;

  try {
    for (const target of order) {
      if (clientGone.signal.aborted) break;
      const conn = target.conn;
      if (attempts.length >= maxAttempts) {
        skipped.push(skip(target, { reason: 'attempt_budget', until: null, detail: `${maxAttempts} attempts used` }));
        continue;
      }
      const ex = deps.resilience.exclusion(target, deps.clock.now());
      if (ex) {
        skipped.push(skip(target, ex));
        exclusions.push({ target, ex });
        continue;
      }

      let lease;
      try {
        lease = await deps.admission.acquire(target, clientGone.signal);
      } catch (err) {
        if (err instanceof AdmissionError) {
          lastAdmission = err;
          skipped.push(skip(target, { reason: 'admission_rejected', until: null, detail: `${err.code}: ${err.message}` }));
          continue;
        }
        if (clientGone.signal.aborted) break;
        throw err;
      }

      // The wait in the queue may have been long: the target can have started cooling (or its
      // breaker opened) meanwhile. Look again, and only then claim a half-open probe.
      const now = deps.clock.now();
      const late = deps.resilience.exclusion(target, now) ?? deps.resilience.beginAttempt(target, now);
      if (late) {
        lease.release();
        skipped.push(skip(target, late));
        exclusions.push({ target, ex: late });
        continue;
      }

      const attemptNo = attempts.length + 1;
      const entry: AttemptEntry = {
        attempt: attemptNo,
        connectionId: conn.id,
        connectionName: conn.name,
        provider: conn.provider,
        model: target.model,
        startedAt: deps.clock.now(),
        status: null,
        errorClass: null,
        errorCode: null,
        errorMessage: null,
        ttfbMs: null,
        durationMs: null,
        failedOver: false,
        queuedMs: Math.round(lease.queuedMs),
      };
      attempts.push(entry);
      const t0 = deps.clock.monotonic();
      let result: AttemptResult;
      const onExpire = () => clientGone.abort(EXECUTION_EXPIRED);
      const watchExpiry = lease.signal !== NEVER_ABORTED;
      if (watchExpiry) {
        if (lease.signal.aborted) onExpire();
        else lease.signal.addEventListener('abort', onExpire, { once: true });
      }
      try {
        // The execution budget ends when the response starts: it never cuts a response in progress (R-RQ-06).
        const onCommit = () => watchExpiry && lease.signal.removeEventListener('abort', onExpire);
        result = await attempt(deps, call, target, clientGone.signal, stream, entry, onCommit);
      } finally {
        if (watchExpiry) lease.signal.removeEventListener('abort', onExpire);
        lease.release();
      }
      entry.durationMs = Math.round(deps.clock.monotonic() - t0);

      if (result.kind === 'committed') {
        entry.status = res.statusCode;
        finishCommitted(deps, logBase, target, result);
        return;
      }
      if (result.kind === 'aborted') {
        deps.resilience.onAbandon(target, deps.clock.now());
        entry.errorClass = 'client_aborted';
        break;
      }
      if (result.kind === 'execution_timeout') {
        deps.resilience.onAbandon(target, deps.clock.now());
        entry.errorClass = 'execution_timeout';
        entry.errorCode = 'RATE_LIMIT_EXECUTION_TIMEOUT';
        const err = new ProxyError(
          504,
          'RATE_LIMIT_EXECUTION_TIMEOUT',
          'the upstream request ran past its execution budget (executionMaxWaitMs)',
        );
        finishWithError(deps, logBase, err, target);
        return;
      }
      if (call.protocol === 'anthropic-count-tokens' && [404, 405, 501].includes(result.failure.status ?? 0)) {
        // The endpoint is missing on this gateway: not a failure of the connection or the model.
        deps.resilience.onAbandon(target, deps.clock.now());
        entry.status = result.failure.status;
        entry.errorClass = 'endpoint_unsupported';
        countTokensUnsupported = true;
        break;
      }
      const verdict = deps.resilience.onFailure(target, result.failure, deps.clock.now());
      deps.admission.observe(target, result.failure, verdict);
      // A request the upstream refused as malformed says nothing about the connection.
      if (verdict.failover) deps.latency.record(conn.id, deps.clock.now(), null, false);
      entry.status = result.failure.status;
      entry.errorClass = verdict.reason;
      entry.errorMessage = result.failure.message.slice(0, 500);
      entry.ttfbMs = result.ttfbMs;
      last = { failure: result.failure, verdict, response: result };
      if (!verdict.failover) break;
      entry.failedOver = true;
    }
  } finally {
    res.off('close', onClose);
  }

  if (clientGone.signal.aborted && clientGone.signal.reason === CLIENT_GONE) {
    finishAborted(deps, logBase);
    return;
  }
  // The last tried target had nowhere to fail over to.
  if (last && attempts.length > 0) attempts[attempts.length - 1]!.failedOver = false;

  // Anthropic-compatible gateways often lack count_tokens; an estimate keeps agents working.
  if (countTokensUnsupported) {
    answerTokenEstimate(deps, logBase);
    return;
  }
  if (last) {
    relayFailure(deps, logBase, last.failure, last.verdict, last.response.response);
    return;
  }
  if (lastAdmission) {
    const err = new ProxyError(lastAdmission.status, lastAdmission.code, lastAdmission.message, {
      retryAfterMs: lastAdmission.retryAfterMs,
    });
    finishWithError(deps, logBase, err, null);
    return;
  }
  // Nothing was attempted: every target was excluded.
  const now = deps.clock.now();
  const timed = exclusions.filter((e) => e.ex.until !== null);
  const diagnostics = {
    excluded: exclusions.map(({ target, ex }) => ({
      connectionId: target.conn.id,
      connectionName: target.conn.name,
      provider: target.conn.provider,
      model: target.model,
      reason: DIAG_REASON[ex.reason] ?? ex.reason,
      detail: ex.detail,
      retryAfterSec: ex.until !== null ? Math.max(0, Math.ceil((ex.until - now) / 1000)) : null,
    })),
  };
  if (timed.length > 0) {
    const earliest = Math.min(...timed.map((e) => e.ex.until!));
    const secs = Math.max(1, Math.ceil((earliest - now) / 1000));
    const err = new ProxyError(
      503,
      'all_targets_cooling_down',
      `every connection for "${model}" is temporarily excluded (${summarize(exclusions)}); retry in ${secs}s`,
      { retryAfterMs: earliest - now, diagnostics },
    );
    finishWithError(deps, logBase, err, null);
    return;
  }
  const err = new ProxyError(
    503,
    'no_executable_targets',
    `no connection for "${model}" can serve requests (${summarize(exclusions)}); fix or re-enable one in Switchyard`,
    { diagnostics },
  );
  finishWithError(deps, logBase, err, null);
}

function summarize(ex: { target: Target; ex: Exclusion }[]): string {
  return ex.map((e) => `${e.target.conn.name}: ${e.ex.reason.replace(/_/g, ' ')}`).join('; ');
}

function skip(target: Target, ex: Exclusion): SkipEntry {
  return {
    connectionId: target.conn.id,
    connectionName: target.conn.name,
    provider: target.conn.provider,
    reason: ex.reason,
    until: ex.until,
    detail: ex.detail,
  };
}

const flatHeaders = (h: UpstreamResponse['headers']): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
};

const CLIENT_GONE = new Error('client closed the connection');
const EXECUTION_EXPIRED = new Error('execution budget ran out');

/** One upstream attempt. Resolves once the response is committed and fully streamed, or failed. */
async function attempt(
  deps: PipelineDeps,
  call: InboundCall,
  target: Target,
  signal: AbortSignal,
  stream: boolean,
  entry: AttemptEntry,
  onCommit: () => void,
): Promise<AttemptResult> {
  const { conn } = target;
  const secret = deps.registry.secretOf(conn);
  const body = target.model === call.json.model ? call.body : rewriteModel(call.body, call.json, target.model);
  const aborted = (): AttemptResult | null =>
    !signal.aborted ? null : signal.reason === EXECUTION_EXPIRED ? { kind: 'execution_timeout' } : { kind: 'aborted' };
  const timeouts = deps.timeouts.of(conn);

  const t0 = deps.clock.monotonic();
  let upstream: UpstreamResponse;
  try {
    upstream = await deps.upstream.request({
      ...upstreamTarget(conn, call.endpoint),
      method: 'POST',
      headers: buildUpstreamHeaders(conn, secret, call.req.headers, { stream, hasBody: true }),
      body,
      signal,
      connectTimeoutMs: timeouts.connectMs,
      headersTimeoutMs: timeouts.headersMs,
      idleTimeoutMs: timeouts.idleMs,
    });
  } catch (err) {
    const a = aborted();
    if (a) return a;
    const te = toTransportError(err);
    return {
      kind: 'failed',
      failure: {
        kind: te.kind === 'aborted' ? 'network' : te.kind,
        status: null,
        headers: {},
        body: '',
        message: te.message,
      },
      response: null,
      ttfbMs: null,
    };
  }

  const headers = flatHeaders(upstream.headers);
  if (upstream.status < 200 || upstream.status >= 300) {
    // An upstream that quotes the key back ("Incorrect API key provided: sk-...") must not hand it
    // to the agent, the connection's last error or the dashboard: scrub before anything reads it.
    const text = deps.redactor.scrub(await readBodyText(upstream.body));
    const a = aborted();
    if (a) return a;
    return {
      kind: 'failed',
      failure: {
        kind: 'http',
        status: upstream.status,
        headers,
        body: text,
        message: errorMessageFrom(text) ?? `upstream answered ${upstream.status}`,
      },
      response: { status: upstream.status, headers, body: text },
      ttfbMs: Math.round(deps.clock.monotonic() - t0),
    };
  }

  // 2xx: hold the client response until the first body chunk, so a stream that dies or stalls
  // before producing anything can still fail over.
  const reader = new BodyReader(upstream.body);
  const first = await reader.first();
  const firstByteAt = deps.clock.monotonic();
  const ttfbMs = Math.round(firstByteAt - t0);
  if (first.kind === 'error') {
    const a = aborted();
    if (a) return a;
    const te = toTransportError(first.error);
    return {
      kind: 'failed',
      failure: { kind: te.kind === 'idle_timeout' ? 'stall' : 'network', status: null, headers, body: '', message: te.message },
      response: null,
      ttfbMs,
    };
  }
  if (first.kind === 'chunk' && stream) {
    const streamErr = leadingStreamError(first.chunk, deps.redactor);
    if (streamErr) {
      reader.destroy();
      return {
        kind: 'failed',
        failure: { kind: 'stream_error', status: streamErr.status, headers, body: streamErr.body, message: streamErr.message },
        response: { status: streamErr.status, headers: { 'content-type': 'application/json' }, body: streamErr.body },
        ttfbMs,
      };
    }
  }

  // Commit.
  onCommit();
  entry.ttfbMs = ttfbMs;
  deps.latency.record(conn.id, deps.clock.now(), ttfbMs, true);
  deps.resilience.onSuccess(target, deps.clock.now(), { ttfbMs });
  deps.admission.observe(target, null, null);
  const res = call.res;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!HOP_BY_HOP.has(k)) out[k] = v;
  out['x-switchyard-selected-connection-id'] = conn.id;
  out['x-switchyard-request-id'] = call.requestId;
  res.writeHead(upstream.status, out);
  const tap = new UsageTap();
  const completed = await reader.pipeTo(res, first.kind === 'chunk' ? first.chunk : null, tap);
  const usage = tap.result();
  if (!completed.ok) {
    if (signal.aborted && signal.reason === CLIENT_GONE) {
      // The client went away mid-stream; the upstream request was aborted with it.
    } else {
      const te = toTransportError(completed.error);
      deps.resilience.onFailure(
        target,
        { kind: te.kind === 'idle_timeout' ? 'stall' : 'stream_error', status: null, headers: {}, body: '', message: te.message },
        deps.clock.now(),
      );
      endWithStreamError(res, call.protocol, headers['content-type'] ?? '', te.message);
    }
  }
  return {
    kind: 'committed',
    ttfbMs,
    firstByteAt,
    inputTokens: usage.inputTokens, outputTokens: usage.outputTokens,
    completed: completed.ok,
  };
}

type First = { kind: 'chunk'; chunk: Buffer } | { kind: 'end' } | { kind: 'error'; error: unknown };
type PumpResult = { ok: true } | { ok: false; error: unknown };

/**
 * Owns an upstream body from the moment the response arrives: listeners stay attached for its
 * whole life, so an 'end' or 'error' that fires between reading the first chunk and committing the
 * response is never lost.
 */
class BodyReader {
  private firstWaiter: ((f: First) => void) | null = null;
  private firstSeen: First | null = null;
  private pending: Buffer[] = [];
  private ended = false;
  private error: unknown = null;
  private sink: { res: ServerResponse; tap: UsageTap; done: (r: PumpResult) => void } | null = null;

  constructor(private readonly body: UpstreamResponse['body']) {
    body.on('data', (c: Buffer) => this.onData(c));
    body.once('end', () => this.onEnd());
    body.on('error', (e) => this.onError(e));
    body.once('close', () => {
      if (!this.ended && this.error === null) this.onError(new Error('upstream closed the stream'));
    });
  }

  /** Resolves with the first chunk (then pauses), the end of an empty body, or an error. */
  first(): Promise<First> {
    if (this.firstSeen) return Promise.resolve(this.firstSeen);
    return new Promise((resolve) => (this.firstWaiter = resolve));
  }

  private settleFirst(f: First) {
    if (this.firstSeen) return;
    this.firstSeen = f;
    this.firstWaiter?.(f);
    this.firstWaiter = null;
  }

  private onData(c: Buffer) {
    if (!this.firstSeen) {
      this.body.pause();
      this.settleFirst({ kind: 'chunk', chunk: c });
      return;
    }
    if (!this.sink) {
      this.body.pause();
      this.pending.push(c);
      return;
    }
    this.sink.tap.push(c);
    if (!this.sink.res.write(c)) this.body.pause();
  }

  private onEnd() {
    this.ended = true;
    this.settleFirst({ kind: 'end' });
    if (this.sink) {
      this.sink.res.end();
      this.sink.done({ ok: true });
    }
  }

  private onError(e: unknown) {
    if (this.ended || this.error !== null) return;
    this.error = e;
    this.settleFirst({ kind: 'error', error: e });
    this.sink?.done({ ok: false, error: e });
  }

  /** Streams the first chunk and the rest of the body to the client with backpressure. */
  pipeTo(res: ServerResponse, first: Buffer | null, tap: UsageTap): Promise<PumpResult> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (r: PumpResult) => {
        if (settled) return;
        settled = true;
        res.off('drain', onDrain);
        res.off('close', onResClose);
        resolve(r);
      };
      const onDrain = () => this.body.resume();
      const onResClose = () => {
        if (!res.writableFinished) {
          this.body.destroy();
          done({ ok: false, error: new Error('client closed the connection') });
        }
      };
      res.on('drain', onDrain);
      res.once('close', onResClose);
      this.sink = { res, tap, done };
      let ok = true;
      for (const c of first ? [first, ...this.pending] : this.pending) {
        tap.push(c);
        ok = res.write(c) && ok;
      }
      this.pending = [];
      if (this.error !== null) return done({ ok: false, error: this.error });
      if (this.ended) {
        res.end();
        return done({ ok: true });
      }
      if (ok) this.body.resume();
    });
  }

  destroy() {
    if (!this.body.destroyed) this.body.destroy();
  }
}

/** An SSE stream that opens with an error event (e.g. Anthropic "overloaded_error") is a failure. */
function leadingStreamError(chunk: Buffer, redactor: SecretRedactor): { status: number; body: string; message: string } | null {
  const head = redactor.scrub(chunk.subarray(0, 2048).toString('utf8'));
  if (!/^(event:\s*error\b|data:\s*\{"(type":"error"|error"))/.test(head.trimStart())) return null;
  const dataLine = head.split('\n').find((l) => l.startsWith('data:'));
  const body = dataLine ? dataLine.slice(5).trim() : '{}';
  let type = '';
  let message = 'the upstream stream opened with an error';
  try {
    const j = JSON.parse(body) as { error?: { type?: string; message?: string; code?: string } };
    type = j.error?.type ?? j.error?.code ?? '';
    message = j.error?.message ?? message;
  } catch {
    // keep defaults
  }
  const status = /overloaded/.test(type) ? 529 : /rate_limit/.test(type) ? 429 : /auth/.test(type) ? 401 : 500;
  return { status, body, message };
}

function errorMessageFrom(text: string): string | null {
  try {
    const j = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof j.error === 'string') return j.error;
    return j.error?.message ?? j.message ?? null;
  } catch {
    return text ? text.slice(0, 200) : null;
  }
}

function endWithStreamError(res: ServerResponse, protocol: InboundProtocol, contentType: string, message: string) {
  if (res.writableEnded || res.destroyed) return;
  if (contentType.includes('text/event-stream')) {
    const payload =
      protocol === 'anthropic-messages'
        ? `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: `upstream stream failed: ${message}` } })}\n\n`
        : `data: ${JSON.stringify({ error: { message: `upstream stream failed: ${message}`, type: 'server_error', code: 'upstream_stream_failed' } })}\n\n`;
    res.end(payload);
  } else {
    res.destroy();
  }
}

interface LogBase {
  call: InboundCall;
  model: string;
  stream: boolean;
  attempts: AttemptEntry[];
  skipped: SkipEntry[];
}

function baseEntry(deps: PipelineDeps, b: LogBase): RequestLogEntry {
  return {
    id: b.call.requestId,
    startedAt: b.call.startedAt,
    protocol: b.call.protocol,
    path: b.call.req.url ?? '',
    clientKeyId: b.call.clientKeyId,
    requestedModel: b.model,
    model: null,
    stream: b.stream,
    status: 0,
    errorCode: null,
    errorMessage: null,
    connectionId: null,
    connectionName: null,
    provider: null,
    ttfbMs: null,
    durationMs: Math.round(deps.clock.monotonic() - b.call.startMono),
    inputTokens: null,
    outputTokens: null,
    attempts: b.attempts,
    skipped: b.skipped,
  };
}

function finishCommitted(
  deps: PipelineDeps,
  b: LogBase,
  target: Target,
  r: AttemptResult & { kind: 'committed' },
): void {
  const e = baseEntry(deps, b);
  e.status = b.call.res.statusCode;
  e.model = target.model;
  e.connectionId = target.conn.id;
  e.connectionName = target.conn.name;
  e.provider = target.conn.provider;
  e.ttfbMs = Math.round(r.firstByteAt - b.call.startMono);
  e.inputTokens = r.inputTokens;
  e.outputTokens = r.outputTokens;
  if (!r.completed) {
    e.errorCode = 'stream_interrupted';
    e.errorMessage = 'the response stream ended early';
  }
  deps.requestLog.append(e);
}

function finishAborted(deps: PipelineDeps, b: LogBase): void {
  const e = baseEntry(deps, b);
  e.status = 499;
  e.errorCode = 'client_closed_request';
  e.errorMessage = 'the client closed the connection before a response';
  deps.requestLog.append(e);
}

function finishWithError(deps: PipelineDeps, b: LogBase, err: ProxyError, target: Target | null): void {
  sendProxyError(b.call.res, b.call.protocol, err, b.call.requestId);
  const e = baseEntry(deps, b);
  e.status = err.status;
  e.errorCode = err.code;
  e.errorMessage = err.message;
  if (target) {
    e.connectionId = target.conn.id;
    e.connectionName = target.conn.name;
    e.provider = target.conn.provider;
    e.model = target.model;
  }
  deps.requestLog.append(e);
}

/**
 * A local count_tokens answer (about four characters per token over the prompt's JSON), marked
 * with x-switchyard-estimated so a client can tell it from the provider's own count.
 */
export function estimateInputTokens(json: Record<string, unknown>): number {
  const text = JSON.stringify([json.system ?? '', json.messages ?? [], json.tools ?? []]);
  return Math.max(1, Math.ceil(text.length / 4));
}

function answerTokenEstimate(deps: PipelineDeps, b: LogBase): void {
  const body = JSON.stringify({ input_tokens: estimateInputTokens(b.call.json) });
  const res = b.call.res;
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'x-switchyard-request-id': b.call.requestId,
    'x-switchyard-estimated': 'true',
  });
  res.end(body);
  const e = baseEntry(deps, b);
  e.status = 200;
  e.errorCode = 'count_tokens_estimated';
  e.errorMessage = 'the upstream has no count_tokens endpoint; answered with a local estimate';
  deps.requestLog.append(e);
}

/** Returns the last upstream failure to the client, in the upstream's own words where it has some. */
function relayFailure(
  deps: PipelineDeps,
  b: LogBase,
  failure: UpstreamFailure,
  verdict: AttemptVerdict,
  response: { status: number; headers: Record<string, string>; body: string } | null,
): void {
  const res = b.call.res;
  const lastAttempt = b.attempts[b.attempts.length - 1];
  if (response && !res.headersSent) {
    const isJson = /^\s*[{[]/.test(response.body);
    if (isJson) {
      const headers: Record<string, string | number> = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(response.body),
        'x-switchyard-request-id': b.call.requestId,
        'x-switchyard-error-code': 'upstream_error',
      };
      if (lastAttempt) headers['x-switchyard-selected-connection-id'] = lastAttempt.connectionId;
      const retryAfterMs = verdict.retryAfterMs;
      if (retryAfterMs !== null) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
      res.writeHead(response.status, headers);
      res.end(response.body);
      const e = baseEntry(deps, b);
      e.status = response.status;
      e.errorCode = 'upstream_error';
      e.errorMessage = `${verdict.reason}: ${failure.message}`.slice(0, 500);
      if (lastAttempt) {
        e.connectionId = lastAttempt.connectionId;
        e.connectionName = lastAttempt.connectionName;
        e.provider = lastAttempt.provider;
        e.model = lastAttempt.model;
      }
      deps.requestLog.append(e);
      return;
    }
  }
  const timeout = failure.kind === 'connect_timeout' || failure.kind === 'headers_timeout' || failure.kind === 'stall';
  const status = response?.status ?? (timeout ? 504 : 502);
  const err = new ProxyError(
    status,
    response ? 'upstream_error' : timeout ? 'upstream_timeout' : 'upstream_unreachable',
    `${lastAttempt ? `${lastAttempt.connectionName}: ` : ''}${failure.message}`,
    { retryAfterMs: verdict.retryAfterMs },
  );
  finishWithError(deps, b, err, null);
}
