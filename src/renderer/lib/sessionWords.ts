// Words for session affinity and leases on the Sessions, Leases and Logs pages. Pure.
import type { AffinityTrace, LeaseTrace, SessionSource } from '../../shared/model';
import { SKIP_REASONS } from './reasons';

export const SESSION_SOURCE_LABELS: Record<SessionSource, string> = {
  'x-switchyard-session': 'X-Switchyard-Session',
  'x-omniroute-session': 'X-OmniRoute-Session',
  'x-session-id': 'X-Session-Id',
  'x-codex-session-id': 'x-codex-session-id',
  'x-claude-code-session-id': 'Claude Code session',
  'session-id': 'Codex CLI session',
  session_id: 'Codex CLI session (older versions)',
  'thread-id': 'Codex CLI thread',
  'x-opencode-session': 'opencode session',
  'metadata.user_id': 'Claude Code metadata',
  'client_metadata.session_id': 'Codex CLI request metadata',
  prompt_cache_key: 'Prompt cache key',
  'metadata.sessionId': 'Qwen Code metadata',
  'gemini.conversation': 'Gemini conversation (its opening turn)',
};

/** A long session id shortened for a table cell (the full id is in the title). */
export const shortSession = (id: string): string => (id.length > 18 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id);

const reasonWords = (r: string | null): string => (r ? ((SKIP_REASONS as Record<string, string>)[r] ?? r.replace(/_/g, ' ')) : 'not eligible');

/** One sentence: what the session's pin did for this request. */
export function describeAffinity(a: AffinityTrace, servedBy: string | null): string {
  const pinned = a.pinnedConnectionName ?? a.pinnedConnectionId ?? 'a connection';
  const served = servedBy ?? 'another connection';
  switch (a.pin) {
    case 'none':
      return a.result === 'created' ? `New session: pinned to ${served}.` : 'New session; nothing served it, so nothing was pinned.';
    case 'followed':
      return a.result === 'moved' ? `Followed its pin to ${pinned}, which failed; re-pinned to ${served}.` : `Followed its pin to ${pinned}.`;
    case 'bypassed':
      return a.result === 'moved'
        ? `Its pin to ${pinned} was skipped (${reasonWords(a.reason)}); re-pinned to ${served}.`
        : `Its pin to ${pinned} was skipped (${reasonWords(a.reason)}).`;
    case 'not_candidate':
      return `Pinned to ${pinned}, which does not serve this model; the pin stays.`;
  }
}

/** One sentence: what the request's exclusive lease did. */
export function describeLease(l: LeaseTrace, servedBy: string | null): string {
  const on = l.connectionName ?? l.connectionId ?? 'its connection';
  switch (l.result) {
    case 'held':
      return `Served under its exclusive lease on ${on} (generation ${l.generation}).`;
    case 'moved':
      return `Its leased connection ${on} was not eligible; the lease moved to ${servedBy ?? 'another connection'} (generation ${l.generation}).`;
    case 'refused':
      return `Lease refused before any upstream call: ${l.code ?? 'refused'}.`;
    case 'unserved':
      return `Presented its lease on ${on}; nothing served it.`;
  }
}
