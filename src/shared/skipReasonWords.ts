// Plain words for why a connection was passed over for a request (SkipReason): the request log
// shows them, and the proxy's "nothing could serve this" error messages quote them, so an agent's
// user and the dashboard read the same words. Pure data.
import type { SkipReason } from './model';

export const SKIP_REASON_WORDS: Record<SkipReason, string> = {
  disabled: 'disabled',
  cooling_down: 'cooling down',
  terminal: 'out of service until its credentials are fixed',
  circuit_open: 'provider paused by its breaker after repeated failures',
  provider_cooldown: 'provider paused after too many failures in a short time',
  model_lockout: 'model locked on this connection',
  model_not_served: 'does not serve this model',
  admission_rejected: 'turned away by the rate-limit queue',
  attempt_budget: 'no attempts left for this request',
  protocol_mismatch: 'speaks the other protocol',
  context_too_small: 'context window too small for this prompt',
  too_many_tools: 'the model takes fewer tools than this request sends',
  no_connection: 'no usable connection',
  untranslatable: "the request cannot be expressed in this connection's protocol",
  leased_elsewhere: "held by another session's exclusive lease",
  outside_lease_pool: "not among the connections this key may lease",
};
