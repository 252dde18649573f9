// What happens once an attempt is ready: its response is delivered to the client, its outcome
// reported to the resilience layer exactly once (when it ends: a stream that breaks after commit
// is a failure, never a success), and — for a stream that breaks inside its text while mid-stream
// recovery is on — the walk goes on to the next target with the answer so far (continuing.ts),
// whose continuation is spliced onto the same client stream (clientStream.ts). When nothing more
// can be done the client's stream ends with an error event saying the answer is incomplete, and
// the request-log row is written once, at the very end (R-TW-12).
//
// Also here: R-TW-10's early reopen. A stream a watchdog abandoned before anything reached the
// client may, with `streamRecovery.enabled`, be tried once more on the same connection.
import type { AdmissionPort } from '../admission/port';
import type { Clock } from '../clock';
import type { SecretRedactor } from '../logger';
import type { ResiliencePort, UpstreamFailure } from '../resilience/port';
import type { Target } from '../routing/target';
import type { LatencyTracker } from '../routing/latencyTracker';
import { toTransportError } from '../upstream/client';
import type { AttemptContext, ReadyResponse } from './attempt';
import type { ResponseBody, WholeAnswer } from './bodyReader';
import { ClientStream } from './clientStream';
import { commitResponse, writeWhole } from './commit';
import { Continuation } from './continuing';
import { endedEmpty, noteStats } from './holdBack';
import type { InboundCall } from './inbound';
import type { ProxyError } from './errors';
import type { RequestRecord } from './requestRecord';
import { streamPolicyFor } from './streamPolicy';
import { endWithStreamError } from './streamErrors';
import type { Walk } from './unserved';
import { UpstreamStream } from './upstreamStream';
import type { ResolvedSettings } from '../settings/resolve';

export interface DeliveryDeps {
  resilience: ResiliencePort;
  admission: AdmissionPort;
  latency: LatencyTracker;
  clock: Clock;
  redactor: SecretRedactor;
  settings: { readonly snapshot: ResolvedSettings };
}

/** The stream-recovery part of a walk. */
export interface StreamWalk {
  /** The client's stream, once an attempt reached it. */
  client: ClientStream | null;
  /** Set while the next attempts continue a broken answer. */
  continuation: Continuation | null;
  /** Targets reopened once already (R-TW-10). */
  reopened: Set<Target>;
}

export const newStreamWalk = (): StreamWalk => ({ client: null, continuation: null, reopened: new Set() });

/** 'done': the request is answered; 'next': go on to the next target (to continue the answer). */
export type Delivered = 'done' | 'next';

/**
 * Delivers a ready attempt and reports its outcome (always: the caller must not report it again).
 * `t0` is the attempt's start (monotonic).
 */
export async function deliver(
  deps: DeliveryDeps,
  call: InboundCall,
  target: Target,
  ready: ReadyResponse,
  record: RequestRecord,
  walk: Walk,
  ctx: AttemptContext,
  t0: number,
): Promise<Delivered> {
  const { resilience, clock } = deps;
  const entry = ctx.entry;
  entry.ttfbMs = ready.ttfbMs;
  deps.latency.record(target.conn.id, clock.now(), ready.ttfbMs, true);
  if (!(ready.reader instanceof UpstreamStream)) {
    const whole = (ready.reader as ResponseBody).whole?.() ?? null;
    if (whole && !call.res.destroyed) return deliverWhole(deps, call, target, ready as ReadyResponse<ResponseBody>, whole, record, ctx, t0);
    // Nothing reaches the client before its provisional log entry is in the journal (logJournal.ts).
    await record.answering(target, ready.status);
    return deliverPiped(deps, call, target, ready as ReadyResponse<ResponseBody>, record, ctx, t0);
  }
  await record.answering(target, ready.status);

  const stream = ready.reader;
  const sw = walk.streams;
  const client = (sw.client ??= new ClientStream(deps, call, { recovery: streamPolicyFor(deps.settings.snapshot, target).midstream }));
  const end = await client.deliver(target, ready as ReadyResponse<UpstreamStream>, entry);
  noteStats(entry, stream, t0, stream.watch.fired);
  entry.status = call.res.statusCode;
  entry.durationMs = Math.round(clock.monotonic() - t0);

  if (end.kind === 'complete' && endedEmpty(stream)) {
    // R-CC-31: thinking alone is not an answer. The client's stream is well-formed; the attempt is
    // still reported as an empty answer, not a success.
    const failure: UpstreamFailure = { kind: 'empty', status: null, headers: ready.headers, body: '', message: 'the upstream answered with reasoning only (no text, no tool call)' };
    const verdict = resilience.onFailure(target, failure, clock.now());
    deps.admission.observe(target, failure, verdict);
    entry.errorClass = verdict.reason;
    entry.errorCode = 'empty_response';
    entry.errorMessage = failure.message;
    sw.continuation = null;
    record.streamed(target, client.commitAt!, client.usage, { code: 'empty_response', message: failure.message });
    return 'done';
  }
  if (end.kind === 'complete' || end.kind === 'client_gone') {
    // The upstream served (a client that left mid-way says nothing against it).
    resilience.onSuccess(target, clock.now(), { ttfbMs: ready.ttfbMs });
    deps.admission.observe(target, null, null);
    sw.continuation = null;
    record.streamed(target, client.commitAt!, client.usage, end.kind === 'client_gone' ? { code: 'client_closed_request', message: 'the client closed the connection during the stream' } : null);
    return 'done';
  }

  const verdict = resilience.onFailure(target, end.failure, clock.now());
  deps.admission.observe(target, end.failure, verdict);
  entry.errorClass = verdict.reason;
  entry.errorCode = end.code;
  entry.errorMessage = end.failure.message.slice(0, 500);
  walk.last = { failure: end.failure, verdict, response: null };
  walk.spent.add(target);
  if (end.continuable && !ctx.signal.aborted) {
    // Continue the answer elsewhere: the walk moves on with the text the client already has.
    sw.continuation = new Continuation(call, client.state()!.text);
    entry.failedOver = true;
    return 'next';
  }
  if (!end.closed) client.giveUp({ status: end.failure.status ?? 502, message: incompleteMessage(end.failure, end.continuable), code: end.code });
  record.streamed(target, client.commitAt!, client.usage, { code: end.code, message: end.failure.message });
  return 'done';
}

