// What one inbound request did, and its single end: the attempts and skips the pipeline walked
// through, and exactly one final answer — a committed stream, an error in the inbound protocol's
// shape, an upstream error relayed in its own words, a local token estimate, or nothing for a
// client that left — written with exactly one request-log row.
import { modelHeaderValue } from '../../../shared/modelIds';
import type { AffinityTrace, AttemptEntry, ComboTrace, ComboTraceRow, LeaseTrace, RequestLogEntry, RequestWait, SkipEntry } from '../../../shared/model';
import type { Clock } from '../clock';
import type { RequestLog } from '../logs/requestLog';
import type { TappedUsage } from '../upstream/usage';
import { PriceCatalogue } from '../usage/prices';
import type { Exclusion, UpstreamFailure } from '../resilience/port';
import type { RoutePlan } from '../routing/plan';
import type { Target } from '../routing/target';
import type { RelayableResponse } from './attempt';
import type { CommitResult } from './commit';
import { ProxyError, sendProxyError } from './errors';
import type { InboundCall } from './inbound';

export interface RecordDeps {
  clock: Clock;
  requestLog: RequestLog;
  /** Prices each served request (absent: the built-in prices only). */
  prices?: Pick<PriceCatalogue, 'costOf'>;
}

/** The catalogue a record without one prices by: built-in prices only. */
const builtInPrices = new PriceCatalogue();

/** The request path as logged: never its query string (it may carry a key or a token). */
export const loggedPath = (url: string | undefined): string => {
  const u = url ?? '';
  const q = u.indexOf('?');
  return q >= 0 ? u.slice(0, q) : u;
};

/**
 * Headers that say what served (or would have served) a request. The model id may come from the
 * client, so it is written in the header-safe encoding, or left out (shared/modelIds.ts): a header
 * value never throws on the answer path.
 */
export function servedHeaders(target: Target): Record<string, string> {
  const h: Record<string, string> = { 'x-switchyard-selected-connection-id': target.conn.id };
  const model = modelHeaderValue(target.model);
  if (model !== null) h['x-switchyard-served-model'] = model;
  if (target.combo) h['x-switchyard-combo'] = target.combo.name;
  return h;
}

export class RequestRecord {
  readonly attempts: AttemptEntry[] = [];
  readonly skipped: SkipEntry[] = [];
  /** The session's pin and what it did (routing/sessionRouting.ts). */
  affinity: AffinityTrace | null = null;
  /** The exclusive lease the request presented and what it did. */
  lease: LeaseTrace | null = null;
  private finished = false;
  /** The waits taken so far (request queue, concurrency caps, cooldown waits); null until the first. */
  private waits: RequestWait[] | null = null;
  /** The combo's order and each target's outcome, when a combo routed the request. */
  private trace: ComboTrace | null = null;
  private readonly rowAttempts = new Map<ComboTraceRow, AttemptEntry>();

  constructor(
    private readonly deps: RecordDeps,
    readonly call: InboundCall,
    readonly model: string,
    readonly stream: boolean,
  ) {}

  /** What the plan left out (disabled connections, unusable combo targets), and the combo's order. */
  planned(plan: RoutePlan): void {
    for (const c of plan.disabled) {
      this.skipped.push({ connectionId: c.id, connectionName: c.name, provider: c.provider, reason: 'disabled', until: null, detail: null });
    }
    const combo = plan.combo;
    if (!combo) return;
    const order: ComboTraceRow[] = plan.order.map((t) => ({
      target: t.combo?.index ?? 0,
      provider: t.conn.provider,
      model: t.model,
      connectionId: t.conn.id,
      connectionName: t.conn.name,
      outcome: 'not_tried',
      reason: null,
      status: null,
    }));
    for (const u of combo.unusable) {
      order.push({
        target: u.index,
        provider: u.provider,
        model: u.model,
        connectionId: u.conn?.id ?? null,
        connectionName: u.conn?.name ?? null,
        outcome: 'skipped',
        reason: u.reason,
        status: null,
      });
      this.skipped.push({
        connectionId: u.conn?.id ?? '',
        connectionName: u.conn?.name ?? `(no ${u.provider} connection)`,
        provider: u.provider,
        reason: u.reason,
        until: null,
        detail: u.detail,
        model: u.model,
        target: u.index,
      });
    }
    this.trace = { id: combo.id, name: combo.name, strategy: combo.strategy, via: combo.via, pattern: combo.pattern, order, waits: [] };
  }

