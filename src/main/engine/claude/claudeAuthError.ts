// One typed error for everything that can go wrong while getting a Claude account's credentials:
// a bad credentials file or pasted token, a sign-in code that does not match, and the token
// endpoint's answers. The code is stable (the management API relays it), the message names what is
// wrong in words and never contains a token.
import { ApiError } from '../errors';

export type ClaudeAuthErrorCode =
  // credentials file / pasted tokens (the user's input: a 400 naming the field)
  | 'credentials_bad_json'
  | 'credentials_missing_key'
  | 'credentials_missing_field'
  | 'credentials_bad_field'
  | 'credentials_expired'
  | 'credentials_not_found'
  // sign-in flow
  | 'login_missing_code'
  | 'login_state_mismatch'
  | 'login_denied'
  | 'login_unknown'
  | 'login_timeout'
  /** Too many sign-ins open at once (each may hold a loopback listener). */
  | 'login_too_many'
  // token endpoint
  | 'token_invalid_grant'
  | 'token_rejected'
  | 'token_unavailable'
  | 'token_malformed';

const INPUT_CODES = new Set<ClaudeAuthErrorCode>([
  'credentials_bad_json',
  'credentials_missing_key',
  'credentials_missing_field',
  'credentials_bad_field',
  'credentials_expired',
  'credentials_not_found',
  'login_missing_code',
  'login_state_mismatch',
  'login_denied',
  'login_unknown',
  'login_timeout',
]);

export class ClaudeAuthError extends Error {
  constructor(
    readonly code: ClaudeAuthErrorCode,
    message: string,
    /** The input field at fault (e.g. "claudeAiOauth.expiresAt"), when there is one. */
    readonly field?: string,
    /** HTTP status of the token endpoint's answer, when it answered. */
    readonly upstreamStatus?: number,
  ) {
    super(message);
    this.name = 'ClaudeAuthError';
  }

  /**
   * True when retrying cannot help: the grant is dead (invalid_grant, 400/401) and the user has to
   * sign in again. False for network failures, 5xx and 429 (try again later).
   */
  get terminal(): boolean {
    return this.code === 'token_invalid_grant' || this.code === 'token_rejected';
  }

  /** The management API's form: input errors are 400 naming the field; the provider's refusal 401; outages 502. */
  toApiError(): ApiError {
    if (this.code === 'login_too_many') return new ApiError(429, this.code, this.message);
    if (INPUT_CODES.has(this.code)) return new ApiError(400, this.code, this.message, this.field);
    if (this.terminal) return new ApiError(401, this.code, this.message, this.field);
    return new ApiError(502, this.code, this.message, this.field);
  }
}
