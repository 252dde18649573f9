// The request pipeline, an orchestrator: plan the route (which targets, in which order), then walk
// the targets — skip what the resilience layer excludes, take an admission slot, run one attempt
// through the dispatch chain, and either commit the response to the client or report the failure
// and move on. When a walk over a combo serves nothing, the combo wait policy may have the request
// wait out a short cooldown and walk again. Each concern lives in its own module: routing/plan.ts
// (combo or model resolution, and order), routing/combos/ (strategies, the context-length rule,
// the wait policy), attempt.ts (the upstream call and its interceptors; holdBack.ts keeps a stream
// from the client until its first model output), delivery.ts (the client's stream, the outcome
// report, and continuing a broken answer on the next target), requestRecord.ts (the log row and
// the single final answer), unserved.ts (the answer when nothing served). Before commit a failure
// fails over invisibly; after it, only a continuation spliced onto the client's stream can help.
import type { AdmissionPort, AdmissionLease } from '../admission/port';
import { AdmissionError, NEVER_ABORTED } from '../admission/port';
import { sleep, type Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import type { Logger, SecretRedactor } from '../logger';
import type { RequestLog } from '../logs/requestLog';
import type { PriceCatalogue } from '../usage/prices';
import type { Exclusion, ResiliencePort } from '../resilience/port';
import type { ComboRouter } from '../routing/combos/comboRouter';
import { ModelCatalog } from '../routing/combos/modelCatalog';
import { decideWait } from '../routing/combos/waitPolicy';
import type { LatencyTracker } from '../routing/latencyTracker';
import { planRoute, type RoutePlan } from '../routing/plan';
import { inboundShapeOf } from '../routing/upstreamShape';
import type { TargetSelector } from '../routing/selector';
import type { SessionRouting } from '../routing/sessionRouting';
import type { Target } from '../routing/target';
import type { SettingsService } from '../settings/settingsService';
import type { UpstreamClient } from '../upstream/client';
import type { TimeoutResolver } from '../upstream/timeouts';
import {
  CLIENT_GONE,
  composeDispatch,
  EXECUTION_EXPIRED,
  upstreamDispatch,
  type AttemptInterceptor,
  type Dispatch,
} from './attempt';
import { admit, passBarrier } from './admit';
import { abandonContinuation, deliver, reopensEarly } from './delivery';
import { ProxyError } from './errors';
import { CallShape, wantsStream, type InboundCall } from './inbound';
import { checkedModel } from './inboundChecks';
import { RequestRecord } from './requestRecord';
import { SameTargetRetries } from './sameTargetRetry';
import { letGoOfParsedBody, refusalFor } from './translation';
import { afterProbe } from './probeWait';
import { answerNoRoute, answerUnserved, newWalk, nextRound, type Walk } from './unserved';
import { ToolLimits } from '../routing/toolLimits';
import { LightAbortController } from '../lightSignal';
import { byteLengthOf } from './requestBytes';

export type { InboundCall } from './inbound';

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
  /** Wrapped around every upstream attempt, the first one outermost (attempt.ts). */
  interceptors?: readonly AttemptInterceptor[];
  /** Combos: resolution, strategies and the model catalog (absent: no combos). */
  combos?: ComboRouter;
  /** Session affinity and exclusive leases: plan order, refusals, the final dispatch barrier. */
  sessions?: SessionRouting;
  /** Tool-count limits learnt from refusals, across requests (absent: remembered per request only). */
  toolLimits?: ToolLimits;
  /** The price catalogue each served request's cost is read from (absent: built-in prices only). */
  prices?: PriceCatalogue;
}

/** One request's abort signal: the client went away, or the running attempt's execution budget ended. */
class RequestSignal {
  private readonly ctl = new LightAbortController();
  private readonly onClose = () => {
    if (!this.res.writableFinished) this.ctl.abort(CLIENT_GONE);
  };

