// Access tokens of Claude subscription accounts, kept fresh: refreshed a margin before they expire,
// and once after a 401, with one refresh call per account however many requests need it at once
// (single flight). A dead grant (invalid_grant, or a 400/401 from the token endpoint) is terminal:
// the account reads `expired` until it gets new credentials. A network failure, 403, 429 or 5xx is
// transient: the current token is used while it is still valid, and the refresh is tried again
// after a short backoff (30 s doubling to 5 min).
import type { ClaudeTokenView } from '../../../shared/model';
import type { Clock } from '../clock';
import type { ClaudeOAuthConfig } from './claudeConfig';
import { ClaudeAuthError } from './claudeAuthError';
import type { HttpFn } from './http';
import { bundleSecrets, type ClaudeTokenBundle } from './tokenBundle';
import { refreshTokens } from './tokenEndpoint';

export type TokenOutcome =
  | { ok: true; token: string; refreshed: boolean }
  /** Terminal: the account has to sign in again. */
  | { ok: false; kind: 'expired'; message: string }
  /** Try again later (the token endpoint is unreachable or failing). */
  | { ok: false; kind: 'transient'; message: string; retryAt: number };

/** The dashboard's token view (src/shared/model.ts). */
export type TokenAccountView = ClaudeTokenView;

export interface TokenManagerDeps {
  clock: Clock;
  http: HttpFn;
  config: () => Pick<ClaudeOAuthConfig, 'tokenUrl' | 'clientId' | 'refreshMarginMs'>;
  /** Every access and refresh token is registered here (the log redactor), and failure text scrubbed by it. */
  redactor?: { register(secret: string): void; scrub?(text: string): string };
  /** Stores a refreshed bundle (the connection's encrypted secret). Awaited before callers get the token. */
  persist: (accountId: string, bundle: ClaudeTokenBundle) => void | Promise<void>;
  /** The account's sign-in is dead (called once per bundle). */
  onExpired?: (accountId: string, message: string) => void;
  /** Persisting failed: the new tokens are used from memory anyway. */
  onPersistError?: (accountId: string, err: unknown) => void;
}

type RefreshResult = { ok: true; bundle: ClaudeTokenBundle } | Extract<TokenOutcome, { ok: false }>;

interface Account {
  bundle: ClaudeTokenBundle;
  terminal: string | null;
  failures: number;
  retryAt: number;
  lastError: string | null;
  lastRefreshAt: number | null;
  inflight: Promise<RefreshResult> | null;
}

const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 5 * 60_000;

export class ClaudeTokenManager {
  private readonly accounts = new Map<string, Account>();

  constructor(private readonly deps: TokenManagerDeps) {}

  /** New credentials for an account (load, sign-in, import): forgets any terminal or failing state. */
  set(accountId: string, bundle: ClaudeTokenBundle): void {
    for (const s of bundleSecrets(bundle)) this.deps.redactor?.register(s);
    const prev = this.accounts.get(accountId);
    if (prev && prev.bundle.accessToken === bundle.accessToken && prev.bundle.refreshToken === bundle.refreshToken) {
      prev.bundle = bundle;
      return;
    }
    this.accounts.set(accountId, {
      bundle,
      terminal: null,
      failures: 0,
      retryAt: 0,
      lastError: null,
      lastRefreshAt: null,
      inflight: null,
    });
  }

  remove(accountId: string): void {
    this.accounts.delete(accountId);
  }

  has(accountId: string): boolean {
    return this.accounts.has(accountId);
  }

  /** The current bundle (with any refreshed tokens), or undefined. */
  bundle(accountId: string): ClaudeTokenBundle | undefined {
    return this.accounts.get(accountId)?.bundle;
  }

  /** A token to send now: refreshed first when it expires within the margin. */
  async token(accountId: string): Promise<TokenOutcome> {
    const acc = this.accounts.get(accountId);
    if (!acc) return { ok: false, kind: 'expired', message: 'this connection has no Claude credentials: sign in' };
    if (acc.terminal) return { ok: false, kind: 'expired', message: acc.terminal };
    const now = this.deps.clock.now();
    const b = acc.bundle;
    const margin = this.deps.config().refreshMarginMs;
    if (!acc.inflight && (b.expiresAt === null || now < b.expiresAt - margin)) return { ok: true, token: b.accessToken, refreshed: false };
    const stillValid = b.expiresAt === null || now < b.expiresAt;
    if (!acc.inflight) {
      if (!b.refreshToken) {
        if (stillValid) return { ok: true, token: b.accessToken, refreshed: false };
        return this.markTerminal(accountId, acc, `the access token expired at ${new Date(b.expiresAt!).toISOString()} and there is no refresh token: sign in again`);
      }
      if (now < acc.retryAt) {
        if (stillValid) return { ok: true, token: b.accessToken, refreshed: false };
        return { ok: false, kind: 'transient', message: acc.lastError ?? 'the token refresh is failing', retryAt: acc.retryAt };
      }
    }
    const r = await this.refresh(accountId, acc);
    if (r.ok) return { ok: true, token: r.bundle.accessToken, refreshed: true };
    if (r.kind === 'transient' && acc.bundle.expiresAt !== null && this.deps.clock.now() < acc.bundle.expiresAt) {
      return { ok: true, token: acc.bundle.accessToken, refreshed: false };
    }
    return r;
  }

