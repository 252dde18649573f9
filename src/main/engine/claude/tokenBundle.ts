// The credentials of one Claude subscription account, as the connection stores them (encrypted, as
// its secret): where they come from (Claude Code's credentials file, pasted tokens, the token
// endpoint) and how they are read back. Parsing is liberal (ISO or epoch expiry, seconds or ms,
// scopes as a list or a string); what is stored is strict.
import { ClaudeAuthError } from './claudeAuthError';

export interface ClaudeTokenBundle {
  accessToken: string;
  /** null for a long-lived token pasted alone: it cannot be refreshed. */
  refreshToken: string | null;
  /** Epoch ms; null when unknown (then it is refreshed only after a 401). */
  expiresAt: number | null;
  scopes?: string[];
  subscriptionType?: string;
  organizationUUID?: string;
}

const UUIDISH = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

/** Every secret string in a bundle, for the log redactor. */
export function bundleSecrets(b: ClaudeTokenBundle): string[] {
  return b.refreshToken ? [b.accessToken, b.refreshToken] : [b.accessToken];
}

/** The connection's stored secret. */
export function serializeBundle(b: ClaudeTokenBundle): string {
  const out: ClaudeTokenBundle = { accessToken: b.accessToken, refreshToken: b.refreshToken, expiresAt: b.expiresAt };
  if (b.scopes?.length) out.scopes = [...b.scopes];
  if (b.subscriptionType) out.subscriptionType = b.subscriptionType;
  if (b.organizationUUID) out.organizationUUID = b.organizationUUID;
  return JSON.stringify(out);
}

/**
 * Reads a stored secret back. A secret that is not a bundle (a bare access token, as older
 * Anthropic OAuth connections stored it) becomes a bundle without refresh token or expiry.
 */
export function parseStoredBundle(secret: string): ClaudeTokenBundle {
  const s = secret.trim();
  if (!s.startsWith('{')) return { accessToken: checkToken(s, 'accessToken'), refreshToken: null, expiresAt: null };
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch {
    throw new ClaudeAuthError('credentials_bad_json', 'the stored Claude credentials are not valid JSON');
  }
  return bundleFromObject(v, '', null);
}

/**
 * Parses Claude Code's `~/.claude/.credentials.json` (key `claudeAiOauth`). A bare `claudeAiOauth`
 * object is accepted too. Refuses a file whose access token has expired when there is no refresh
 * token to get a new one.
 */
export function parseCredentialsFile(text: string, now: number): ClaudeTokenBundle {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the input, which may hold a token: never relay it.
    throw new ClaudeAuthError('credentials_bad_json', 'the credentials file is not valid JSON');
  }
  if (!isObject(v)) throw new ClaudeAuthError('credentials_bad_json', 'the credentials file must hold a JSON object');
  let inner: unknown = v.claudeAiOauth;
  let prefix = 'claudeAiOauth.';
  if (inner === undefined && 'accessToken' in v) {
    inner = v;
    prefix = '';
  }
  if (inner === undefined) {
    throw new ClaudeAuthError(
      'credentials_missing_key',
      'the credentials file has no "claudeAiOauth" entry (sign in to Claude Code with a Claude subscription first)',
      'claudeAiOauth',
    );
  }
  if (!isObject(inner)) {
    throw new ClaudeAuthError('credentials_bad_field', '"claudeAiOauth" must be an object', 'claudeAiOauth');
  }
  return bundleFromObject(inner, prefix, now);
}

/**
 * Pasted credentials: either the JSON of a credentials file (or of its `claudeAiOauth` entry), or a
 * bare access token (e.g. from `claude setup-token`), optionally with a refresh token and expiry
 * typed into separate fields.
 */
