// The seam between the proxy's attempt loop and the Claude account modules: an interceptor in
// undici's shape, `(next) => (attempt) => Promise<outcome>`, wrapped around one upstream attempt on
// a Claude subscription connection. It owns everything that happens *on the same account* before
// the pipeline sees an outcome:
//
//   - the bearer token (refreshed before expiry; once more after a 401, then the request is retried);
//   - the usage windows (every answer's unified headers are recorded);
//   - on the limit 429 (R-CLA-02): the session-limit reset first (R-CLA-16), then the low-priority
//     lane (R-CLA-05): the intercepted 429 is discarded and retried, so it never reaches the
//     pipeline and never cools the connection (R-CLA-07);
//   - inside the lane: the slow header on every try (R-CLA-06), the slot_busy / 529 waits
//     (R-CLA-09..11), and the exits (R-CLA-10, 12, 13).
//
// Whatever it returns is an ordinary outcome for the pipeline's normal path (success, cooldown,
// failover). At a max-wait finish that is the last busy answer (429 or 529): the connection takes
// its normal cooldown and the request fails over to another account, or, with none left, the
// client gets that error with its Retry-After. A dead sign-in is thrown as ClaudeTokenError.
//
// Order in the chain (R-CLA-14): this interceptor sits *outside* any in-attempt retry that reacts
// to 400s (context editing, thinking/effort limits, parameter learning): `claude(retry400(send))`.
// A limit 429 that only appears on one of those retries is then still what `next` returns here.
import { sleep, type Clock } from '../clock';
import type { Random } from '../random';
import type { LaneController } from './laneController';
import type { LimitResetService, ResetOutcome } from './limitReset';
import { LANE_HEADER, LANE_HEADER_VALUE, type LaneDecision, type LaneEndReason } from './lowPriorityLane';
import { slowMaxWaitMs, slowRetryDelayMs, waitBudgetMs } from './slowWait';
import type { ClaudeTokenManager, TokenOutcome } from './tokenManager';
import { OAUTH_BETA } from './accountApi';
import { isLimit429, parseUnifiedHeaders } from './unifiedHeaders';
import type { UsageBook } from './usageWindows';

/** What the interceptor needs to know about one attempt. The pipeline's own attempt type extends it. */
export interface ClaudeAttempt {
  connectionId: string;
  /** Upstream request headers (lower-case names). The interceptor passes `next` a copy with its own. */
  headers: Record<string, string>;
  /** `providerSpecificData.lowPriorityMode` / `.autoLimitReset` (R-CLA-01: both off by default). */
  features: { lowPriorityMode?: boolean; autoLimitReset?: boolean };
  /** `providerSpecificData.organizationUUID`, when set. */
  organizationUUID?: string | null;
  /** Origin of the account API for this connection (accountApiBase). */
  apiBase: string;
  /** Epoch ms when this request's fetch-start budget ends (R-CLA-11); null: no deadline. */
  deadlineAt: number | null;
  /** The client's signal: aborts a lane wait when the client goes away. */
  signal?: AbortSignal;
}

/** What the interceptor needs to read from an outcome. The pipeline's own outcome type extends it. */
export interface ClaudeOutcome {
  /** HTTP status of the upstream answer; null when there was none (transport failure). */
  status: number | null;
  /** Response headers, lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  /** Frees the answer when the interceptor retries instead of returning it (drain or destroy its body). */
  discard(): void;
}

export type AttemptFn<A, O> = (attempt: A) => Promise<O>;
export type AttemptInterceptor<A, O> = (next: AttemptFn<A, O>) => AttemptFn<A, O>;

/** No usable token: `expired` is terminal (mark the connection, "Sign in again"); `transient` retries later. */
export class ClaudeTokenError extends Error {
  constructor(
    readonly kind: 'expired' | 'transient',
    message: string,
    /** transient: when a refresh is tried again (epoch ms). */
    readonly retryAt: number | null = null,
  ) {
    super(message);
    this.name = 'ClaudeTokenError';
  }
}

export type ClaudeEvent =
  | { type: 'token_refreshed_after_401'; connectionId: string }
  | { type: 'limit_reset'; connectionId: string; outcome: ResetOutcome }
  | { type: 'lane_entered'; connectionId: string; until: number | null }
  | { type: 'lane_wait'; connectionId: string; waitMs: number }
  | { type: 'lane_ended'; connectionId: string; reason: LaneEndReason };

export interface ClaudeInterceptorDeps {
  tokens: Pick<ClaudeTokenManager, 'token' | 'afterUnauthorized'>;
  lane: LaneController;
  reset: Pick<LimitResetService, 'tryReset'>;
  usage: UsageBook;
  clock: Clock;
  random: Random;
  /** For the request log / pushes; never carries a token. */
  onEvent?: (e: ClaudeEvent) => void;
}

