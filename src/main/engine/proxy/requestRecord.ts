// What one inbound request did, and its single end: the attempts and skips the pipeline walked
// through, and exactly one final answer — a committed stream, an error in the inbound protocol's
// shape, an upstream error relayed in its own words, a local token estimate, or nothing for a
// client that left — written with exactly one request-log row.
import type { AttemptEntry, RequestLogEntry, SkipEntry } from '../../../shared/model';
import type { Clock } from '../clock';
import type { RequestLog } from '../logs/requestLog';
import type { Exclusion, UpstreamFailure } from '../resilience/port';
import type { Target } from '../routing/target';
import type { RelayableResponse } from './attempt';
import type { CommitResult } from './commit';
import { ProxyError, sendProxyError } from './errors';
import type { InboundCall } from './inbound';
import { StreamFailure } from './translatedBody';

export interface RecordDeps {
  clock: Clock;
  requestLog: RequestLog;
}

/** The request path as logged: never its query string (it may carry a key or a token). */
export const loggedPath = (url: string | undefined): string => {
  const u = url ?? '';
  const q = u.indexOf('?');
  return q >= 0 ? u.slice(0, q) : u;
};

export class RequestRecord {
  readonly attempts: AttemptEntry[] = [];
  readonly skipped: SkipEntry[] = [];
  private finished = false;

  constructor(
    private readonly deps: RecordDeps,
    readonly call: InboundCall,
    readonly model: string,
    readonly stream: boolean,
  ) {}

  skip(target: Target, ex: Exclusion): void {
    this.skipped.push({
      connectionId: target.conn.id,
      connectionName: target.conn.name,
      provider: target.conn.provider,
      reason: ex.reason,
      until: ex.until,
      detail: ex.detail,
    });
  }

  startAttempt(target: Target, queuedMs: number): AttemptEntry {
    const { conn } = target;
    const entry: AttemptEntry = {
      attempt: this.attempts.length + 1,
      connectionId: conn.id,
      connectionName: conn.name,
      provider: conn.provider,
      model: target.model,
      startedAt: this.deps.clock.now(),
      status: null,
      errorClass: null,
      errorCode: null,
      errorMessage: null,
      ttfbMs: null,
      durationMs: null,
      failedOver: false,
      queuedMs: Math.round(queuedMs),
    };
    this.attempts.push(entry);
    return entry;
  }

  get lastAttempt(): AttemptEntry | undefined {
    return this.attempts[this.attempts.length - 1];
  }

  /** The response was streamed to the client (completely or not). */
  committed(target: Target, firstByteAt: number, r: CommitResult): void {
    const e = this.entry();
    e.status = this.call.res.statusCode;
    served(e, target);
    e.ttfbMs = Math.round(firstByteAt - this.call.startMono);
    e.inputTokens = r.inputTokens;
    e.outputTokens = r.outputTokens;
    if (!r.completed) {
      // A translated stream says why (stream_truncated, upstream_stream_error); others were cut.
      const why = r.error instanceof StreamFailure ? r.error : null;
      e.errorCode = why?.code ?? 'stream_interrupted';
      e.errorMessage = why?.message ?? 'the response stream ended early';
      const a = this.lastAttempt;
      if (a && why) {
        a.errorCode = why.code;
        a.errorMessage = why.message.slice(0, 500);
      }
    }
    this.append(e);
  }

  /** The client went away before an answer. */
  aborted(): void {
    const e = this.entry();
    e.status = 499;
    e.errorCode = 'client_closed_request';
    e.errorMessage = 'the client closed the connection before a response';
    this.append(e);
  }

  /** An error the proxy makes itself, in the inbound protocol's shape. */
  fail(err: ProxyError, target: Target | null = null): void {
    if (this.finished) return;
    sendProxyError(this.call.res, this.call.protocol, err, this.call.requestId);
    const e = this.entry();
    e.status = err.status;
    e.errorCode = err.code;
    e.errorMessage = err.message;
    if (target) served(e, target);
    this.append(e);
  }

