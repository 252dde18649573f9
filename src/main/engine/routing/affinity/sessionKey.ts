// The session a request belongs to, from what agents send. Headers first, in this order: the
// explicit Switchyard header (someone set it on purpose, e.g. a wrapper that groups several agent
// processes into one session), the OmniRoute spelling, the generic X-Session-Id, Codex's
// x-codex-session-id; then the ids agents send on their own: Claude Code's
// x-claude-code-session-id, Codex CLI's `session-id` (and `session_id`, its older spelling) and
// `thread-id`, opencode's x-opencode-session. Then the body, for agents that carry it there only:
// the session part of Claude Code's metadata.user_id, Codex's client_metadata.session_id, the
// prompt_cache_key (Codex, and opencode on OpenAI-style providers, set it to the session id: it
// names exactly the prompt cache a pin keeps warm), and Qwen Code's metadata.sessionId. Gemini CLI
// on an API key sends no session id at all; its conversation is named by its opening (the system
// instruction and the first turn, which carries the date, the directory and its listing, and stays
// the same for every later request of the session): a hash of the two. A value
// that is empty, longer than 200 characters or not printable ASCII is ignored and the next source
// is read. None of these headers is ever forwarded upstream (upstream/headers.ts builds from scratch).
import { hash } from 'node:crypto';
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
  ['session-id', 'session-id'],
  ['session_id', 'session_id'],
  ['thread-id', 'thread-id'],
  ['x-opencode-session', 'x-opencode-session'],
];

const PRINTABLE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

function usable(v: unknown): string | null {
  const s = (Array.isArray(v) ? v[0] : v) as unknown;
  if (typeof s !== 'string') return null;
  const t = s.trim();
  return t && t.length <= SESSION_ID_MAX_CHARS && PRINTABLE.test(t) ? t : null;
}

const objectAt = (v: unknown): Record<string, unknown> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

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
      return usable(v);
    } catch {
      return null;
    }
  }
  const m = /_session_([0-9A-Za-z-]{8,64})$/.exec(s);
  return m ? m[1]! : null;
}

/** The first this many characters of a Gemini conversation's opening name it (bounds the hash's cost). */
const OPENING_MAX_CHARS = 64 * 1024;

/** A Gemini request's conversation, named by its system instruction and first turn (null for other bodies). */
export function geminiConversation(j: Record<string, unknown>): string | null {
  const contents = j.contents;
  if (!Array.isArray(contents) || contents.length === 0) return null;
  const opening = JSON.stringify([j.systemInstruction ?? null, contents[0]]);
  // One-shot hashing (no Hash object per request).
  return `gem-${hash('sha256', opening.length > OPENING_MAX_CHARS ? opening.slice(0, OPENING_MAX_CHARS) : opening, 'hex').slice(0, 32)}`;
}

/** A top-level member of the request body (proxy/inbound.ts topLevelOf: a large body is not built for it). */
export type BodyMember = (key: string) => unknown;

/** Body sources in precedence order, after every header. */
const BODY_SOURCES: readonly (readonly [SessionSource, (body: BodyMember) => string | null])[] = [
  ['metadata.user_id', (b) => sessionFromUserId(objectAt(b('metadata'))?.user_id)],
  ['client_metadata.session_id', (b) => usable(objectAt(b('client_metadata'))?.session_id)],
  ['prompt_cache_key', (b) => usable(b('prompt_cache_key'))],
  ['metadata.sessionId', (b) => usable(objectAt(b('metadata'))?.sessionId)],
  ['gemini.conversation', (b) => (Array.isArray(b('contents')) ? geminiConversation({ contents: b('contents'), systemInstruction: b('systemInstruction') }) : null)],
];

/** `body`: the request body's top-level members, or the body itself. */
export function sessionKeyOf(headers: IncomingHttpHeaders, body: BodyMember | Record<string, unknown>): SessionKey | null {
  for (const [name, source] of SESSION_HEADERS) {
    const id = usable(headers[name]);
    if (id) return { id, source };
  }
  const member: BodyMember = typeof body === 'function' ? body : (k) => body[k];
  for (const [source, read] of BODY_SOURCES) {
    const id = read(member);
    if (id) return { id, source };
  }
  return null;
}
