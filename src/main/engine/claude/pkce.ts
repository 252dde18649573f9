// OAuth 2.0 authorization code with PKCE (RFC 7636, S256) for "Sign in with Claude": the
// verifier, challenge and state, the authorize URL, and reading back what the user brings
// (a loopback callback's query, or the `code#state` the provider's page shows for pasting).
import { createHash, randomBytes } from 'node:crypto';
import type { ClaudeOAuthConfig } from './claudeConfig';
import { ClaudeAuthError } from './claudeAuthError';

/** Source of random bytes (node:crypto by default; tests may inject a fixed one). */
export type RandomBytes = (n: number) => Buffer;

export interface PkcePair {
  /** 43 characters of base64url (32 random bytes), kept by us until the code exchange. */
  verifier: string;
  /** base64url(SHA-256(verifier)), sent in the authorize URL. */
  challenge: string;
  method: 'S256';
}

export function createPkce(bytes: RandomBytes = randomBytes): PkcePair {
  const verifier = bytes(32).toString('base64url');
  return { verifier, challenge: challengeFor(verifier), method: 'S256' };
}

export function challengeFor(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** An unguessable state value binding the callback to this sign-in (CSRF protection). */
export function createState(bytes: RandomBytes = randomBytes): string {
  return bytes(32).toString('base64url');
}

/**
 * The URL the browser opens. `code=true` asks the provider to show the code for pasting when the
 * redirect goes to its own page; a loopback redirect receives `?code=…&state=…` instead.
 */
export function buildAuthorizeUrl(
  cfg: Pick<ClaudeOAuthConfig, 'authorizeUrl' | 'clientId' | 'scopes'>,
  p: { challenge: string; state: string; redirectUri: string },
): string {
  const u = new URL(cfg.authorizeUrl);
  u.searchParams.set('code', 'true');
  u.searchParams.set('client_id', cfg.clientId);
  u.searchParams.set('response_type', 'code');
  u.searchParams.set('redirect_uri', p.redirectUri);
  u.searchParams.set('scope', cfg.scopes);
  u.searchParams.set('code_challenge', p.challenge);
  u.searchParams.set('code_challenge_method', 'S256');
  u.searchParams.set('state', p.state);
  return u.toString();
}

/**
 * Reads the authorization code from what the user pasted: `code#state` (what the provider's page
 * shows), the full callback URL (`…?code=…&state=…`), or the code alone. A state that is present
 * must match this sign-in's; a code without state is accepted (the PKCE verifier still binds it).
 */
export function parseAuthorizationInput(input: string, expectedState: string): { code: string } {
  const s = input.trim();
  if (!s) throw new ClaudeAuthError('login_missing_code', 'paste the code the Claude page shows', 'code');
  let code: string | null = null;
  let state: string | null = null;
  let error: string | null = null;
  if (/^https?:\/\//i.test(s)) {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      throw new ClaudeAuthError('login_missing_code', 'the pasted address is not a valid URL', 'code');
    }
    const q = new URLSearchParams(u.search);
    const h = new URLSearchParams(u.hash.replace(/^#/, ''));
    code = q.get('code') ?? h.get('code');
    state = q.get('state') ?? h.get('state');
    error = q.get('error') ?? h.get('error');
  } else {
    const hash = s.indexOf('#');
    code = hash >= 0 ? s.slice(0, hash) : s;
    state = hash >= 0 ? s.slice(hash + 1) : null;
  }
  if (error) throw new ClaudeAuthError('login_denied', `the sign-in was not approved (${error.slice(0, 100)})`, 'code');
  code = code?.trim() ?? null;
  if (!code || !/^[\w.~-]{4,2000}$/.test(code)) {
    throw new ClaudeAuthError('login_missing_code', 'that is not a sign-in code (expected "code#state" as shown by Claude)', 'code');
  }
  return { code: checkState(code, state?.trim() || null, expectedState) };
}

/** The loopback callback's query. */
export function parseCallbackQuery(query: URLSearchParams, expectedState: string): { code: string } {
  // The browser brings the state back on a redirect, so here it is required, for a denial too: a
  // callback without this sign-in's state is someone else's (or forged) and must not end it.
  const state = query.get('state') ?? '';
  const error = query.get('error');
  if (error) {
    if (state !== expectedState) throw stateMismatch('state');
    const desc = query.get('error_description');
    throw new ClaudeAuthError('login_denied', `the sign-in was not approved (${(desc ?? error).slice(0, 200)})`);
  }
  const code = query.get('code');
  if (!code) throw new ClaudeAuthError('login_missing_code', 'the sign-in callback carried no code');
  return { code: checkState(code, state, expectedState) };
}

const stateMismatch = (field: string) =>
  new ClaudeAuthError('login_state_mismatch', 'this code belongs to a different sign-in (its state does not match): start "Sign in with Claude" again', field);

function checkState(code: string, state: string | null, expected: string): string {
  if (state !== null && state !== expected) throw stateMismatch('code');
  return code;
}