  constructor(private readonly res: InboundCall['res']) {
    res.on('close', this.onClose);
  }

  get signal(): AbortSignal {
    return this.ctl.signal;
  }

  get clientGone(): boolean {
    return this.ctl.signal.aborted && this.ctl.signal.reason === CLIENT_GONE;
  }

  /** Aborts the request when the admission lease's execution budget runs out; returns the unwatch. */
  watchBudget(lease: AdmissionLease): () => void {
    if (lease.signal === NEVER_ABORTED) return noop;
    const expire = () => this.ctl.abort(EXECUTION_EXPIRED);
    if (lease.signal.aborted) expire();
    else lease.signal.addEventListener('abort', expire, { once: true });
    return () => lease.signal.removeEventListener('abort', expire);
  }

  dispose(): void {
    this.res.off('close', this.onClose);
  }
}

const noop = () => {};
const dispatchers = new WeakMap<PipelineDeps, Dispatch>();
const dispatchFor = (deps: PipelineDeps): Dispatch => {
  let d = dispatchers.get(deps);
  if (!d) dispatchers.set(deps, (d = composeDispatch(upstreamDispatch(deps), deps.interceptors ?? [])));
  return d;
};

const plainCatalog = new ModelCatalog();

export async function runPipeline(deps: PipelineDeps, call: InboundCall): Promise<void> {
  const model = checkedModel(call);
  const values = deps.settings.values;
  const record = new RequestRecord(deps, call, model, wantsStream(call));
  const plan = planRoute(
    {
      connections: () => deps.registry.all(),
      selector: deps.selector,
      strategy: () => ({ name: values['routing.strategy'], latencyWeight: values['p2cLatency.weight'] }),
      combos: deps.combos,
    },
    inboundShapeOf(call.protocol),
    model,
    new CallShape(call, byteLengthOf(call.body)),
  );
  // An OPEN breaker's probe goes to the connection most likely healthy (reorders in place).
  deps.resilience.orderForProbe(plan.order, deps.clock.now());
  // A lease narrows the order to its pool (or refuses); a session's eligible pin goes first.
  // (A promise only for a leased request in team mode whose lease is read from the team first.)
  const routed = deps.sessions?.route(call, plan, record, deps.clock.now()) ?? null;
  const refused = routed instanceof Promise ? await routed : routed;
  record.planned(plan);
  if (refused) return record.fail(refused);
  if (plan.order.length === 0) return answerNoRoute(deps, record, plan);

  const request = new RequestSignal(call.res);
  const walk = newWalk(deps.combos?.catalog ?? plainCatalog, call, plan.order, deps.toolLimits ?? new ToolLimits());
  walk.retries = sameTargetRetries(deps, call, plan);
  letGoOfParsedBody(call, plan.order[0]);
  try {
    for (;;) {
      const step = await walkTargets(deps, call, plan, request, record, walk);
      if (step === 'done') return;
      if (step === 'stop' || request.signal.aborted) break;
      const probe = await lastResort(deps, call, request, record, walk);
      if (probe === 'done') return;
      if (probe === 'stop' || request.signal.aborted) break;
      const wait = cooldownWait(deps, call, plan, walk);
      if (wait === null) break;
      const waitMs = wait.ms;
      record.waited(waitMs, 'every target held back by a short cooldown', wait);
      if (plan.combo) deps.log.info('combo.waiting', { combo: plan.combo.name, ms: waitMs, requestId: call.requestId });
      else deps.log.info('model.waiting', { model, ms: waitMs, requestId: call.requestId });
      try {
        await sleep(deps.clock, waitMs, request.signal);
      } catch {
        break; // the client left
      }
      nextRound(walk);
    }
  } finally {
    request.dispose();
  }

  if (request.clientGone) return record.aborted();
  // A broken answer no target could continue: the client's stream ends with an error event.
  if (abandonContinuation(walk, record)) return;
  // The last tried target had nowhere to fail over to.
  if (walk.last && record.lastAttempt) record.lastAttempt.failedOver = false;
  answerUnserved(deps, record, plan, walk);
}

