// Whether a connection's rate-limit queue is one limiter for the whole connection or one per model
// (SPEC R-RQ-13, R-RQ-17). Google's Gemini family meters quota per model, so its limiter is
// model-scoped: a pause or a long lockout for one model leaves the others dispatching.
import type { ConnectionRecord } from '../store/connectionsRepo';

export type LimiterScope = 'connection' | 'model';

/** Providers whose quotas are per model. */
const PER_MODEL_PROVIDERS = new Set(['gemini', 'google', 'google-ai', 'vertex', 'vertex-ai', 'antigravity', 'gemini-cli']);
/** Hosts that serve per-model quotas, whatever the connection calls its provider. */
const PER_MODEL_HOSTS = ['generativelanguage.googleapis.com', 'aiplatform.googleapis.com', 'cloudcode-pa.googleapis.com'];

export function limiterScopeOf(conn: Pick<ConnectionRecord, 'provider' | 'baseUrl'> & { protocol?: ConnectionRecord['protocol'] }): LimiterScope {
  // A native Gemini connection (Google AI Studio's API, wherever it is reached) meters per model.
  if (conn.protocol === 'gemini') return 'model';
  if (PER_MODEL_PROVIDERS.has(conn.provider.trim().toLowerCase())) return 'model';
  let host = '';
  try {
    host = new URL(conn.baseUrl).hostname.toLowerCase();
  } catch {
    return 'connection';
  }
  return PER_MODEL_HOSTS.some((h) => host === h || host.endsWith(`.${h}`)) ? 'model' : 'connection';
}

/** The limiter a request uses inside its connection: '' for the connection-wide one, else the model. */
export function limiterKeyOf(scope: LimiterScope, model: string): string {
  return scope === 'model' ? model : '';
}
