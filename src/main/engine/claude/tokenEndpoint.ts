// The OAuth token endpoint: exchanging a sign-in code (with the PKCE verifier) and refreshing a
// token. Each answer becomes a token bundle or a typed ClaudeAuthError saying whether it is final
// (invalid_grant or another 400/401: sign in again) or transient (network, 403, 429, 5xx).
import type { ClaudeOAuthConfig } from './claudeConfig';
import { ClaudeAuthError } from './claudeAuthError';
import { scrubValues } from '../logger';
import { HttpTransportError, jsonBody, type HttpFn, type HttpResponse } from './http';
import { isObject, parseScopes, UUIDISH, type ClaudeTokenBundle } from './tokenBundle';

type TokenCfg = Pick<ClaudeOAuthConfig, 'tokenUrl' | 'clientId'>;

export interface CodeExchange {
  code: string;
  state: string;
  verifier: string;
  redirectUri: string;
}

export async function exchangeCode(
  http: HttpFn,
  cfg: TokenCfg,
  x: CodeExchange,
  now: () => number,
  signal?: AbortSignal,
): Promise<ClaudeTokenBundle> {
  const res = await post(http, cfg, 'sign-in', signal, {
    grant_type: 'authorization_code',
    code: x.code,
    state: x.state,
    client_id: cfg.clientId,
    redirect_uri: x.redirectUri,
    code_verifier: x.verifier,
  });
  return bundleFromAnswer(res, 'sign-in', now(), null, [x.code, x.verifier, x.state]);
}

/** Refreshes; a refresh answer without a new refresh token keeps the old one (no rotation). */
export async function refreshTokens(
  http: HttpFn,
  cfg: TokenCfg,
  previous: ClaudeTokenBundle & { refreshToken: string },
  now: () => number,
  signal?: AbortSignal,
): Promise<ClaudeTokenBundle> {
  const res = await post(http, cfg, 'refresh', signal, {
    grant_type: 'refresh_token',
    refresh_token: previous.refreshToken,
    client_id: cfg.clientId,
  });
  return bundleFromAnswer(res, 'refresh', now(), previous, [previous.refreshToken, previous.accessToken]);
}

type What = 'sign-in' | 'refresh';

async function post(http: HttpFn, cfg: TokenCfg, what: What, signal: AbortSignal | undefined, body: object): Promise<HttpResponse> {
  try {
    return await http({
      method: 'POST',
      url: cfg.tokenUrl,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    const detail = err instanceof HttpTransportError ? err.message : 'network error';
    throw new ClaudeAuthError('token_unavailable', `the Claude token endpoint could not be reached for the ${what}: ${detail}`);
  }
}

/** `sent`: the secrets the request carried, scrubbed from any text of the answer that quotes it back. */
function bundleFromAnswer(res: HttpResponse, what: What, now: number, previous: ClaudeTokenBundle | null, sent: string[]): ClaudeTokenBundle {
  const body = jsonBody(res);
  if (res.status < 200 || res.status >= 300) throw refusal(res.status, body, what, sent);
  if (!isObject(body) || typeof body.access_token !== 'string' || !body.access_token) {
    throw new ClaudeAuthError('token_malformed', `the Claude token endpoint's ${what} answer has no access token`, undefined, res.status);
  }
  const refresh = typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : (previous?.refreshToken ?? null);
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in);
  const b: ClaudeTokenBundle = {
    accessToken: body.access_token,
    refreshToken: refresh,
    expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? now + Math.round(expiresIn * 1000) : null,
  };
  const scopes = parseScopes(body.scope) ?? previous?.scopes;
  if (scopes) b.scopes = scopes;
  if (previous?.subscriptionType) b.subscriptionType = previous.subscriptionType;
  const org = isObject(body.organization) ? body.organization.uuid : undefined;
  if (typeof org === 'string' && UUIDISH.test(org)) b.organizationUUID = org;
  else if (previous?.organizationUUID) b.organizationUUID = previous.organizationUUID;
  return b;
}

function refusal(status: number, body: unknown, what: What, sent: string[]): ClaudeAuthError {
  const err = isObject(body) ? body.error : undefined;
  // OAuth's { error, error_description }, or Anthropic's { error: { type, message } }.
  const rawCode = typeof err === 'string' ? err : isObject(err) && typeof err.type === 'string' ? err.type : null;
  const code = rawCode === null ? null : scrubValues(rawCode, sent).slice(0, 100);
  const descRaw = isObject(body)
    ? typeof body.error_description === 'string'
      ? body.error_description
      : isObject(err) && typeof err.message === 'string'
        ? err.message
        : null
    : null;
  // Scrubbed before it is cut, so a quoted secret cannot survive as a cut-off prefix.
  const desc = descRaw ? `: ${scrubValues(descRaw, sent).slice(0, 200)}` : '';
  const label = code ? `${code}${desc}` : `HTTP ${status}${desc}`;
  if (code === 'invalid_grant') {
    return new ClaudeAuthError(
      'token_invalid_grant',
      what === 'refresh'
        ? `Claude no longer accepts this account's sign-in (${label}): sign in again`
        : `Claude refused the sign-in code (${label}): start "Sign in with Claude" again`,
      what === 'sign-in' ? 'code' : undefined,
      status,
    );
  }
  if (status === 400 || status === 401) {
    return new ClaudeAuthError(
      'token_rejected',
      `the Claude token endpoint refused the ${what} (${label})${what === 'refresh' ? ': sign in again' : ''}`,
      what === 'sign-in' ? 'code' : undefined,
      status,
    );
  }
  return new ClaudeAuthError('token_unavailable', `the Claude token endpoint failed the ${what} (${label}); it will be retried`, undefined, status);
}
