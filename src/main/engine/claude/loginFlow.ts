// "Sign in with Claude": one pending sign-in per `start()`, finished either by the browser coming
// back to a loopback callback (127.0.0.1, a free port, path /callback) or by the user pasting the
// `code#state` the provider's page shows. Either way the code is exchanged with the PKCE verifier
// and the caller gets a token bundle. A sign-in that is not finished within 10 minutes is dropped.
// At most MAX_OPEN_LOGINS are open at once (each loopback one holds a listener); beyond that,
// start() is refused with `login_too_many` until one finishes, is cancelled or expires. A callback
// must carry its sign-in's state to end it, a denial (`?error=`) included.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock, CancelTimer } from '../clock';
import type { ClaudeOAuthConfig } from './claudeConfig';
import { ClaudeAuthError } from './claudeAuthError';
import type { HttpFn } from './http';
import { buildAuthorizeUrl, createPkce, createState, parseAuthorizationInput, parseCallbackQuery, type RandomBytes } from './pkce';
import type { ClaudeTokenBundle } from './tokenBundle';
import { exchangeCode } from './tokenEndpoint';

export const LOGIN_TTL_MS = 10 * 60_000;
/** Sign-ins open at once (waiting for the browser or a pasted code). */
export const MAX_OPEN_LOGINS = 8;

export interface LoginStart {
  loginId: string;
  /** Open this in the system browser. */
  authorizeUrl: string;
  redirectUri: string;
  mode: 'loopback' | 'paste';
  expiresAt: number;
}

export interface LoginFlowDeps {
  clock: Clock;
  http: HttpFn;
  config: () => Pick<ClaudeOAuthConfig, 'authorizeUrl' | 'tokenUrl' | 'clientId' | 'scopes' | 'pasteRedirectUri'>;
  bytes?: RandomBytes;
  /** Host name in the loopback redirect URI (the listener is always 127.0.0.1). Default "localhost", as Claude Code uses. */
  loopbackHost?: string;
  ttlMs?: number;
  /** Default MAX_OPEN_LOGINS. */
  maxOpen?: number;
}

interface Pending {
  id: string;
  state: string;
  verifier: string;
  redirectUri: string;
  server: Server | null;
  done: boolean;
  /** Exchanging a code right now (a second code waits for it rather than racing it). */
  busy: Promise<unknown> | null;
  result: Promise<ClaudeTokenBundle>;
  resolve(b: ClaudeTokenBundle): void;
  reject(e: Error): void;
  cancelTimer: CancelTimer;
}

export class ClaudeLoginFlow {
  private readonly pending = new Map<string, Pending>();
  /** Loopback sign-ins whose listener is being opened (not yet in `pending`). */
  private starting = 0;

  constructor(private readonly deps: LoginFlowDeps) {}

  async start(mode: 'loopback' | 'paste'): Promise<LoginStart> {
    const max = this.deps.maxOpen ?? MAX_OPEN_LOGINS;
    // Counted with the ones whose listener is still being opened, so a burst cannot pass the cap.
    if (this.size + this.starting >= max) {
      throw new ClaudeAuthError(
        'login_too_many',
        `${max} sign-ins are already open: finish or cancel one, or wait until one expires (after ${Math.round((this.deps.ttlMs ?? LOGIN_TTL_MS) / 60_000)} minutes)`,
      );
    }
    const cfg = this.deps.config();
    const pkce = createPkce(this.deps.bytes);
    const state = createState(this.deps.bytes);
    const id = (this.deps.bytes ?? randomBytes)(12).toString('base64url');
    let resolve!: (b: ClaudeTokenBundle) => void;
    let reject!: (e: Error) => void;
    const result = new Promise<ClaudeTokenBundle>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    result.catch(() => {}); // a sign-in nobody waits for must not become an unhandled rejection
    const ttl = this.deps.ttlMs ?? LOGIN_TTL_MS;
    const p: Pending = {
      id,
      state,
      verifier: pkce.verifier,
      redirectUri: cfg.pasteRedirectUri,
      server: null,
      done: false,
      busy: null,
      result,
      resolve,
      reject,
      // At the end of its time a sign-in that is still open fails; a finished one is forgotten.
      cancelTimer: this.deps.clock.setTimer(() => {
        this.finish(p, new ClaudeAuthError('login_timeout', 'the sign-in took too long: start "Sign in with Claude" again'));
        this.pending.delete(p.id);
      }, ttl),
    };
    if (mode === 'loopback') {
      this.starting++;
      try {
        p.server = await this.listen(p);
      } catch (err) {
        p.cancelTimer();
        throw err;
      } finally {
        this.starting--;
      }
      const port = (p.server.address() as AddressInfo).port;
      p.redirectUri = `http://${this.deps.loopbackHost ?? 'localhost'}:${port}/callback`;
    }
    this.pending.set(id, p);
    return {
      loginId: id,
      authorizeUrl: buildAuthorizeUrl(cfg, { challenge: pkce.challenge, state, redirectUri: p.redirectUri }),
      redirectUri: p.redirectUri,
      mode,
      expiresAt: this.deps.clock.now() + ttl,
    };
  }