  get comboName(): string | null {
    return this.trace?.name ?? null;
  }

  /**
   * A cooldown-aware wait the request took before walking the targets again: every target was
   * held back, and it waited for `first.target`'s exclusion to lift at `first.until`.
   */
  waited(ms: number, reason: string, first: { until: number; target: Target; ex: Exclusion }): void {
    this.trace?.waits.push({ ms: Math.round(ms), reason });
    const t = first.target;
    (this.waits ??= []).push({
      reason: 'all_cooling',
      ms: Math.round(ms),
      until: first.until,
      heldBy: first.ex.reason,
      connectionId: t.conn.id,
      connectionName: t.conn.name,
      model: t.model,
      attempt: null,
    });
  }

  /** The trace row of this target (the first, should a connection appear twice). A scan: a combo has few rows. */
  private row(target: Target): ComboTraceRow | undefined {
    if (!target.combo || !this.trace) return undefined;
    const index = target.combo.index;
    const id = target.conn.id;
    for (const r of this.trace.order) if (r.target === index && r.connectionId === id) return r;
    return undefined;
  }

  skip(target: Target, ex: Exclusion): void {
    const entry: SkipEntry = {
      connectionId: target.conn.id,
      connectionName: target.conn.name,
      provider: target.conn.provider,
      reason: ex.reason,
      until: ex.until,
      detail: ex.detail,
    };
    if (target.combo) {
      entry.model = target.model;
      entry.target = target.combo.index;
    }
    this.skipped.push(entry);
    const r = this.row(target);
    if (r && r.outcome !== 'served') {
      r.outcome = 'skipped';
      r.reason = ex.reason;
      r.status = null;
      this.rowAttempts.delete(r);
    }
  }

  /** An attempt starts; `waits` are what admission waited for first (none: null). */
  startAttempt(target: Target, queuedMs: number, waits: readonly RequestWait[] | null = null): AttemptEntry {
    const { conn } = target;
    if (waits) {
      const attempt = this.attempts.length + 1;
      for (const w of waits) {
        (this.waits ??= []).push({ ...w, connectionId: conn.id, connectionName: conn.name, model: target.model, attempt });
      }
    }
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
    this.lastTarget = target;
    const r = this.row(target);
    if (r && r.outcome !== 'served') this.rowAttempts.set(r, entry);
    return entry;
  }

  get lastAttempt(): AttemptEntry | undefined {
    return this.attempts[this.attempts.length - 1];
  }

  /**
   * The answer of `target` is about to reach the client: a provisional entry is journalled, so a
   * crash between the answer's end and its final entry still leaves this request in the log.
   * Resolves once the journal holds it; the answer's first byte must wait for that.
   */
  answering(target: Target, status: number): Promise<void> {
    if (this.finished) return ANSWERED;
    const e = this.entry();
    e.status = status;
    served(e, target);
    e.errorCode = 'log_incomplete';
    e.errorMessage = 'Switchyard stopped before this request was fully logged; its answer had started';
    return this.deps.requestLog.provisional(e);
  }

  /** A non-stream response was piped to the client (completely or not). */
  committed(target: Target, firstByteAt: number, r: CommitResult): void {
    this.served(target, firstByteAt, r, r.completed ? null : { code: 'stream_interrupted', message: 'the response stream ended early' });
  }

  /**
   * A complete answer in memory is about to be written in one go: its final entry is logged now
   * (journalled with this turn's other entries; `durable()` says when), so it needs no provisional
   * one. Returns the entry, for `clientLeft` should the client be gone by the time it is written.
   */
  answered(target: Target, status: number, firstByteAt: number, usage: TappedUsage): RequestLogEntry | null {
    if (this.finished) return null;
    return this.served(target, firstByteAt, usage, null, status);
  }

