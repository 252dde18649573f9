// The answer when the walk over a request's targets ended without a committed response: the last
// upstream failure relayed, a refused admission, a local token estimate, or — when nothing was even
// attempted — why every target was excluded (R-DBG-01..03). Every answer that could succeed later
// carries a truthful Retry-After: the soonest moment any of the request's targets is eligible again.
import type { AdmissionError } from '../admission/port';
import type { CodecError } from '../codecs';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { AttemptVerdict, Exclusion, ResiliencePort, UpstreamFailure } from '../resilience/port';
import type { Target } from '../routing/target';
import type { RelayableResponse } from './attempt';
import { ProxyError } from './errors';
import type { RequestRecord } from './requestRecord';

/** What the walk over the targets left behind. */
export interface Walk {
  last: { failure: UpstreamFailure; verdict: AttemptVerdict; response: RelayableResponse | null } | null;
  lastAdmission: AdmissionError | null;
  exclusions: { target: Target; ex: Exclusion }[];
  /** The endpoint is missing on the gateway (count_tokens): answer with an estimate. */
  countTokensUnsupported: boolean;
  /** The first target whose protocol could not express the request, and why (translation.ts). */
  untranslatable?: CodecError;
}

export const newWalk = (): Walk => ({ last: null, lastAdmission: null, exclusions: [], countTokensUnsupported: false });

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

export function answerUnserved(deps: UnservedDeps, record: RequestRecord, targets: readonly Target[], walk: Walk): void {
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
    })),
  };
  const summary = exclusions
    .map(({ target, ex }) => {
      const s = secondsLeft(ex);
      return `${target.conn.name}: ${ex.reason}${s !== null ? ` ${s}s` : ''}`;
    })
    .join('; ');
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
        `every connection for "${record.model}" is temporarily excluded (${summary}); retry in ${secs}s`,
        { retryAfterMs: earliest - now, diagnostics },
      ),
    );
  }
  // R-DBG-03: no timer is involved; nothing will change until someone fixes a connection.
  deps.log.warn('routing.no_executable_targets', { model: record.model, summary });
  return record.fail(
    new ProxyError(
      404,
      'no_executable_targets',
      `no connection for "${record.model}" can serve requests (${summary}); fix or re-enable one in Switchyard`,
      { diagnostics },
    ),
  );
}