  /**
   * Resolves with the tokens once the sign-in finishes (callback or paste); rejects on denial,
   * timeout or cancel. Still answers after the finish, until the sign-in's time is up.
   */
  result(loginId: string): Promise<ClaudeTokenBundle> {
    const p = this.pending.get(loginId);
    if (!p) return Promise.reject(unknownLogin());
    return p.result;
  }

  /** The user pasted what the provider's page showed (`code#state`, the callback URL, or the code). */
  async completeWithCode(loginId: string, pasted: string): Promise<ClaudeTokenBundle> {
    const p = this.pending.get(loginId);
    if (!p) throw unknownLogin();
    if (p.done) return p.result;
    const { code } = parseAuthorizationInput(pasted, p.state);
    return this.exchange(p, code);
  }

  cancel(loginId: string): void {
    const p = this.pending.get(loginId);
    if (!p) return;
    this.finish(p, new ClaudeAuthError('login_unknown', 'the sign-in was cancelled'));
    p.cancelTimer();
    this.pending.delete(loginId);
  }

  close(): void {
    for (const id of [...this.pending.keys()]) this.cancel(id);
  }

  /** How many sign-ins are still open (a test and leak check). */
  get size(): number {
    let n = 0;
    for (const p of this.pending.values()) if (!p.done) n++;
    return n;
  }

  private async exchange(p: Pending, code: string): Promise<ClaudeTokenBundle> {
    while (p.busy) await p.busy.catch(() => {});
    if (p.done) return p.result;
    const run = exchangeCode(this.deps.http, this.deps.config(), { code, state: p.state, verifier: p.verifier, redirectUri: p.redirectUri }, () =>
      this.deps.clock.now(),
    );
    p.busy = run;
    try {
      const bundle = await run;
      this.finish(p, null, bundle);
      return bundle;
    } finally {
      p.busy = null;
    }
  }

  private finish(p: Pending, err: Error | null, bundle?: ClaudeTokenBundle): void {
    if (p.done) return;
    p.done = true;
    const srv = p.server;
    if (srv) {
      // Let the callback page be written first, then stop listening.
      srv.close();
      srv.closeIdleConnections?.();
    }
    if (err) p.reject(err);
    else p.resolve(bundle!);
  }

  private listen(p: Pending): Promise<Server> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const page = (status: number, title: string, text: string) => {
        res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
        res.end(`<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:system-ui;margin:3em"><h1>${title}</h1><p>${text}</p></body>`);
      };
      if (req.method !== 'GET' || url.pathname !== '/callback') return page(404, 'Not found', 'This address only receives the Claude sign-in.');
      let code: string;
      try {
        code = parseCallbackQuery(url.searchParams, p.state).code;
      } catch (err) {
        const e = err as ClaudeAuthError;
        // A wrong state may be someone else's redirect: keep waiting for ours. A denial ends the sign-in.
        if (e.code === 'login_denied') this.finish(p, e);
        return page(400, 'Sign-in not completed', escapeHtml(e.message));
      }
      this.exchange(p, code).then(
        () => page(200, 'Signed in', 'Switchyard has your Claude account. You can close this window.'),
        (err) => {
          const e = err instanceof ClaudeAuthError ? err : new ClaudeAuthError('token_unavailable', 'the sign-in failed');
          if (e.terminal) this.finish(p, e);
          page(502, 'Sign-in failed', escapeHtml(e.message));
        },
      );
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        server.unref();
        resolve(server);
      });
    });
  }
}

const unknownLogin = () => new ClaudeAuthError('login_unknown', 'this sign-in is no longer open: start "Sign in with Claude" again');

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