  /** Resolves once every entry logged so far is in the journal (logJournal.ts). */
  durable(): Promise<void> {
    return this.deps.requestLog.durable();
  }

  /** The client left before an answer logged by `answered` could be written: the log says so (journal and store). */
  clientLeft(e: RequestLogEntry): void {
    this.deps.requestLog.amend(e, { status: 499, errorCode: 'client_closed_request', errorMessage: 'the client closed the connection before the response' });
  }

  /**
   * A stream reached the client (clientStream.ts): `target` wrote its last part, `usage` sums every
   * delivered attempt, `end` says why it did not end cleanly (null: it did).
   */
  streamed(target: Target, commitAt: number, usage: TappedUsage, end: { code: string; message: string } | null): void {
    this.served(target, commitAt, usage, end);
  }

  private served(target: Target, firstByteAt: number, usage: TappedUsage, end: { code: string; message: string } | null, status = this.call.res.statusCode): RequestLogEntry {
    const e = this.entry();
    e.status = status;
    served(e, target);
    const row = this.row(target);
    if (row) {
      this.rowAttempts.delete(row);
      Object.assign(row, { outcome: 'served', reason: null, status: e.status });
    }
    e.ttfbMs = Math.round(firstByteAt - this.call.startMono);
    e.inputTokens = usage.inputTokens;
    e.outputTokens = usage.outputTokens;
    e.cacheReadTokens = usage.cacheReadTokens;
    e.cacheWriteTokens = usage.cacheWriteTokens;
    // Priced once, here, as the request finishes (a memoised lookup): a later price edit never rewrites it.
    e.costUsd = (this.deps.prices ?? builtInPrices).costOf(e.model, usage);
    if (end) {
      e.errorCode = end.code;
      e.errorMessage = end.message.slice(0, 500);
    }
    this.append(e);
    return e;
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
    sendProxyError(this.call.res, this.call.protocol, err, this.call.requestId, this.failureHeaders(target));
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
    const n = estimateInputTokens(this.call.json);
    const body = JSON.stringify(this.call.protocol === 'gemini-count-tokens' ? { totalTokens: n } : { input_tokens: n });
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
        ...this.failureHeaders(this.lastTarget),
      };
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

  /** The target of the last attempt (for the headers of a relayed failure). */
  lastTarget: Target | null = null;

  /** What a failure answer says about the route: the combo, and the target whose error it is. */
  private failureHeaders(target: Target | null): Record<string, string> {
    if (target) return servedHeaders(target);
    return this.trace ? { 'x-switchyard-combo': this.trace.name } : {};
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
      combo: this.trace,
      affinity: this.affinity,
      lease: this.lease,
      clientKeyName: null,
      clientKeyRevoked: false,
      waits: this.waits ?? NO_WAITS,
    };
  }

  private append(e: RequestLogEntry): void {
    if (this.finished) return;
    this.finished = true;
    for (const [row, a] of this.rowAttempts) {
      row.outcome = 'failed';
      row.reason = a.errorClass ?? a.errorCode;
      row.status = a.status;
    }
    this.deps.requestLog.append(e);
  }
}

const ANSWERED: Promise<void> = Promise.resolve();

/** The waits of a request that waited for nothing: one shared, never-written list. */
const NO_WAITS: RequestWait[] = Object.freeze([]) as unknown as RequestWait[];

function served(e: RequestLogEntry, target: Target): void {
  e.model = target.model;
  e.connectionId = target.conn.id;
  e.connectionName = target.conn.name;
  e.provider = target.conn.provider;
}

/**
 * A local count_tokens / countTokens answer (about four characters per token over the prompt's JSON), marked
 * with x-switchyard-estimated so a client can tell it from the provider's own count.
 */
export function estimateInputTokens(json: Record<string, unknown>): number {
  // Anthropic's fields, and Gemini's (a countTokens body holds `contents` or a whole `generateContentRequest`).
  const text = JSON.stringify([json.system ?? '', json.messages ?? [], json.tools ?? [], json.systemInstruction ?? '', json.contents ?? [], json.generateContentRequest ?? '']);
  return Math.max(1, Math.ceil(text.length / 4));
}
