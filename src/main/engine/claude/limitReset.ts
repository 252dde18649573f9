// The session-limit reset of a Claude subscription (SPEC R-CLA-16..21). On a limit 429: read the
// usage (`juniper_tide` block); when it offers `arm: "reset"` and is `available`, ask for the reset.
// Memo per connection, in memory: after a reset, `already_used` or `not_offered`, no new attempt
// before `next_available_at` (default one week; after a reset at least one week, R-CLA-21); after
// an error, a progressive backoff (15 min doubling, at most 4 h). Concurrent limit 429s on one
// connection share one attempt.
import type { Clock } from '../clock';
import {
  AccountApiError,
  fetchOrganizationUUID,
  fetchUsage,
  postResetRateLimits,
  type ResetResult,
} from './accountApi';
import type { HttpFn } from './http';
import type { TokenOutcome } from './tokenManager';
import type { UsageBook } from './usageWindows';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

export const RESET_MEMO_DEFAULT_MS = 7 * DAY;
/** R-CLA-21: at most one reset a week, whatever the server says. */
export const RESET_MIN_INTERVAL_MS = 7 * DAY;
/** R-CLA-20: the first error backoff; each further error in a row doubles it up to the cap. */
export const RESET_BACKOFF_BASE_MS = 15 * MIN;
export const RESET_BACKOFF_MAX_MS = 4 * 60 * MIN;

export type ResetOutcome =
  /** R-CLA-18: retry at normal speed, without the slow header. */
  | { kind: 'reset' | 'not_limited' }
  /** R-CLA-19: nothing to do before `nextAvailableAt` (also when the usage answer offers no reset). */
  | { kind: 'already_used' | 'not_offered'; nextAvailableAt: number }
  /** Not tried: memoised until `until`. */
  | { kind: 'skipped'; until: number; why: 'memo' | 'backoff' }
  | { kind: 'error'; message: string; backoffUntil: number };

export interface ResetMemo {
  /** No attempt before this (epoch ms), from a reset / already_used / not_offered. */
  nextAvailableAt: number | null;
  /** No attempt before this after errors. */
  backoffUntil: number | null;
  errors: number;
  lastResult: ResetResult | 'error' | null;
  lastAttemptAt: number | null;
  lastError: string | null;
}

export const EMPTY_MEMO: ResetMemo = {
  nextAvailableAt: null,
  backoffUntil: null,
  errors: 0,
  lastResult: null,
  lastAttemptAt: null,
  lastError: null,
};

/** Pure: may a reset be tried now? */
export function resetGate(m: ResetMemo, now: number): { ok: true } | { ok: false; until: number; why: 'memo' | 'backoff' } {
  if (m.nextAvailableAt !== null && now < m.nextAvailableAt) return { ok: false, until: m.nextAvailableAt, why: 'memo' };
  if (m.backoffUntil !== null && now < m.backoffUntil) return { ok: false, until: m.backoffUntil, why: 'backoff' };
  return { ok: true };
}

/** Pure: the memo after an attempt's answer. */
export function memoAfter(
  m: ResetMemo,
  r: { kind: 'answer'; result: ResetResult; nextAvailableAt: number | null } | { kind: 'error'; message: string },
  now: number,
): ResetMemo {
  if (r.kind === 'error') {
    const errors = m.errors + 1;
    const backoff = Math.min(RESET_BACKOFF_MAX_MS, RESET_BACKOFF_BASE_MS * 2 ** (errors - 1));
    return { ...m, errors, backoffUntil: now + backoff, lastResult: 'error', lastAttemptAt: now, lastError: r.message };
  }
  const base = { ...m, errors: 0, backoffUntil: null, lastResult: r.result, lastAttemptAt: now, lastError: null };
  switch (r.result) {
    case 'reset':
      return { ...base, nextAvailableAt: Math.max(r.nextAvailableAt ?? 0, now + RESET_MIN_INTERVAL_MS) };
    case 'already_used':
    case 'not_offered':
      return { ...base, nextAvailableAt: r.nextAvailableAt !== null && r.nextAvailableAt > now ? r.nextAvailableAt : now + RESET_MEMO_DEFAULT_MS };
    case 'not_limited':
      return { ...base, nextAvailableAt: null };
  }
}

export interface ResetRequest {
  connectionId: string;
  /** Origin of the account API (accountApiBase). */
  apiBase: string;
  /** `providerSpecificData.organizationUUID`, when set. */
  organizationUUID?: string | null;
}

export interface LimitResetDeps {
  clock: Clock;
  http: HttpFn;
  tokens: { token(accountId: string): Promise<TokenOutcome>; bundle(accountId: string): { organizationUUID?: string } | undefined };
  /** The usage answer refreshes the account's usage windows (R-CLA-17 step 1). */
  usage?: UsageBook;
  /** An organization UUID found through the profile call: the integration may store it on the connection. */
  onOrganizationDiscovered?: (connectionId: string, organizationUUID: string) => void;
}

