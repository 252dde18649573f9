// The session a request belongs to, from the headers agents send (and, as a last resort, Claude
// Code's metadata.user_id). Precedence: the explicit Switchyard header first (someone set it on
// purpose, e.g. a wrapper that groups several agent processes into one session), then the
// OmniRoute spelling, the generic X-Session-Id, Codex's x-codex-session-id, then the ids agents
// send on their own: Claude Code's x-claude-code-session-id and Codex CLI's session_id (its
// conversation id), and finally the session part of Claude Code's metadata.user_id. A value that
// is empty, longer than 200 characters or not printable ASCII is ignored and the next source is
// read. None of these headers is ever forwarded upstream (upstream/headers.ts builds from scratch).
import type { IncomingHttpHeaders } from 'node:http';
import type { SessionSource } from '../../../../shared/model';

export interface SessionKey {
  id: string;
  source: SessionSource;
}

export const SESSION_ID_MAX_CHARS = 200;

/** Header sources in precedence order (Node lower-cases incoming header names). */
export const SESSION_HEADERS: readonly (readonly [string, SessionSource])[] = [
  ['x-switchyard-session', 'x-switchyard-session'],
  ['x-omniroute-session', 'x-omniroute-session'],
  ['x-session-id', 'x-session-id'],
  ['x-codex-session-id', 'x-codex-session-id'],
  ['x-claude-code-session-id', 'x-claude-code-session-id'],
  ['session_id', 'session_id'],
];

const PRINTABLE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

function usable(v: string | string[] | undefined): string | null {
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s && s.length <= SESSION_ID_MAX_CHARS && PRINTABLE.test(s) ? s : null;
}

/**
 * The session part of Claude Code's metadata.user_id: either the older
 * `user_<hash>_account_<uuid>_session_<uuid>` or a JSON object string with `session_id`.
 * Only the session id is kept (the rest identifies the user's device and account).
 */
export function sessionFromUserId(userId: unknown): string | null {
  if (typeof userId !== 'string' || userId.length > 2_000) return null;
  const s = userId.trim();
  if (s.startsWith('{')) {
    try {
      const v = (JSON.parse(s) as { session_id?: unknown }).session_id;
      return typeof v === 'string' ? usable(v) : null;
    } catch {
      return null;
    }
  }
  const m = /_session_([0-9A-Za-z-]{8,64})$/.exec(s);
  return m ? m[1]! : null;
}

export function sessionKeyOf(headers: IncomingHttpHeaders, json: Record<string, unknown>): SessionKey | null {
  for (const [name, source] of SESSION_HEADERS) {
    const id = usable(headers[name]);
    if (id) return { id, source };
  }
  const meta = json.metadata;
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) {
    const id = sessionFromUserId((meta as Record<string, unknown>).user_id);
    if (id) return { id, source: 'metadata.user_id' };
  }
  return null;
}
