// The Claude account interceptor in the proxy's attempt chain (attempt.ts): a thin adapter from the
// pipeline's AttemptContext / AttemptOutcome to createClaudeAttemptInterceptor's ClaudeAttempt /
// ClaudeOutcome. Connections of any other kind pass straight through (one string compare). For a
// Claude subscription it supplies the per-try headers (bearer token, OAuth beta, the slow header in
// the lane) through ctx.extraHeaders, the account API origin, the features from
// providerSpecificData and the fetch-start deadline (R-CLA-11), and turns "no usable token" into an
// ordinary failed outcome after telling the resilience layer what it means for the connection:
// terminal `expired` (sign in again), or cooling until the refresh is tried again.
import { CLAUDE_KIND } from '../../../shared/model';
import type { Clock } from '../clock';
import { EXECUTION_EXPIRED, type AttemptContext, type AttemptInterceptor, type AttemptOutcome, type Dispatch } from '../proxy/attempt';
import type { Random } from '../random';
import type { ResiliencePort } from '../resilience/port';
import type { TimeoutResolver } from '../upstream/timeouts';
import type { ClaudeAccounts } from './claudeAccounts';
import { ClaudeTokenError, createClaudeAttemptInterceptor, type ClaudeAttempt, type ClaudeOutcome } from './claudeInterceptor';

export interface ClaudePipelineDeps {
  accounts: Pick<ClaudeAccounts, 'tokens' | 'lane' | 'reset' | 'usage' | 'apiBaseFor' | 'onInterceptorEvent'>;
  resilience: Pick<ResiliencePort, 'markConnection'>;
  timeouts: Pick<TimeoutResolver, 'of'>;
  clock: Clock;
  random: Random;
}

interface PipelineAttempt extends ClaudeAttempt {
  ctx: AttemptContext;
}

interface PipelineOutcome extends ClaudeOutcome {
  outcome: AttemptOutcome;
}

function toClaudeOutcome(outcome: AttemptOutcome): PipelineOutcome {
  switch (outcome.kind) {
    case 'ready':
      return { outcome, status: outcome.response.status, headers: outcome.response.headers, discard: () => outcome.response.reader.destroy() };
    case 'failed':
      // The error body has been read already (bodyReader): nothing to free.
      return { outcome, status: outcome.failure.status, headers: outcome.failure.headers, discard: () => {} };
    default:
      return { outcome, status: null, headers: {}, discard: () => {} };
  }
}

/** An Anthropic-shaped error the client gets when no other connection serves. */
function failedOutcome(status: number, type: string, message: string): AttemptOutcome {
  const body = JSON.stringify({ type: 'error', error: { type, message } });
  return {
    kind: 'failed',
    failure: { kind: 'http', status, headers: {}, body, message },
    response: { status, headers: { 'content-type': 'application/json' }, body },
    ttfbMs: null,
  };
}

export function createClaudePipelineInterceptor(d: ClaudePipelineDeps): AttemptInterceptor {
  const core = createClaudeAttemptInterceptor<PipelineAttempt, PipelineOutcome>({
    tokens: d.accounts.tokens,
    lane: d.accounts.lane,
    reset: d.accounts.reset,
    usage: d.accounts.usage,
    clock: d.clock,
    random: d.random,
    onEvent: d.accounts.onInterceptorEvent,
  });

  return (next: Dispatch): Dispatch => {
    const claude = core(async (a) => toClaudeOutcome(await next({ ...a.ctx, extraHeaders: a.headers })));
    const viaClaude: Dispatch = async (ctx) => {
      const conn = ctx.target.conn;
      const psd = conn.providerSpecificData;
      // The client's own betas are kept: the OAuth beta is added to them, not put in their place.
      const headers: Record<string, string> = { ...ctx.extraHeaders };
      const beta = ctx.call.req.headers['anthropic-beta'];
      if (typeof beta === 'string' && beta && headers['anthropic-beta'] === undefined) headers['anthropic-beta'] = beta;
      try {
        const out = await claude({
          ctx,
          connectionId: conn.id,
          headers,
          features: { lowPriorityMode: psd.lowPriorityMode === true, autoLimitReset: psd.autoLimitReset === true },
          organizationUUID: typeof psd.organizationUUID === 'string' ? psd.organizationUUID : null,
          apiBase: d.accounts.apiBaseFor(conn),
          deadlineAt: d.clock.now() + d.timeouts.of(conn).headersMs,
          signal: ctx.signal,
        });
        return out.outcome;
      } catch (err) {
        if (ctx.signal.aborted) return ctx.signal.reason === EXECUTION_EXPIRED ? { kind: 'execution_timeout' } : { kind: 'aborted' };
        if (!(err instanceof ClaudeTokenError)) throw err;
        const now = d.clock.now();
        if (err.kind === 'expired') {
          const message = `the Claude sign-in of "${conn.name}" is no longer valid (${err.message}); sign in again in Switchyard`;
          d.resilience.markConnection(conn.id, { kind: 'terminal', status: 'expired', reason: 'auth_expired', message: err.message }, now, ctx.target);
          return failedOutcome(401, 'authentication_error', message);
        }
        const until = err.retryAt !== null && err.retryAt > now ? err.retryAt : now;
        d.resilience.markConnection(conn.id, { kind: 'cooling', until, reason: 'token_refresh_failed', message: err.message }, now, ctx.target);
        return failedOutcome(503, 'api_error', `the Claude access token of "${conn.name}" could not be refreshed (${err.message})`);
      }
    };
    // Other kinds go straight through (one string compare, no extra promise).
    return (ctx) => (ctx.target.conn.kind === CLAUDE_KIND ? viaClaude(ctx) : next(ctx));
  };
}