export interface ResetView {
  nextAvailableAt: number | null;
  backoffUntil: number | null;
  lastResult: ResetMemo['lastResult'];
  lastAttemptAt: number | null;
  lastError: string | null;
}

export class LimitResetService {
  private readonly memos = new Map<string, ResetMemo>();
  private readonly inflight = new Map<string, Promise<ResetOutcome>>();
  private readonly discoveredOrg = new Map<string, string>();
  private readonly listeners = new Set<(connectionId: string) => void>();

  constructor(private readonly deps: LimitResetDeps) {}

  /** One reset attempt (or the memo's answer). Concurrent callers for one connection share it. */
  tryReset(req: ResetRequest): Promise<ResetOutcome> {
    const now = this.deps.clock.now();
    const gate = resetGate(this.memos.get(req.connectionId) ?? EMPTY_MEMO, now);
    if (!gate.ok) return Promise.resolve({ kind: 'skipped', until: gate.until, why: gate.why });
    let p = this.inflight.get(req.connectionId);
    if (!p) {
      p = this.run(req).finally(() => this.inflight.delete(req.connectionId));
      this.inflight.set(req.connectionId, p);
    }
    return p;
  }

  view(connectionId: string): ResetView | null {
    const m = this.memos.get(connectionId);
    if (!m) return null;
    return { nextAvailableAt: m.nextAvailableAt, backoffUntil: m.backoffUntil, lastResult: m.lastResult, lastAttemptAt: m.lastAttemptAt, lastError: m.lastError };
  }

  forget(connectionId: string): void {
    this.memos.delete(connectionId);
    this.discoveredOrg.delete(connectionId);
  }

  onChange(fn: (connectionId: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private record(id: string, r: Parameters<typeof memoAfter>[1]): ResetMemo {
    const m = memoAfter(this.memos.get(id) ?? EMPTY_MEMO, r, this.deps.clock.now());
    this.memos.set(id, m);
    for (const fn of this.listeners) fn(id);
    return m;
  }

  private fail(id: string, message: string): ResetOutcome {
    const m = this.record(id, { kind: 'error', message });
    return { kind: 'error', message, backoffUntil: m.backoffUntil! };
  }

  private async run(req: ResetRequest): Promise<ResetOutcome> {
    const id = req.connectionId;
    const { clock, http } = this.deps;
    const tok = await this.deps.tokens.token(id);
    if (!tok.ok) return this.fail(id, `no usable access token for the limit reset: ${tok.message}`);
    const call = { apiBase: req.apiBase, accessToken: tok.token };
    try {
      const usage = await fetchUsage(http, call);
      this.deps.usage?.recordUsageAnswer(id, usage, clock.now());
      const jt = usage.juniperTide;
      if (!jt || jt.arm !== 'reset' || !jt.available) {
        // Nothing offered right now: same memo as the server's `not_offered`.
        const m = this.record(id, { kind: 'answer', result: 'not_offered', nextAvailableAt: jt?.nextAvailableAt ?? null });
        return { kind: 'not_offered', nextAvailableAt: m.nextAvailableAt! };
      }
      const org = await this.organization(req, tok.token);
      if (!org) return this.fail(id, 'the organization UUID of this account is unknown (set it on the connection)');
      const ans = await postResetRateLimits(http, { ...call, organizationUUID: org });
      if (!ans.result) return this.fail(id, 'the limit reset answered without a known result');
      const m = this.record(id, { kind: 'answer', result: ans.result, nextAvailableAt: ans.nextAvailableAt });
      if (ans.result === 'reset' || ans.result === 'not_limited') return { kind: ans.result };
      return { kind: ans.result, nextAvailableAt: m.nextAvailableAt! };
    } catch (err) {
      return this.fail(id, err instanceof AccountApiError ? err.message : 'the limit reset failed');
    }
  }

  /**
   * R-CLA-17 step 3, in this order: `providerSpecificData.organizationUUID`; the one the token
   * endpoint named at sign-in or refresh (`organization.uuid`, kept in the token bundle); one found
   * earlier; else `GET /api/oauth/profile` (the "bootstrap fallback"), remembered.
   */
  private async organization(req: ResetRequest, token: string): Promise<string | null> {
    const fromConn = req.organizationUUID?.trim();
    if (fromConn) return fromConn;
    const fromBundle = this.deps.tokens.bundle(req.connectionId)?.organizationUUID;
    if (fromBundle) return fromBundle;
    const known = this.discoveredOrg.get(req.connectionId);
    if (known) return known;
    const found = await fetchOrganizationUUID(this.deps.http, { apiBase: req.apiBase, accessToken: token });
    if (found) {
      this.discoveredOrg.set(req.connectionId, found);
      this.deps.onOrganizationDiscovered?.(req.connectionId, found);
    }
    return found;
  }
}
