// The answer when the walk over a request's targets ended without a committed response: the last
// upstream failure relayed, a refused admission, a local token estimate, or — when nothing was even
// attempted — why every target was excluded (R-DBG-01..03). Every answer that could succeed later
// carries a truthful Retry-After: the soonest moment any of the request's targets is eligible again.
import type { AdmissionError } from '../admission/port';
import type { CodecError } from '../codecs';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { AttemptVerdict, Exclusion, ResiliencePort, UpstreamFailure } from '../resilience/port';
import type { ModelCatalog } from '../routing/combos/modelCatalog';
import { excludedAnswer, type WaitRefusal } from '../routing/combos/waitPolicy';
import type { ComboPlan, RoutePlan } from '../routing/plan';
import type { Target } from '../routing/target';
import type { ToolLimits } from '../routing/toolLimits';
import type { RelayableResponse } from './attempt';
import { newStreamWalk, type StreamWalk } from './delivery';
import { SKIP_REASON_WORDS } from '../../../shared/skipReasonWords';
import { ProxyError } from './errors';
import type { InboundCall } from './inbound';
import { Refusals } from './refusals';
import type { RequestRecord } from './requestRecord';
import type { SameTargetRetries } from './sameTargetRetry';

/** What the walk over the targets left behind. */
export interface Walk {
  last: { failure: UpstreamFailure; verdict: AttemptVerdict; response: RelayableResponse | null } | null;
  lastAdmission: AdmissionError | null;
  /** Targets excluded by the resilience layer in the latest round. */
  exclusions: { target: Target; ex: Exclusion }[];
  /** The endpoint is missing on the gateway (count_tokens): answer with an estimate. */
  countTokensUnsupported: boolean;
  /** Targets that failed (or were barred) in the latest round: another try now would not help. */
  spent: Set<Target>;
  /** Upstream attempts in the latest round (the attempt budget is per round). */
  roundAttempts: number;
  /** Cooldown-aware waits taken. */
  waits: number;
  /** The one last-resort probe of an excluded target was used (pipeline.ts lastResort). */
  lastResortUsed: boolean;
  /** Why the last wait was refused, for the diagnostics. */
  waitRefused: WaitRefusal | null;
  /** Bad requests another target may still serve: context length, tool count, a refused translation (refusals.ts). */
  refusals: Refusals;
  /** The first target whose protocol could not express the request, and why (translation.ts). */
  untranslatable?: CodecError;
  /** The client's stream and the answer being continued, if any (delivery.ts). */
  streams: StreamWalk;
  /** Same-target retries after a short wait (sameTargetRetry.ts); absent: none. */
  retries?: SameTargetRetries;
}

export const newWalk = (catalog: ModelCatalog, call: InboundCall, order: readonly Target[], toolLimits: ToolLimits): Walk => ({
  last: null,
  lastAdmission: null,
  exclusions: [],
  countTokensUnsupported: false,
  spent: new Set(),
  roundAttempts: 0,
  waits: 0,
  lastResortUsed: false,
  waitRefused: null,
  refusals: new Refusals(catalog, call, order, toolLimits),
  streams: newStreamWalk(),
});

/** A new walk over the same targets after a wait: exclusions and spent targets are read afresh. */
export function nextRound(walk: Walk): void {
  walk.exclusions = [];
  walk.spent.clear();
  walk.roundAttempts = 0;
  walk.waits++;
}

export interface UnservedDeps {
  resilience: Pick<ResiliencePort, 'exclusion'>;
  clock: Clock;
  log: Logger;
}

/** Statuses whose request may succeed if sent again later (and so get a Retry-After). */
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504, 529]);

/** Maps skip reasons to the spec's diagnostics vocabulary (R-DBG-01). */
const DIAG_REASON: Partial<Record<Exclusion['reason'], string>> = {
  model_lockout: 'model_lockout',
  circuit_open: 'circuit_open',
  provider_cooldown: 'provider_cooldown',
  cooling_down: 'unavailable',
  terminal: 'unavailable',
};

/**
 * How long until one of `targets` may be called again: 1 s when one may be called now, the
 * earliest self-lifting exclusion otherwise, null when every target needs an operator.
 */
export function retryAfterFor(resilience: UnservedDeps['resilience'], targets: readonly Target[], now: number): number | null {
  let soonest: number | null = null;
  for (const t of targets) {
    const ex = resilience.exclusion(t, now);
    if (ex === null) return 1_000;
    if (ex.until !== null && (soonest === null || ex.until < soonest)) soonest = ex.until;
  }
  return soonest === null ? null : Math.max(1_000, soonest - now);
}

