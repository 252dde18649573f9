// A fake Claude sign-in and account API on 127.0.0.1, port 0: the authorize page (redirects with a
// code, or shows `code#state` for pasting), the token endpoint (authorization_code with PKCE S256
// and refresh_token grants, rotating refresh tokens, scriptable failures, a refresh counter and a
// gate to hold refreshes), `GET /api/oauth/usage`, `GET /api/oauth/profile` and
// `POST /api/organizations/{org}/reset_rate_limits`. Every call is recorded.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAnswer {
  status?: number;
  json?: unknown;
  body?: string;
  /** Destroy the socket instead of answering (a network failure). */
  destroy?: boolean;
}

export interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown> | null;
  rawBody: string;
}

export interface FakeClaudeAuthOptions {
  clientId?: string;
  /** expires_in of issued access tokens, seconds. */
  accessTtlSec?: number;
  organizationUUID?: string;
  /** Rotate the refresh token on every refresh (default true). */
  rotateRefresh?: boolean;
}

const DEFAULT_ORG = '2f1c3b8e-1111-4a5b-9c9d-0123456789ab';

export class FakeClaudeAuth {
  private server: Server | null = null;
  origin = '';
  readonly clientId: string;
  readonly organizationUUID: string;
  accessTtlSec: number;
  rotateRefresh: boolean;

  /**
   * When set, the token endpoint and the account API refuse every call with an error that quotes
   * the request back: its raw body, the same fields form-encoded, and its Authorization header.
   */
  echoRequests = false;

  /** "approve" redirects with a code; "deny" redirects with error=access_denied. */
  authorizeMode: 'approve' | 'deny' = 'approve';

  readonly authorizeCalls: RecordedCall[] = [];
  readonly tokenCalls: RecordedCall[] = [];
  readonly usageCalls: RecordedCall[] = [];
  readonly profileCalls: RecordedCall[] = [];
  readonly resetCalls: RecordedCall[] = [];
  /** Number of refresh_token grant requests received (answered or scripted). */
  refreshCalls = 0;
  codeExchanges = 0;

  /** Answers used (first in, first out) for the next token requests instead of the normal logic. */
  readonly tokenScript: FakeAnswer[] = [];
  /** Answers for the next usage calls; when empty, `usage` is answered. */
  readonly usageScript: FakeAnswer[] = [];
  /** Answers for the next reset calls; when empty, `{"result":"reset"}`. */
  readonly resetScript: FakeAnswer[] = [];

  /** The usage answer: windows in percent, and the limit-reset offer. */
  usage: Record<string, unknown> = {
    five_hour: { utilization: 100, resets_at: '2026-12-02T15:00:00Z' },
    seven_day: { utilization: 40, resets_at: '2026-12-06T00:00:00Z' },
    juniper_tide: { arm: 'reset', available: true },
  };

  private refreshGate: Promise<void> | null = null;
  private seq = 0;
  private readonly codes = new Map<string, { challenge: string; redirectUri: string; state: string; used: boolean }>();
  private readonly access = new Set<string>();
  private readonly refresh = new Set<string>();

  constructor(opts: FakeClaudeAuthOptions = {}) {
    this.clientId = opts.clientId ?? '9d1c250a-e61b-44d9-88ed-5944d1962f5e';
    this.organizationUUID = opts.organizationUUID ?? DEFAULT_ORG;
    this.accessTtlSec = opts.accessTtlSec ?? 3600;
    this.rotateRefresh = opts.rotateRefresh ?? true;
  }

  get authorizeUrl(): string {
    return `${this.origin}/oauth/authorize`;
  }
  get tokenUrl(): string {
    return `${this.origin}/v1/oauth/token`;
  }
  get pasteRedirectUri(): string {
    return `${this.origin}/oauth/code/callback`;
  }
  get apiBase(): string {
    return this.origin;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.releaseRefresh();
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  /** Issues a valid token pair directly (as if a sign-in had happened). */
  issue(): { accessToken: string; refreshToken: string; expiresIn: number } {
    const n = ++this.seq;
    const accessToken = `fake-access-${n}-${'a'.repeat(12)}`;
    const refreshToken = `fake-refresh-${n}-${'r'.repeat(12)}`;
    this.access.add(accessToken);
    this.refresh.add(refreshToken);
    return { accessToken, refreshToken, expiresIn: this.accessTtlSec };
  }

  isValidAccess(token: string): boolean {
    return this.access.has(token);
  }

  revokeAccess(token: string): void {
    this.access.delete(token);
  }

  revokeRefresh(token: string): void {
    this.refresh.delete(token);
  }

  /** Holds every refresh answer until the returned function is called. */
  holdRefresh(): () => void {
    let release!: () => void;
    this.refreshGate = new Promise<void>((r) => (release = r));
    return () => {
      this.refreshGate = null;
      release();
    };
  }

  private releaseRefresh(): void {
    this.refreshGate = null;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', this.origin);
    const call: RecordedCall = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: parseBody(raw, req.headers['content-type']),
      rawBody: raw,
    };
    const p = url.pathname;
    if (this.echoRequests && p !== '/oauth/authorize' && p !== '/oauth/code/callback') return this.echo(call, res);
    if (req.method === 'GET' && p === '/oauth/authorize') return this.authorize(call, res);
    if (req.method === 'GET' && p === '/oauth/code/callback') return this.pastePage(call, res);
    if (req.method === 'POST' && p === '/v1/oauth/token') return this.token(call, res);
    if (req.method === 'GET' && p === '/api/oauth/usage') return this.accountCall(call, res, this.usageCalls, this.usageScript, () => this.usage);
    if (req.method === 'GET' && p === '/api/oauth/profile') {
      return this.accountCall(call, res, this.profileCalls, [], () => ({
        account: { uuid: '7a7a7a7a-2222-4b4b-8c8c-abcdefabcdef', email_address: 'someone@example.com' },
        organization: { uuid: this.organizationUUID, name: 'Example org' },
      }));
    }
    const m = /^\/api\/organizations\/([^/]+)\/reset_rate_limits$/.exec(p);
    if (req.method === 'POST' && m) {
      return this.accountCall(call, res, this.resetCalls, this.resetScript, () => ({ result: 'reset' }));
    }
    send(res, { status: 404, json: { error: 'not_found' } });
  }