/** One walk over the plan's targets. 'done' = answered; 'stop' = nothing else may help; 'next' = none served. */
async function walkTargets(
  deps: PipelineDeps,
  call: InboundCall,
  plan: RoutePlan,
  request: RequestSignal,
  record: RequestRecord,
  walk: Walk,
): Promise<'done' | 'next' | 'stop'> {
  const maxAttempts = attemptBudget(deps, plan);
  for (let i = 0; i < plan.order.length; i++) {
    const target = plan.order[i]!;
    if (request.signal.aborted) return 'stop';
    if (walk.spent.has(target)) continue;
    // Can this target take the request in its protocol? (translation.ts)
    const refusal = refusalFor(call, target);
    if (refusal?.kind === 'estimate') {
      walk.countTokensUnsupported = true;
      return 'stop';
    }
    if (refusal) {
      record.skip(target, refusal.skip);
      walk.untranslatable ??= refusal.error;
      walk.spent.add(target);
      continue;
    }
    if (walk.roundAttempts >= maxAttempts) {
      record.skip(target, { reason: 'attempt_budget', until: null, detail: `${maxAttempts} attempts used` });
      continue;
    }
    const barred = walk.refusals.bar(target, deps.clock.now());
    if (barred) {
      record.skip(target, { ...barred, until: null });
      walk.spent.add(target);
      continue;
    }
    const admission = admit(deps, call, target, request.signal, record, walk);
    const lease = admission instanceof Promise ? await admission : admission;
    if (lease === 'answered') return 'done';
    if (lease === null) continue;
    walk.roundAttempts++;
    const step = await runAttempt(deps, call, target, lease, request, record, walk);
    if (step === 'again') i--; // R-TW-10: the same connection once more
    else if (step === 'next' && walk.retries?.planned(target)) {
      // The same target after a short wait (sameTargetRetry.ts); it is checked again like any other.
      if (!(await walk.retries.wait(request.signal))) return 'stop';
      i--;
    } else if (step !== 'next') return step;
  }
  return 'next';
}

/**
 * Every target was excluded or failed. While some of the excluded are out only on a guess of ours
 * (a backoff with no upstream hint, an ejection, a key-level breaker hold), probe them one after
 * another rather than answer an error: the resilience layer picks the likeliest to have recovered
 * and rations such probes per connection (ResiliencePort.lastResort).
 */
async function lastResort(
  deps: PipelineDeps,
  call: InboundCall,
  request: RequestSignal,
  record: RequestRecord,
  walk: Walk,
): Promise<'done' | 'next' | 'stop'> {
  if (walk.lastResortUsed || walk.exclusions.length === 0) return 'next';
  walk.lastResortUsed = true;
  for (let n = walk.exclusions.length; n > 0 && !request.signal.aborted; n--) {
    const step = await probeGuessed(deps, call, request, record, walk);
    if (step !== 'next') return step === 'none' ? 'next' : step;
  }
  return 'next';
}

/** One last-resort probe; 'none' when no excluded target may be probed now. */
async function probeGuessed(
  deps: PipelineDeps,
  call: InboundCall,
  request: RequestSignal,
  record: RequestRecord,
  walk: Walk,
): Promise<'done' | 'next' | 'stop' | 'none'> {
  const at = deps.clock.now();
  const candidates = walk.exclusions.map((e) => e.target).filter((t) => !walk.spent.has(t) && !walk.refusals.bar(t, at));
  const target = deps.resilience.lastResort(candidates, at) ?? (await afterProbe(deps, candidates, request.signal));
  if (target === null) return 'none';
  let lease: AdmissionLease;
  try {
    lease = await deps.admission.acquire(target, request.signal);
  } catch (err) {
    if (err instanceof AdmissionError || request.signal.aborted) return 'next';
    throw err;
  }
  const now = deps.clock.now();
  const claimed = await deps.resilience.beginAttempt(target, now);
  if (claimed) {
    lease.release();
    return 'next';
  }
  // The lease barrier holds for a probe like for any dispatch (R-LS-07).
  const barred = await passBarrier(deps, call, target, lease, record, walk, now);
  if (barred !== null) return barred === 'answered' ? 'done' : 'next';
  const step = await runAttempt(deps, call, target, lease, request, record, walk, true);
  return step === 'again' ? 'next' : step;
}