/**
 * Claude Code replaces the message of a 404 model error with its own ("There's an issue with the
 * selected model ... Run --model"), so the fixes our message names never reach its user; a 400 it
 * prints verbatim. Other clients get Anthropic's and OpenAI's 404. (docs/decisions/agents-0004-claude-code-unknown-model.md)
 */
function hidesModelNotFound(call: { req: { headers: Record<string, string | string[] | undefined> } }): boolean {
  const ua = call.req.headers['user-agent'];
  return typeof ua === 'string' && ua.startsWith('claude-cli/');
}

/** Nothing in the plan: the model is unknown, or (a combo) none of its targets can be used at all. */
export function answerNoRoute(deps: UnservedDeps, record: RequestRecord, plan: RoutePlan): void {
  const combo = plan.combo;
  if (!combo) {
    const status = hidesModelNotFound(record.call) ? 400 : 404;
    return record.fail(new ProxyError(status, 'model_not_found', `model "${record.model}" is not available: ${plan.hint}`, { param: 'model' }));
  }
  const unusable = combo.unusable.map((u) => `${u.provider}/${u.model}: ${u.reason} (${u.detail})`);
  deps.log.warn(`[COMBO] ${strategyTitle(combo.strategy)} selection: no executable targets — ${unusable.join('; ') || 'the combo lists none'}`, {
    combo: combo.name,
  });
  // The message is read by people (the agent's user, the request log): details, not reason codes.
  const why = combo.unusable.map((u) => `${u.provider}/${u.model}: ${u.detail}`).join('; ') || 'it lists no targets';
  return record.fail(
    new ProxyError(404, 'no_executable_targets', `combo "${combo.name}" has no target that can serve this request (${why})`, {
      diagnostics: { combo: combo.name, strategy: combo.strategy, excluded: [], unusable: unusableDiagnostics(combo) },
    }),
  );
}

const strategyTitle = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const unusableDiagnostics = (combo: ComboPlan) =>
  combo.unusable.map((u) => ({
    target: u.index,
    provider: u.provider,
    model: u.model,
    connectionId: u.conn?.id ?? null,
    connectionName: u.conn?.name ?? null,
    reason: u.reason,
    detail: u.detail,
  }));

export function answerUnserved(deps: UnservedDeps, record: RequestRecord, plan: RoutePlan, walk: Walk): void {
  const targets = plan.order;
  const now = deps.clock.now();
  if (walk.countTokensUnsupported) return record.tokenEstimate();
  if (walk.last) {
    const { failure, verdict, response } = walk.last;
    const status = response?.status ?? null;
    const retryable = status === null || RETRYABLE.has(status);
    const retryAfterMs = verdict.retryAfterMs ?? (retryable ? retryAfterFor(deps.resilience, targets, now) : null);
    return record.relay(failure, verdict.reason, response, retryAfterMs);
  }
  if (walk.lastAdmission) {
    const a = walk.lastAdmission;
    return record.fail(new ProxyError(a.status, a.code, a.message, { retryAfterMs: a.retryAfterMs }));
  }

  // Nothing was attempted. Targets that cannot take the request are a 400 naming the field, unless
  // another target is only waiting out a timer (then the request may succeed later).
  const { exclusions } = walk;
  if (walk.untranslatable && !exclusions.some((e) => e.ex.until !== null)) {
    const e = walk.untranslatable;
    return record.fail(new ProxyError(400, e.code, `${e.message} (field ${e.field}; no connection that serves "${record.model}" can express it)`, { param: e.field }));
  }
  const secondsLeft = (ex: Exclusion) => (ex.until !== null ? Math.max(0, Math.ceil((ex.until - now) / 1000)) : null);
  const diagnostics = {
    excluded: exclusions.map(({ target, ex }) => ({
      connectionId: target.conn.id,
      connectionName: target.conn.name,
      provider: target.conn.provider,
      model: target.model,
      reason: DIAG_REASON[ex.reason] ?? ex.reason,
      detail: ex.detail,
      retryAfterSec: secondsLeft(ex),
      ...(target.combo ? { target: target.combo.index } : {}),
      ...(ex.cause ? { cause: ex.cause } : {}),
    })),
  };
  const summary = exclusions
    .map(({ target, ex }) => {
      const s = secondsLeft(ex);
      return `${target.combo ? `${target.conn.name} ${target.model}` : target.conn.name}: ${ex.reason}${s !== null ? ` ${s}s` : ''}`;
    })
    .join('; ');
  // The same, in words, for the error message (the machine reasons stay in diagnostics and the log).
  const words = exclusions
    .map(({ target, ex }) => {
      const s = secondsLeft(ex);
      return `${target.combo ? `${target.conn.name} ${target.model}` : target.conn.name}: ${SKIP_REASON_WORDS[ex.reason]}${s !== null ? `, ${s}s left` : ''}`;
    })
    .join('; ');
  if (plan.combo) return answerComboExcluded(deps, record, plan.combo, walk, { ...diagnostics, unusable: unusableDiagnostics(plan.combo) }, summary, words);
  const timed = exclusions.filter((e) => e.ex.until !== null);
  if (timed.length > 0) {
    // R-DBG-02: the pool is configured and connected, and every target is waiting out a timer.
    deps.log.warn('routing.every_target_excluded', { model: record.model, summary });
    const earliest = Math.min(...timed.map((e) => e.ex.until!));
    const secs = Math.max(1, Math.ceil((earliest - now) / 1000));
    return record.fail(
      new ProxyError(
        503,
        'all_targets_cooling_down',
        `every connection for "${record.model}" is held back for now (${words}); retry in ${secs}s`,
        { retryAfterMs: earliest - now, diagnostics: { ...diagnostics, waitRefused: walk.waitRefused } },
      ),
    );
  }
  // R-DBG-03: no timer is involved; nothing will change until someone fixes a connection.
  deps.log.warn('routing.no_executable_targets', { model: record.model, summary });
  return record.fail(
    new ProxyError(
      404,
      'no_executable_targets',
      `no connection for "${record.model}" can serve requests (${words}); fix or re-enable one in Switchyard`,
      { diagnostics },
    ),
  );
}