/** Upper bound on tries inside one attempt (each busy wait is at least 3.5 s, so max-wait ends it first). */
const MAX_TRIES = 10_000;

export function createClaudeAttemptInterceptor<A extends ClaudeAttempt, O extends ClaudeOutcome>(
  deps: ClaudeInterceptorDeps,
): AttemptInterceptor<A, O> {
  const { tokens, lane, reset, usage, clock, random } = deps;
  const emit = (e: ClaudeEvent) => deps.onEvent?.(e);

  return (next) => async (attempt) => {
    const id = attempt.connectionId;
    const laneOn = attempt.features.lowPriorityMode === true;
    const resetOn = attempt.features.autoLimitReset === true;
    if (!laneOn && lane.isActive(id, clock.now())) lane.forget(id);

    let token = tokenOrThrow(await tokens.token(id));
    let refreshedAfter401 = false;
    let resetTried = false;
    let firstBusyAt: number | null = null;

    for (let tries = 0; ; tries++) {
      const slow = laneOn && lane.isActive(id, clock.now());
      const out = await next({ ...attempt, headers: upstreamHeaders(attempt.headers, token, slow) });
      const now = clock.now();
      const u = parseUnifiedHeaders(out.headers);
      usage.recordHeaders(id, u, now);
      if (tries >= MAX_TRIES) return out; // a safety net only: max-wait and the deadline end a lane first

      if (out.status === 401 && !refreshedAfter401) {
        refreshedAfter401 = true;
        const r = await tokens.afterUnauthorized(id, token);
        if (r.ok) {
          out.discard();
          token = r.token;
          emit({ type: 'token_refreshed_after_401', connectionId: id });
          continue;
        }
        if (r.kind === 'expired') {
          out.discard();
          throw new ClaudeTokenError('expired', r.message);
        }
        return out; // transient: the 401 takes the normal path (cooldown, failover)
      }

      if (slow) {
        const d = lane.apply(id, { type: 'slow_response', status: out.status, unified: u }, now);
        if (d.kind === 'ended') emit({ type: 'lane_ended', connectionId: id, reason: d.reason });
        if (d.kind !== 'wait') return out;
        firstBusyAt ??= now;
        const budget = waitBudgetMs({ now, firstBusyAt, maxWaitMs: slowMaxWaitMs(d.maxWaitSec), deadlineAt: attempt.deadlineAt });
        if (budget <= 0) {
          // R-CLA-10 / R-CLA-11: the controlled max_wait finish; this answer takes the normal path.
          lane.apply(id, { type: 'max_wait' }, now);
          emit({ type: 'lane_ended', connectionId: id, reason: 'max_wait' });
          return out;
        }
        const waitMs = Math.min(slowRetryDelayMs(d.retryAfterSec, random), budget);
        out.discard();
        emit({ type: 'lane_wait', connectionId: id, waitMs });
        await sleep(clock, waitMs, attempt.signal);
        continue;
      }

      if (!isLimit429(out.status, u)) return out; // R-CLA-03/04: nothing happens before the limit 429

      if (resetOn && !resetTried) {
        resetTried = true;
        const r = await reset.tryReset({ connectionId: id, apiBase: attempt.apiBase, organizationUUID: attempt.organizationUUID });
        emit({ type: 'limit_reset', connectionId: id, outcome: r });
        if (r.kind === 'reset' || r.kind === 'not_limited') {
          out.discard();
          continue; // R-CLA-18: at normal speed
        }
      }
      if (!laneOn) return out;
      const wasActive = lane.isActive(id, now);
      const d: LaneDecision = lane.apply(id, { type: 'limit', unified: u }, now);
      if (d.kind !== 'retry_slow') return out;
      if (!wasActive) emit({ type: 'lane_entered', connectionId: id, until: lane.view(id, now).until });
      out.discard();
      firstBusyAt = null;
    }
  };

  function tokenOrThrow(r: TokenOutcome): string {
    if (r.ok) return r.token;
    throw new ClaudeTokenError(r.kind, r.message, r.kind === 'transient' ? r.retryAt : null);
  }
}

/** The headers of one try: the attempt's, the bearer token, the OAuth beta, and the slow header in the lane. */
export function upstreamHeaders(base: Record<string, string>, token: string, slow: boolean): Record<string, string> {
  const h: Record<string, string> = { ...base };
  delete h['x-api-key'];
  delete h[LANE_HEADER];
  h['authorization'] = `Bearer ${token}`;
  const beta = h['anthropic-beta'];
  h['anthropic-beta'] = beta ? (beta.split(',').map((s) => s.trim()).includes(OAUTH_BETA) ? beta : `${beta},${OAUTH_BETA}`) : OAUTH_BETA;
  if (slow) h[LANE_HEADER] = LANE_HEADER_VALUE;
  return h;
}

