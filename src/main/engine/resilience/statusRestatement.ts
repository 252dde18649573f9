// Upstream status restatement (SPEC §7, R-USR-01..08): some gateways report a temporary quota
// with the wrong HTTP status (agentrouter answers 403, sometimes 400, with 用户额度不足 where it
// means 429). Clients such as Claude Code treat 403 as permanent and end the session. A rule
// rewrites the status right after the error response is read and before anything classifies it,
// so every consumer sees the corrected status: the resilience layer (a quota cooldown, not an
// auth error), admission, the combo walk and the answer the client receives (429, with a 60 s
// Retry-After that is only what the client is told; the internal cooldown is set separately).
//
// It runs as the innermost attempt interceptor, around upstreamDispatch. Only HTTP error
// statuses are restated: an error carried inside a 200 SSE stream is not (R-USR-04). Exclude
// markers always win, so a permanent error (无权访问模型) keeps its status (R-USR-08).
import type { AttemptContext, AttemptInterceptor, AttemptOutcome, Dispatch } from '../proxy/attempt';

export interface RestatementRule {
  id: string;
  fromStatuses: readonly number[];
  toStatus: number;
  /** Case-insensitive substrings of the error text, any one of which must be present. */
  textMarkers: readonly string[];
  /** Case-insensitive substrings that veto the rule even when a text marker matches. */
  excludeMarkers: readonly string[];
  /** What the restated answer tells the client to wait (Retry-After); null: nothing. */
  defaultRetryAfterMs: number | null;
}

/** Per-provider restatement rules, by provider id. */
export type RestatementRules = Readonly<Record<string, readonly RestatementRule[]>>;

export const STATUS_RESTATEMENT_RULES: RestatementRules = {
  agentrouter: [
    {
      id: 'agentrouter-quota-as-429',
      // The guide: "403 (sometimes 400)". The markers are specific enough to restate both.
      fromStatuses: [400, 403],
      toStatus: 429,
      textMarkers: ['用户额度不足', '额度不足'],
      excludeMarkers: ['无权访问模型'],
      defaultRetryAfterMs: 60_000,
    },
  ],
};

export interface Restatement {
  ruleId: string;
  fromStatus: number;
  toStatus: number;
  /** Retry-After for the client when this error is the final answer (not the internal cooldown). */
  clientRetryAfterMs: number | null;
}

const fold = (s: string) => s.toLowerCase().replace(/\s+/g, ' ');

/** The restatement for one error response, or null when no rule applies. */
export function applyStatusRestatement(
  provider: string,
  status: number,
  body: string,
  rules: RestatementRules = STATUS_RESTATEMENT_RULES,
): Restatement | null {
  const list = Object.prototype.hasOwnProperty.call(rules, provider) ? rules[provider] : undefined;
  if (!list || list.length === 0) return null;
  let text: string | null = null;
  for (const r of list) {
    if (!r.fromStatuses.includes(status)) continue;
    text ??= fold(body);
    const t = text;
    if (r.excludeMarkers.some((m) => t.includes(fold(m)))) continue;
    if (!r.textMarkers.some((m) => t.includes(fold(m)))) continue;
    return { ruleId: r.id, fromStatus: status, toStatus: r.toStatus, clientRetryAfterMs: r.defaultRetryAfterMs };
  }
  return null;
}

/**
 * The attempt interceptor: an HTTP error outcome whose provider has a matching rule leaves with
 * the corrected status (failure and relayable response alike), the client's retry hint, and a
 * message that says what the upstream really answered.
 */
export function statusRestatementInterceptor(rules: RestatementRules = STATUS_RESTATEMENT_RULES): AttemptInterceptor {
  return (next) => {
    const restated: Dispatch = async (ctx) => restate(ctx, await next(ctx), rules);
    // Only providers with rules are looked at: every other attempt goes straight through.
    return (ctx) => (Object.prototype.hasOwnProperty.call(rules, ctx.target.conn.provider) ? restated(ctx) : next(ctx));
  };
}

function restate(ctx: AttemptContext, out: AttemptOutcome, rules: RestatementRules): AttemptOutcome {
  if (out.kind !== 'failed' || out.failure.kind !== 'http' || out.failure.status === null) return out;
  const r = applyStatusRestatement(ctx.target.conn.provider, out.failure.status, out.failure.body, rules);
  if (r === null) return out;
  return {
    ...out,
    failure: {
      ...out.failure,
      status: r.toStatus,
      message: `${out.failure.message} (the upstream answered ${r.fromStatus}; restated as ${r.toStatus} by ${r.ruleId})`,
      restatedFrom: r.fromStatus,
      ...(r.clientRetryAfterMs !== null ? { clientRetryAfterMs: r.clientRetryAfterMs } : {}),
    },
    response: out.response ? { ...out.response, status: r.toStatus } : null,
  };
}