/**
 * A combo whose every target was excluded before dispatch, once waiting was refused: self-lifting
 * rate limits answer 429 rate_limit_error (R-SQ-24), other self-lifting timers 503 (R-DBG-01),
 * both with Retry-After, retry_after and reset_at at the earliest expiry; timers a wait never fixes
 * answer 503 ALL_TARGETS_SKIPPED without a hint (R-SQ-25); no timer at all, 404 (R-DBG-03).
 */
function answerComboExcluded(
  deps: UnservedDeps,
  record: RequestRecord,
  combo: ComboPlan,
  walk: Walk,
  diagnostics: Record<string, unknown>,
  summary: string,
  words: string,
): void {
  const now = deps.clock.now();
  const answer = excludedAnswer(
    walk.exclusions.map((e) => e.ex),
    now,
  );
  const diag = { combo: combo.name, strategy: combo.strategy, waitRefused: walk.waitRefused, ...diagnostics };
  const title = strategyTitle(combo.strategy);
  if (answer.kind === 'none') {
    deps.log.warn(`[COMBO] ${title} selection: no executable targets — ${summary}`, { combo: combo.name });
    return record.fail(
      new ProxyError(404, 'no_executable_targets', `no target of combo "${combo.name}" can serve requests (${words}); fix or re-enable one in Switchyard`, {
        diagnostics: diag,
      }),
    );
  }
  // R-DBG-02: the pool is configured and connected, and every target is held back by a timer.
  deps.log.warn(`[COMBO] ${title} selection: every target excluded before dispatch — ${summary}`, {
    combo: combo.name,
    waitRefused: walk.waitRefused,
  });
  if (answer.kind === 'skipped') {
    return record.fail(
      new ProxyError(503, 'ALL_TARGETS_SKIPPED', `every target of combo "${combo.name}" is held back by errors that waiting does not fix: a spent quota, bad credentials or a model the provider does not know (${words})`, {
        diagnostics: diag,
      }),
    );
  }
  const ms = Math.max(1, answer.until - now);
  const secs = Math.max(1, Math.ceil(ms / 1000));
  const what = answer.kind === 'rate_limited' ? 'rate-limited' : 'held back for now';
  return record.fail(
    new ProxyError(answer.kind === 'rate_limited' ? 429 : 503, 'all_targets_cooling_down', `every target of combo "${combo.name}" is ${what} (${words}); retry in ${secs}s`, {
      retryAfterMs: ms,
      resetAt: answer.until,
      diagnostics: diag,
    }),
  );
}