function incompleteMessage(f: UpstreamFailure, couldContinue: boolean): string {
  return couldContinue ? `${f.message}; no other target could continue it` : f.message;
}

/**
 * The walk ended while an answer was waiting to be continued (no target could): the client's
 * stream ends with the error event, and the log row is written. True when that was the case.
 */
export function abandonContinuation(walk: Walk, record: RequestRecord, refusal: ProxyError | null = null): boolean {
  const sw = walk.streams;
  const client = sw.client;
  if (!client?.open || !sw.continuation) return false;
  const f = walk.last?.failure;
  const broke = f?.message ?? 'the upstream stream broke off';
  // A refusal (the lease barrier) names itself; the client's parser still gets a well-formed end.
  const message = refusal ? `${broke}; the continuation was refused: ${refusal.message}` : `${broke}; no other target could continue the answer`;
  const code = refusal ? refusal.code : 'stream_interrupted';
  client.giveUp({ status: refusal ? refusal.status : (f?.status ?? 502), message, code });
  const target = record.lastTarget;
  if (target) record.streamed(target, client.commitAt!, client.usage, { code: refusal ? refusal.code : 'stream_not_continued', message });
  return true;
}

/** R-TW-10: whether a stream a watchdog abandoned before commit is tried again on the same connection. */
export function reopensEarly(deps: DeliveryDeps, target: Target, failure: UpstreamFailure, walk: Walk, ctx: AttemptContext): boolean {
  if (failure.kind !== 'stall' || !ctx.entry.watchdog || walk.streams.client?.committed || walk.streams.reopened.has(target)) return false;
  if (!streamPolicyFor(deps.settings.snapshot, target).reopen) return false;
  walk.streams.reopened.add(target);
  return true;
}

/**
 * A complete answer already in memory (read ahead whole, or translated): its final log entry is
 * journalled first, then status, headers and body go out in one write. One journal line instead of
 * a provisional and a final one, and no pipe.
 */
async function deliverWhole(
  deps: DeliveryDeps,
  call: InboundCall,
  target: Target,
  ready: ReadyResponse<ResponseBody>,
  whole: WholeAnswer,
  record: RequestRecord,
  ctx: AttemptContext,
  t0: number,
): Promise<Delivered> {
  const { resilience, clock } = deps;
  resilience.onSuccess(target, clock.now(), { ttfbMs: ready.ttfbMs });
  deps.admission.observe(target, null, null);
  // The attempt's figures are final before its entry is logged: a logged entry does not change.
  ctx.entry.status = ready.status;
  ctx.entry.durationMs = Math.round(clock.monotonic() - t0);
  const logged = record.answered(target, ready.status, ready.firstByteAt, whole.usage);
  await record.durable();
  if (call.res.destroyed) {
    if (logged) record.clientLeft(logged);
    return 'done';
  }
  writeWhole(call, target, ready, whole);
  return 'done';
}

/** A non-stream body (or a stream the proxy does not read as frames) piped to the client. */
async function deliverPiped(
  deps: DeliveryDeps,
  call: InboundCall,
  target: Target,
  ready: ReadyResponse<ResponseBody>,
  record: RequestRecord,
  ctx: AttemptContext,
  t0: number,
): Promise<Delivered> {
  const { resilience, clock } = deps;
  resilience.onSuccess(target, clock.now(), { ttfbMs: ready.ttfbMs });
  deps.admission.observe(target, null, null);
  const committed = await commitResponse(call, target, ready);
  const clientGone = ctx.signal.aborted;
  if (!committed.completed && !clientGone) {
    const te = toTransportError(committed.error);
    resilience.onFailure(
      target,
      { kind: te.kind === 'idle_timeout' ? 'stall' : 'stream_error', status: null, headers: {}, body: '', message: te.message },
      clock.now(),
    );
    endWithStreamError(call.res, call.protocol, ready.headers['content-type'] ?? '', te.message);
  }
  ctx.entry.status = call.res.statusCode;
  ctx.entry.durationMs = Math.round(clock.monotonic() - t0);
  record.committed(target, ready.firstByteAt, committed);
  return 'done';
}
