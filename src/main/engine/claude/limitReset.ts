// The session-limit reset of a Claude subscription (SPEC R-CLA-16..21). On a limit 429: read the
// usage (`juniper_tide` block); when it offers `arm: "reset"` and is `available`, ask for the reset.
// Memo per connection, in memory: after a reset, `already_used` or `not_offered`, no new attempt
// before `next_available_at` (default one week; after a reset at least one week, R-CLA-21); after
// an error, a progressive backoff (15 min doubling, at most 4 h). Concurrent limit 429s on one
// connection share one attempt. In team mode (issue 26) the attempt is a single flight across the
// team: the instance that claims it calls, publishes the memo, and gives the claim back; an
// instance that finds the claim held waits (a bounded time) for that memo and answers from it.
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

/** Team mode: how long the instance that claimed a reset may take before another may try. */
export const RESET_CLAIM_TTL_MS = 60_000;
/** Team mode: how long a request waits for the outcome of a reset another instance makes. */
export const RESET_TEAM_WAIT_MS = 10_000;

/** Team mode (issue 26): what the reset needs from the team (a claim, and the shared memo). */
export interface ResetTeam {
  /** The account's id in the team (null: this account is not shared). */
  teamIdOf(connectionId: string): string | null;
  /** A claim owner for one attempt. */
  owner(): string;
  claim(name: string, owner: string, ttlMs: number): Promise<'granted' | 'held' | 'local'>;
  release(name: string, owner: string): Promise<void>;
  /** This instance changed the account's memo: the team gets it. */
  publish(teamId: string, memo: ResetMemo): void;
}

/** The outcome a memo written by another instance's attempt stands for. */
export function outcomeOfMemo(m: ResetMemo, now: number): ResetOutcome {
  switch (m.lastResult) {
    case 'reset':
    case 'not_limited':
      return { kind: m.lastResult };
    case 'already_used':
    case 'not_offered':
      return { kind: m.lastResult, nextAvailableAt: m.nextAvailableAt ?? now };
    case 'error':
      return { kind: 'error', message: m.lastError ?? 'the limit reset failed', backoffUntil: m.backoffUntil ?? now };
    default: {
      const gate = resetGate(m, now);
      return gate.ok ? { kind: 'skipped', until: now, why: 'memo' } : { kind: 'skipped', until: gate.until, why: gate.why };
    }
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
  /** Team mode: requests waiting for another instance's reset outcome, by connection. */
  private readonly waiters = new Map<string, Set<(m: ResetMemo) => void>>();
  private team: ResetTeam | null = null;

  constructor(private readonly deps: LimitResetDeps) {}

  /** Team mode: the reset becomes a single flight across the team, its memo shared. */
  share(team: ResetTeam): void {
    this.team = team;
  }

  /** One reset attempt (or the memo's answer). Concurrent callers for one connection share it. */
  tryReset(req: ResetRequest): Promise<ResetOutcome> {
    const now = this.deps.clock.now();
    const gate = resetGate(this.memos.get(req.connectionId) ?? EMPTY_MEMO, now);
    if (!gate.ok) return Promise.resolve({ kind: 'skipped', until: gate.until, why: gate.why });
    let p = this.inflight.get(req.connectionId);
    if (!p) {
      p = (this.team ? this.runOnce(req, this.team) : this.run(req)).finally(() => this.inflight.delete(req.connectionId));
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

  /** Team mode: the memo another instance wrote for this account (its attempt's outcome). Not published again. */
  applyRemote(connectionId: string, memo: ResetMemo): void {
    this.memos.set(connectionId, memo);
    for (const fn of this.listeners) fn(connectionId);
    const waiting = this.waiters.get(connectionId);
    if (waiting) for (const fn of [...waiting]) fn(memo);
  }

  onChange(fn: (connectionId: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private record(id: string, r: Parameters<typeof memoAfter>[1]): ResetMemo {
    const m = memoAfter(this.memos.get(id) ?? EMPTY_MEMO, r, this.deps.clock.now());
    this.memos.set(id, m);
    for (const fn of this.listeners) fn(id);
    const teamId = this.team?.teamIdOf(id) ?? null;
    if (teamId !== null) this.team!.publish(teamId, m);
    return m;
  }

  /**
   * Team mode: one attempt across the team. The claim's holder calls (after looking at the memo
   * again: another instance may have just written it); the others wait for its memo.
   */
  private async runOnce(req: ResetRequest, team: ResetTeam): Promise<ResetOutcome> {
    const teamId = team.teamIdOf(req.connectionId);
    if (teamId === null) return this.run(req);
    const name = `claude.reset:${teamId}`;
    const owner = team.owner();
    // Listening before asking: the holder's memo may arrive while the claim is answered.
    const remote = this.awaitMemo(req.connectionId);
    const claim = await team.claim(name, owner, RESET_CLAIM_TTL_MS);
    if (claim === 'held') return remote.outcome;
    remote.cancel();
    try {
      const now = this.deps.clock.now();
      const gate = resetGate(this.memos.get(req.connectionId) ?? EMPTY_MEMO, now);
      if (!gate.ok) {
        // An attempt that just ended elsewhere answers for this one (a reset: retry at normal speed).
        const m = this.memos.get(req.connectionId);
        const fresh = m !== undefined && m.lastAttemptAt !== null && now - m.lastAttemptAt < RESET_CLAIM_TTL_MS;
        return fresh ? outcomeOfMemo(m, now) : { kind: 'skipped', until: gate.until, why: gate.why };
      }
      return await this.run(req);
    } finally {
      if (claim === 'granted') void team.release(name, owner);
    }
  }

  /** The next memo the team writes for this account, or a skip after RESET_TEAM_WAIT_MS. */
  private awaitMemo(id: string): { outcome: Promise<ResetOutcome>; cancel: () => void } {
    const { clock } = this.deps;
    let done!: (o: ResetOutcome) => void;
    const outcome = new Promise<ResetOutcome>((resolve) => (done = resolve));
    let set = this.waiters.get(id);
    if (!set) this.waiters.set(id, (set = new Set()));
    const waiting = set;
    let cancelTimer: () => void = () => {};
    const stop = () => {
      cancelTimer();
      waiting.delete(onMemo);
      if (waiting.size === 0 && this.waiters.get(id) === waiting) this.waiters.delete(id);
    };
    const onMemo = (m: ResetMemo) => {
      stop();
      done(outcomeOfMemo(m, clock.now()));
    };
    waiting.add(onMemo);
    cancelTimer = clock.setTimer(() => {
      stop();
      // No word from the holder in time: as if skipped (another instance is on it).
      done({ kind: 'skipped', until: clock.now() + RESET_CLAIM_TTL_MS, why: 'memo' });
    }, RESET_TEAM_WAIT_MS);
    return { outcome, cancel: stop };
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