export function parsePastedTokens(
  input: { accessToken: string; refreshToken?: string | null; expiresAt?: number | string | null },
  now: number,
): ClaudeTokenBundle {
  const access = input.accessToken.trim();
  if (access.startsWith('{')) return parseCredentialsFile(access, now);
  return bundleFromObject(
    { accessToken: access, refreshToken: input.refreshToken ?? undefined, expiresAt: input.expiresAt ?? undefined },
    '',
    now,
  );
}

/** Reads an expiry liberally: epoch ms, epoch seconds, a numeric string, or an ISO 8601 date. */
export function parseInstant(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'number') {
    if (!Number.isFinite(v) || v <= 0) return undefined;
    return v < 1e11 ? Math.round(v * 1000) : Math.round(v);
  }
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^\d+(\.\d+)?$/.test(s)) return parseInstant(Number(s));
    const t = Date.parse(s);
    return Number.isFinite(t) ? t : undefined;
  }
  return undefined;
}

function bundleFromObject(o: unknown, prefix: string, now: number | null): ClaudeTokenBundle {
  if (!isObject(o)) throw new ClaudeAuthError('credentials_bad_field', 'the credentials must be an object');
  const access = o.accessToken;
  if (access === undefined || access === null || access === '') {
    throw new ClaudeAuthError('credentials_missing_field', `"${prefix}accessToken" is missing`, `${prefix}accessToken`);
  }
  if (typeof access !== 'string') {
    throw new ClaudeAuthError('credentials_bad_field', `"${prefix}accessToken" must be a string`, `${prefix}accessToken`);
  }
  const refresh = o.refreshToken;
  if (refresh !== undefined && refresh !== null && typeof refresh !== 'string') {
    throw new ClaudeAuthError('credentials_bad_field', `"${prefix}refreshToken" must be a string`, `${prefix}refreshToken`);
  }
  const expiresAt = parseInstant(o.expiresAt);
  if (expiresAt === undefined) {
    throw new ClaudeAuthError(
      'credentials_bad_field',
      `"${prefix}expiresAt" must be a time (epoch milliseconds or an ISO date)`,
      `${prefix}expiresAt`,
    );
  }
  const b: ClaudeTokenBundle = {
    accessToken: checkToken(access.trim(), `${prefix}accessToken`),
    refreshToken: refresh ? checkToken(refresh.trim(), `${prefix}refreshToken`) : null,
    expiresAt,
  };
  if (now !== null && b.refreshToken === null && b.expiresAt !== null && b.expiresAt <= now) {
    throw new ClaudeAuthError(
      'credentials_expired',
      `the access token expired at ${new Date(b.expiresAt).toISOString()} and there is no refresh token to renew it: sign in to Claude again`,
      `${prefix}expiresAt`,
    );
  }
  const scopes = parseScopes(o.scopes);
  if (scopes) b.scopes = scopes;
  if (typeof o.subscriptionType === 'string' && /^[\w.-]{1,40}$/.test(o.subscriptionType)) {
    b.subscriptionType = o.subscriptionType;
  }
  if (typeof o.organizationUUID === 'string' && UUIDISH.test(o.organizationUUID)) b.organizationUUID = o.organizationUUID;
  return b;
}

function checkToken(t: string, field: string): string {
  if (!t) throw new ClaudeAuthError('credentials_missing_field', `"${field}" is empty`, field);
  if (t.length < 8 || t.length > 8_000 || !TOKEN_CHARS.test(t)) {
    throw new ClaudeAuthError('credentials_bad_field', `"${field}" does not look like a token (no spaces, 8 to 8000 characters)`, field);
  }
  return t;
}

/** Scopes as a list or a space-separated string; undefined when absent or unreadable. */
export function parseScopes(v: unknown): string[] | undefined {
  const list = typeof v === 'string' ? v.split(/\s+/) : Array.isArray(v) ? v : undefined;
  if (!list) return undefined;
  const out = list.filter((s): s is string => typeof s === 'string' && /^[\w:.-]{1,100}$/.test(s));
  return out.length ? [...new Set(out)] : undefined;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export { UUIDISH };
