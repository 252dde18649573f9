// Session affinity (SPEC §2c): how long a session stays pinned to the connection (or combo target)
// that last served it. The TTL slides: every request of the session restarts it.
import { envNames, int } from './define';

const MIN = 60_000;

export const sessionSettings = {
  sessionAffinityTtlMs: int({
    group: 'routing',
    label: 'Keep a conversation on one connection',
    description:
      'Requests that carry a session id (Claude Code and Codex send one) stay on the connection that served their session last while it is usable, so the provider\'s prompt cache keeps working; this ends after this long without a request of the session. 0 turns it off. It never blocks failover: a resting or failing connection is skipped as usual.',
    default: 60 * MIN,
    min: 0,
    max: 7 * 24 * 60 * MIN,
    unit: 'ms',
    env: envNames('SESSION_AFFINITY_TTL_MS'),
  }),
} as const;