/**
 * How long to wait before walking the targets again (R-SQ-16/23), or null to answer now. Combos
 * and plain models alike, with the same limits; plain models unless `cooldownWait.plainModels` is off.
 */
function cooldownWait(deps: PipelineDeps, call: InboundCall, plan: RoutePlan, walk: Walk): { ms: number; until: number; target: Target; ex: Exclusion } | null {
  // A client already reading a stream is not kept waiting on a cooldown.
  if (walk.countTokensUnsupported || walk.streams.client?.committed) return null;
  const v = deps.settings.values;
  const now = deps.clock.now();
  const targets = plan.order.map((t) => ({ ex: deps.resilience.exclusion(t, now), spent: walk.spent.has(t) }));
  const d = decideWait({
    settings: {
      enabled: v['comboCooldownWait.enabled'],
      maxWaitMs: v['comboCooldownWait.maxWaitMs'],
      maxAttempts: v['comboCooldownWait.maxAttempts'],
      budgetMs: v['comboCooldownWait.budgetMs'],
    },
    optedOut: plan.combo ? plan.combo.options.comboCooldownWaitEnabled === false : !v['cooldownWait.plainModels'],
    waitsTaken: walk.waits,
    elapsedMs: deps.clock.monotonic() - call.startMono,
    now,
    retryable: walk.last ? walk.last.verdict.failover : walk.lastAdmission === null,
    targets,
  });
  walk.waitRefused = d.wait ? null : d.why;
  return d.wait ? { ms: d.ms, until: d.until, target: plan.order[d.first]!, ex: targets[d.first]!.ex! } : null;
}

/**
 * One attempt on an admitted target: dispatch, then deliver or record the failure. 'done' = the
 * request is answered; 'next' = fail over (or go on continuing a broken answer); 'again' = the same
 * target once more (R-TW-10); 'stop' = no further target may help. After 'next', a planned
 * same-target retry (sameTargetRetry.ts) sends to this target again after a short wait. Whatever
 * happens (including a throw), the lease is released and an attempt without an outcome gives back
 * anything beginAttempt claimed (the half-open probe).
 */