  private echo(call: RecordedCall, res: ServerResponse): void {
    if (call.path === '/v1/oauth/token') this.tokenCalls.push(call);
    const fields = Object.entries(call.body ?? {}).map(([k, v]): [string, string] => [k, String(v)]);
    const quoted = `request ${call.rawBody} form ${new URLSearchParams(fields).toString()} auth ${String(call.headers.authorization ?? '')}`;
    send(res, { status: 400, json: { error: 'invalid_request', error_description: quoted, error_message: quoted } });
  }

  private authorize(call: RecordedCall, res: ServerResponse): void {
    this.authorizeCalls.push(call);
    const q = call.query;
    const bad = (why: string) => send(res, { status: 400, body: `<p>bad authorize request: ${why}</p>` });
    if (q.client_id !== this.clientId) return bad('unknown client_id');
    if (q.response_type !== 'code') return bad('response_type must be code');
    if (q.code_challenge_method !== 'S256' || !q.code_challenge) return bad('PKCE S256 required');
    if (!q.redirect_uri || !q.state) return bad('redirect_uri and state required');
    const target = new URL(q.redirect_uri);
    if (this.authorizeMode === 'deny') {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('state', q.state);
    } else {
      const code = `fake-code-${++this.seq}`;
      this.codes.set(code, { challenge: q.code_challenge, redirectUri: q.redirect_uri, state: q.state, used: false });
      target.searchParams.set('code', code);
      target.searchParams.set('state', q.state);
    }
    res.writeHead(302, { location: target.toString() });
    res.end();
  }

  private pastePage(call: RecordedCall, res: ServerResponse): void {
    const { code, state, error } = call.query;
    if (error) return send(res, { status: 200, body: `<p>Sign-in cancelled</p>` });
    send(res, { status: 200, body: `<p>Paste this into Claude Code:</p><code id="paste">${code}#${state}</code>` });
  }

  private async token(call: RecordedCall, res: ServerResponse): Promise<void> {
    this.tokenCalls.push(call);
    const b = call.body ?? {};
    if (b.grant_type === 'refresh_token') {
      this.refreshCalls += 1;
      if (this.refreshGate) await this.refreshGate;
    }
    const scripted = this.tokenScript.shift();
    if (scripted) return send(res, scripted);
    if (b.client_id !== this.clientId) return send(res, { status: 401, json: { error: 'invalid_client' } });
    if (b.grant_type === 'authorization_code') {
      this.codeExchanges += 1;
      const c = typeof b.code === 'string' ? this.codes.get(b.code) : undefined;
      const verifier = typeof b.code_verifier === 'string' ? b.code_verifier : '';
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (!c || c.used || c.redirectUri !== b.redirect_uri || c.challenge !== challenge || (b.state !== undefined && b.state !== c.state)) {
        return send(res, { status: 400, json: { error: 'invalid_grant', error_description: 'Invalid code' } });
      }
      c.used = true;
      return send(res, { status: 200, json: this.tokenAnswer() });
    }
    if (b.grant_type === 'refresh_token') {
      const rt = typeof b.refresh_token === 'string' ? b.refresh_token : '';
      if (!this.refresh.has(rt)) {
        return send(res, { status: 400, json: { error: 'invalid_grant', error_description: 'Refresh token not found or invalid' } });
      }
      if (this.rotateRefresh) this.refresh.delete(rt);
      const answer = this.tokenAnswer();
      if (!this.rotateRefresh) {
        this.refresh.delete(answer.refresh_token as string);
        delete answer.refresh_token;
      }
      return send(res, { status: 200, json: answer });
    }
    send(res, { status: 400, json: { error: 'unsupported_grant_type' } });
  }

  private tokenAnswer(): Record<string, unknown> {
    const t = this.issue();
    return {
      token_type: 'Bearer',
      access_token: t.accessToken,
      refresh_token: t.refreshToken,
      expires_in: t.expiresIn,
      scope: 'user:inference user:profile org:create_api_key',
      organization: { uuid: this.organizationUUID, name: 'Example org' },
      account: { uuid: '7a7a7a7a-2222-4b4b-8c8c-abcdefabcdef', email_address: 'someone@example.com' },
    };
  }

  private accountCall(call: RecordedCall, res: ServerResponse, log: RecordedCall[], script: FakeAnswer[], answer: () => unknown): void {
    log.push(call);
    const auth = call.headers.authorization;
    const token = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!this.access.has(token)) {
      return send(res, { status: 401, json: { type: 'error', error: { type: 'authentication_error', message: 'invalid bearer token' } } });
    }
    const scripted = script.shift();
    send(res, scripted ?? { status: 200, json: answer() });
  }
}

function send(res: ServerResponse, a: FakeAnswer): void {
  if (a.destroy) {
    res.socket?.destroy();
    return;
  }
  const status = a.status ?? 200;
  if (a.json !== undefined) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(a.json));
    return;
  }
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(a.body ?? '');
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(''));
  });
}

function parseBody(raw: string, type: string | undefined): Record<string, unknown> | null {
  if (!raw) return null;
  if (type?.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  try {
    const v = JSON.parse(raw);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
