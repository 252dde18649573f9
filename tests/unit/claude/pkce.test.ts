// PKCE (S256) values, the authorize URL, and what a user may paste back.
import { describe, expect, it } from 'vitest';
import { ClaudeAuthError } from '../../../src/main/engine/claude/claudeAuthError';
import {
  buildAuthorizeUrl,
  challengeFor,
  createPkce,
  createState,
  parseAuthorizationInput,
  parseCallbackQuery,
} from '../../../src/main/engine/claude/pkce';

const cfg = { authorizeUrl: 'https://claude.ai/oauth/authorize', clientId: 'client-1', scopes: 'org:create_api_key user:profile user:inference' };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as ClaudeAuthError).code;
  }
  return undefined;
}

describe('PKCE', () => {
  it('derives the S256 challenge of RFC 7636 appendix B', () => {
    expect(challengeFor('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes a 43-character base64url verifier from 32 random bytes, and its challenge', () => {
    const p = createPkce();
    expect(p.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.challenge).toBe(challengeFor(p.verifier));
    expect(p.method).toBe('S256');
    expect(createPkce().verifier).not.toBe(p.verifier);
  });

  it('takes its randomness from the injected source', () => {
    const bytes = (n: number) => Buffer.alloc(n, 7);
    expect(createPkce(bytes).verifier).toBe(Buffer.alloc(32, 7).toString('base64url'));
    expect(createState(bytes)).toBe(Buffer.alloc(32, 7).toString('base64url'));
  });
});

describe('authorize URL', () => {
  it('carries the client, scopes, redirect, S256 challenge, state and code=true', () => {
    const u = new URL(buildAuthorizeUrl(cfg, { challenge: 'ch', state: 'st', redirectUri: 'http://localhost:5555/callback' }));
    expect(u.origin + u.pathname).toBe('https://claude.ai/oauth/authorize');
    expect(Object.fromEntries(u.searchParams)).toEqual({
      code: 'true',
      client_id: 'client-1',
      response_type: 'code',
      redirect_uri: 'http://localhost:5555/callback',
      scope: 'org:create_api_key user:profile user:inference',
      code_challenge: 'ch',
      code_challenge_method: 'S256',
      state: 'st',
    });
  });
});

describe('pasted codes', () => {
  it('reads "code#state" as the provider page shows it', () => {
    expect(parseAuthorizationInput('  abc123#st  ', 'st')).toEqual({ code: 'abc123' });
  });

  it('reads a pasted callback URL', () => {
    expect(parseAuthorizationInput('https://console.anthropic.com/oauth/code/callback?code=abc123&state=st', 'st')).toEqual({ code: 'abc123' });
  });

  it('accepts the code alone (the verifier still binds it)', () => {
    expect(parseAuthorizationInput('abc123', 'st')).toEqual({ code: 'abc123' });
  });

  it('refuses a code of another sign-in, an empty paste, junk and a denial, naming the field', () => {
    expect(codeOf(() => parseAuthorizationInput('abc123#other', 'st'))).toBe('login_state_mismatch');
    expect(codeOf(() => parseAuthorizationInput('   ', 'st'))).toBe('login_missing_code');
    expect(codeOf(() => parseAuthorizationInput('not a code at all', 'st'))).toBe('login_missing_code');
    expect(codeOf(() => parseAuthorizationInput('https://x.example/cb?error=access_denied&state=st', 'st'))).toBe('login_denied');
    try {
      parseAuthorizationInput('abc#other', 'st');
    } catch (e) {
      expect((e as ClaudeAuthError).field).toBe('code');
      expect((e as ClaudeAuthError).toApiError().status).toBe(400);
    }
  });

  it('a denial without this sign-in\'s state is someone else\'s: a state mismatch, not a denial', () => {
    expect(codeOf(() => parseCallbackQuery(new URLSearchParams('error=access_denied'), 'st'))).toBe('login_state_mismatch');
    expect(codeOf(() => parseCallbackQuery(new URLSearchParams('error=access_denied&state='), 'st'))).toBe('login_state_mismatch');
    expect(codeOf(() => parseCallbackQuery(new URLSearchParams('error=access_denied&state=other'), 'st'))).toBe('login_state_mismatch');
  });

  it('requires the state on a loopback callback', () => {
    expect(parseCallbackQuery(new URLSearchParams('code=abc&state=st'), 'st')).toEqual({ code: 'abc' });
    expect(codeOf(() => parseCallbackQuery(new URLSearchParams('code=abc'), 'st'))).toBe('login_state_mismatch');
    expect(codeOf(() => parseCallbackQuery(new URLSearchParams('code=abc&state=x'), 'st'))).toBe('login_state_mismatch');
    expect(codeOf(() => parseCallbackQuery(new URLSearchParams('error=access_denied&state=st'), 'st'))).toBe('login_denied');
    expect(codeOf(() => parseCallbackQuery(new URLSearchParams('state=st'), 'st'))).toBe('login_missing_code');
  });
});