async function runAttempt(
  deps: PipelineDeps,
  call: InboundCall,
  target: Target,
  lease: AdmissionLease,
  request: RequestSignal,
  record: RequestRecord,
  walk: Walk,
  asLastResort = false,
): Promise<'done' | 'next' | 'again' | 'stop'> {
  const { resilience, clock } = deps;
  const entry = record.startAttempt(target, lease.queuedMs, lease.waits);
  if (asLastResort) entry.lastResort = true;
  walk.retries?.mark(target, entry);
  const t0 = clock.monotonic();
  const unwatch = request.watchBudget(lease);
  let reported = false;
  try {
    const ctx = { call, target, stream: record.stream, signal: request.signal, extraHeaders: {}, entry, continuation: walk.streams.continuation };
    const outcome = await dispatchFor(deps)(ctx);
    switch (outcome.kind) {
      case 'ready':
        unwatch(); // the execution budget ends when the response starts: it never cuts one in progress (R-RQ-06)
        reported = true;
        return await deliver(deps, call, target, outcome.response, record, walk, ctx, t0);
      case 'aborted':
        entry.errorClass = 'client_aborted';
        return 'stop';
      case 'execution_timeout':
        entry.errorClass = 'execution_timeout';
        entry.errorCode = 'RATE_LIMIT_EXECUTION_TIMEOUT';
        entry.durationMs = Math.round(clock.monotonic() - t0);
        if (abandonContinuation(walk, record)) return 'done';
        record.fail(new ProxyError(504, 'RATE_LIMIT_EXECUTION_TIMEOUT', 'the upstream request ran past its execution budget (the "Execution budget" setting)', { retryAfterMs: 1_000 }), target);
        return 'done';
      case 'failed': {
        const { failure } = outcome;
        // A stream that failed after its 2xx (a stall, an empty or truncated body) keeps that status (holdBack.ts).
        entry.status = failure.status ?? entry.status;
        if (call.protocol === 'anthropic-count-tokens' && [404, 405, 501].includes(failure.status ?? 0)) {
          // The endpoint is missing on this gateway: not a failure of the connection or the model.
          entry.errorClass = 'endpoint_unsupported';
          walk.countTokensUnsupported = true;
          return 'stop';
        }
        const verdict = resilience.onFailure(target, failure, clock.now());
        reported = true;
        deps.admission.observe(target, failure, verdict);
        // A request the upstream refused as malformed says nothing about the connection.
        if (verdict.failover) deps.latency.record(target.conn.id, clock.now(), null, false);
        entry.errorClass = verdict.reason;
        entry.errorMessage = failure.message.slice(0, 500);
        entry.ttfbMs = outcome.ttfbMs;
        walk.last = { failure, verdict, response: outcome.response };
        if (reopensEarly(deps, target, failure, walk, ctx)) return 'again';
        const committed = walk.streams.client?.committed === true;
        // A retry of this target after a short wait is planned: the walk takes it (walkTargets).
        if (!asLastResort && walk.retries?.offer(target, failure, verdict, { committed, roundAttempts: walk.roundAttempts, spent: walk.spent })) return 'next';
        walk.spent.add(target);
        // A bad request may still be served elsewhere: a larger window, more tools, natively (refusals.ts).
        if (!verdict.failover && !walk.refusals.goesOn(target, failure, verdict, walk.spent, clock.now())) return 'stop';
        entry.failedOver = true;
        return 'next';
      }
    }
    return outcome satisfies never;
  } finally {
    unwatch();
    lease.release();
    if (!reported) resilience.onAbandon(target, clock.now());
    entry.durationMs ??= Math.round(clock.monotonic() - t0);
  }
}

/** Upstream attempts per walk: the combo's own, else the proxy's. */
const attemptBudget = (deps: PipelineDeps, plan: RoutePlan): number => plan.combo?.options.maxAttempts ?? deps.settings.values['proxy.maxAttempts'];

/**
 * The request's same-target retry budget: the combo's own count, else the proxy's settings. A
 * retry is a wait, so the cooldown-wait switches and limits bound it too: none when waits are off
 * for this request (globally, by the combo's opt-out, or for plain models), never longer than the
 * longest single wait, and within the request's wait budget.
 */
function sameTargetRetries(deps: PipelineDeps, call: InboundCall, plan: RoutePlan): SameTargetRetries {
  const v = deps.settings.values;
  const mayWait = v['comboCooldownWait.enabled'] && (plan.combo ? plan.combo.options.comboCooldownWaitEnabled !== false : v['cooldownWait.plainModels']);
  const settings = {
    maxRetries: mayWait ? (plan.combo?.options.sameTargetRetries ?? v['sameTargetRetry.maxRetries']) : 0,
    maxHintedWaitMs: Math.min(v['sameTargetRetry.maxHintedWaitMs'], v['comboCooldownWait.maxWaitMs']),
    unhintedDelayMs: v['sameTargetRetry.unhintedDelayMs'],
  };
  const deadline = call.startMono + v['comboCooldownWait.budgetMs'];
  return new SameTargetRetries(deps, settings, plan.order, attemptBudget(deps, plan), deadline, call.requestId);
}