  /** A local count_tokens answer (marked x-switchyard-estimated) for a gateway without the endpoint. */
  tokenEstimate(): void {
    if (this.finished) return;
    const body = JSON.stringify({ input_tokens: estimateInputTokens(this.call.json) });
    this.call.res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'x-switchyard-request-id': this.call.requestId,
      'x-switchyard-estimated': 'true',
    });
    this.call.res.end(body);
    const e = this.entry();
    e.status = 200;
    e.errorCode = 'count_tokens_estimated';
    e.errorMessage = 'the upstream has no count_tokens endpoint; answered with a local estimate';
    this.append(e);
  }

  /**
   * The last upstream failure, to the client: in the upstream's own words when it sent a JSON
   * body, else as a proxy error (502 unreachable, 504 timeout). `retryAfterMs` is what the client
   * is told to wait, when the same request may succeed later.
   */
  relay(failure: UpstreamFailure, reason: string, response: RelayableResponse | null, retryAfterMs: number | null): void {
    if (this.finished) return;
    const res = this.call.res;
    const last = this.lastAttempt;
    if (response && !res.headersSent && /^\s*[{[]/.test(response.body)) {
      const headers: Record<string, string | number> = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(response.body),
        'x-switchyard-request-id': this.call.requestId,
        'x-switchyard-error-code': 'upstream_error',
      };
      if (last) headers['x-switchyard-selected-connection-id'] = last.connectionId;
      if (retryAfterMs !== null) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
      res.writeHead(response.status, headers);
      res.end(response.body);
      const e = this.entry();
      e.status = response.status;
      e.errorCode = 'upstream_error';
      e.errorMessage = `${reason}: ${failure.message}`.slice(0, 500);
      if (last) {
        e.connectionId = last.connectionId;
        e.connectionName = last.connectionName;
        e.provider = last.provider;
        e.model = last.model;
      }
      this.append(e);
      return;
    }
    const timeout = failure.kind === 'connect_timeout' || failure.kind === 'headers_timeout' || failure.kind === 'stall';
    const status = response?.status ?? (timeout ? 504 : 502);
    this.fail(
      new ProxyError(
        status,
        response ? 'upstream_error' : timeout ? 'upstream_timeout' : 'upstream_unreachable',
        `${last ? `${last.connectionName}: ` : ''}${failure.message}`,
        { retryAfterMs },
      ),
    );
  }

  private entry(): RequestLogEntry {
    const c = this.call;
    return {
      id: c.requestId,
      startedAt: c.startedAt,
      protocol: c.protocol,
      path: loggedPath(c.req.url),
      clientKeyId: c.clientKeyId,
      requestedModel: this.model,
      model: null,
      stream: this.stream,
      status: 0,
      errorCode: null,
      errorMessage: null,
      connectionId: null,
      connectionName: null,
      provider: null,
      ttfbMs: null,
      durationMs: Math.round(this.deps.clock.monotonic() - c.startMono),
      inputTokens: null,
      outputTokens: null,
      attempts: this.attempts,
      skipped: this.skipped,
    };
  }

  private append(e: RequestLogEntry): void {
    if (this.finished) return;
    this.finished = true;
    this.deps.requestLog.append(e);
  }
}

function served(e: RequestLogEntry, target: Target): void {
  e.model = target.model;
  e.connectionId = target.conn.id;
  e.connectionName = target.conn.name;
  e.provider = target.conn.provider;
}

/**
 * A local count_tokens answer (about four characters per token over the prompt's JSON), marked
 * with x-switchyard-estimated so a client can tell it from the provider's own count.
 */
export function estimateInputTokens(json: Record<string, unknown>): number {
  const text = JSON.stringify([json.system ?? '', json.messages ?? [], json.tools ?? []]);
  return Math.max(1, Math.ceil(text.length / 4));
}
