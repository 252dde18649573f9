// Session affinity (SPEC §2c): how long a session stays pinned to the connection (or combo target)
// that last served it. The TTL slides: every request of the session restarts it.
import { envNames, int } from './define';

const MIN = 60_000;

export const sessionSettings = {
  sessionAffinityTtlMs: int({
    group: 'routing',
    label: 'Session affinity',
    description:
      'Requests that carry a session id (X-Session-Id, x-codex-session-id, X-Switchyard-Session, Claude Code\'s and Codex\'s own session headers) stay on the connection that served their session last, for as long as it is eligible, so the provider\'s prompt cache keeps working. A pin ends after this long without a request of its session. 0 turns affinity off. A pin never blocks failover: a cooling, locked or failing connection is skipped as usual and the pin moves to whichever connection served.',
    default: 60 * MIN,
    min: 0,
    max: 7 * 24 * 60 * MIN,
    unit: 'ms',
    env: envNames('SESSION_AFFINITY_TTL_MS'),
  }),
} as const;