  /**
   * The upstream answered 401 to `rejectedToken`. Refreshes once, unless another request already
   * replaced that token (then the new one is returned without a call).
   */
  async afterUnauthorized(accountId: string, rejectedToken: string): Promise<TokenOutcome> {
    const acc = this.accounts.get(accountId);
    if (!acc) return { ok: false, kind: 'expired', message: 'this connection has no Claude credentials: sign in' };
    if (acc.terminal) return { ok: false, kind: 'expired', message: acc.terminal };
    if (!acc.inflight && acc.bundle.accessToken !== rejectedToken) return { ok: true, token: acc.bundle.accessToken, refreshed: false };
    if (!acc.inflight) {
      if (!acc.bundle.refreshToken) {
        return this.markTerminal(accountId, acc, 'Claude rejected the access token (401) and there is no refresh token: sign in again');
      }
      const now = this.deps.clock.now();
      if (now < acc.retryAt) {
        return { ok: false, kind: 'transient', message: acc.lastError ?? 'the token refresh is failing', retryAt: acc.retryAt };
      }
    }
    const r = await this.refresh(accountId, acc);
    return r.ok ? { ok: true, token: r.bundle.accessToken, refreshed: true } : r;
  }

  view(accountId: string, now: number): TokenAccountView | null {
    const acc = this.accounts.get(accountId);
    if (!acc) return null;
    const b = acc.bundle;
    const due = b.expiresAt !== null && now >= b.expiresAt - this.deps.config().refreshMarginMs;
    return {
      expiresAt: b.expiresAt,
      status: acc.terminal ? 'expired' : acc.failures > 0 ? 'refresh_failing' : due ? 'refresh_due' : 'valid',
      message: acc.terminal ?? acc.lastError,
      lastRefreshAt: acc.lastRefreshAt,
      retryAt: !acc.terminal && acc.failures > 0 ? acc.retryAt : null,
      canRefresh: b.refreshToken !== null,
    };
  }

  private refresh(accountId: string, acc: Account): Promise<RefreshResult> {
    acc.inflight ??= this.runRefresh(accountId, acc).finally(() => {
      acc.inflight = null;
    });
    return acc.inflight;
  }

  private async runRefresh(accountId: string, acc: Account): Promise<RefreshResult> {
    const prev = acc.bundle as ClaudeTokenBundle & { refreshToken: string };
    const clock = this.deps.clock;
    let next: ClaudeTokenBundle;
    try {
      next = await refreshTokens(this.deps.http, this.deps.config(), prev, () => clock.now());
    } catch (err) {
      const e = err instanceof ClaudeAuthError ? err : new ClaudeAuthError('token_unavailable', 'the token refresh failed');
      const message = this.deps.redactor?.scrub?.(e.message) ?? e.message;
      if (this.accounts.get(accountId) !== acc) return { ok: false, kind: 'transient', message, retryAt: clock.now() };
      if (e.terminal) return this.markTerminal(accountId, acc, message);
      acc.failures += 1;
      acc.lastError = message;
      acc.retryAt = clock.now() + Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (acc.failures - 1));
      return { ok: false, kind: 'transient', message, retryAt: acc.retryAt };
    }
    for (const s of bundleSecrets(next)) this.deps.redactor?.register(s);
    acc.bundle = next;
    acc.failures = 0;
    acc.retryAt = 0;
    acc.lastError = null;
    acc.lastRefreshAt = clock.now();
    try {
      await this.deps.persist(accountId, next);
    } catch (err) {
      this.deps.onPersistError?.(accountId, err);
    }
    return { ok: true, bundle: next };
  }

  private markTerminal(accountId: string, acc: Account, message: string): Extract<TokenOutcome, { kind: 'expired' }> {
    if (!acc.terminal) {
      acc.terminal = message;
      this.deps.onExpired?.(accountId, message);
    }
    return { ok: false, kind: 'expired', message: acc.terminal };
  }
}
