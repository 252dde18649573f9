// Upstream request headers are built from scratch for each attempt: credentials come from the
// connection, a short allowlist of protocol headers comes from the client, and nothing else
// crosses (never the client key, cookies, session or lease headers).
import type { IncomingHttpHeaders } from 'node:http';
import { CLAUDE_KIND, type WireProtocol } from '../../../shared/model';
import { geminiUpstreamPath } from '../codecs/geminiRequest';
import type { ConnectionRecord } from '../store/connectionsRepo';

const ANTHROPIC_VERSION = '2023-06-01';
const OAUTH_BETA = 'oauth-2025-04-20';

/** Client headers that may be forwarded upstream, per protocol. */
const FORWARD: Record<WireProtocol, readonly string[]> = {
  anthropic: ['anthropic-version', 'anthropic-beta', 'user-agent', 'x-app'],
  openai: ['openai-beta', 'user-agent'],
  gemini: ['user-agent', 'x-goog-api-client'],
};

export function buildUpstreamHeaders(
  conn: ConnectionRecord,
  secret: string | null,
  inbound: IncomingHttpHeaders,
  opts: { stream: boolean; hasBody: boolean },
): Record<string, string> {
  const h: Record<string, string> = {};
  for (const name of FORWARD[conn.protocol]) {
    const v = inbound[name];
    if (typeof v === 'string' && v) h[name] = v;
  }
  if (opts.hasBody) h['content-type'] = 'application/json';
  h['accept'] = opts.stream ? 'text/event-stream' : 'application/json';

  if (conn.protocol === 'anthropic') {
    h['anthropic-version'] ??= ANTHROPIC_VERSION;
    // A Claude subscription's secret is its token bundle, never sent: the Claude attempt
    // interceptor sets the bearer access token and the OAuth beta on each try.
    if (secret && conn.kind !== CLAUDE_KIND) {
      if (conn.authClass === 'oauth') {
        h['authorization'] = `Bearer ${secret}`;
        const beta = h['anthropic-beta'];
        h['anthropic-beta'] = beta ? (beta.includes(OAUTH_BETA) ? beta : `${beta},${OAUTH_BETA}`) : OAUTH_BETA;
      } else {
        h['x-api-key'] = secret;
        // Anthropic-compatible gateways differ in which header they read; send both.
        if (conn.kind === 'anthropic-compatible') h['authorization'] = `Bearer ${secret}`;
      }
    }
  } else if (conn.protocol === 'gemini') {
    // Google AI Studio reads the key from its own header (never the URL, where logs would keep it).
    if (secret) h['x-goog-api-key'] = secret;
  } else if (secret) {
    h['authorization'] = `Bearer ${secret}`;
  }
  return h;
}

const targets = new WeakMap<ConnectionRecord, Map<string, { origin: string; path: string }>>();

/**
 * Origin and path for an endpoint on a connection, computed once per connection record (and, on
 * a Gemini connection, whose path names the model, once per model and stream flag).
 */
export function upstreamTarget(conn: ConnectionRecord, endpoint: UpstreamEndpoint, model = '', stream = false): { origin: string; path: string } {
  let m = targets.get(conn);
  if (!m) targets.set(conn, (m = new Map()));
  const key = conn.protocol === 'gemini' ? `${endpoint}|${stream ? 's' : ''}|${model}` : endpoint;
  let t = m.get(key);
  if (!t) {
    const u = upstreamUrl(conn, endpoint, model, stream);
    t = { origin: u.origin, path: u.pathname + u.search };
    m.set(key, t);
  }
  return t;
}

/** Full upstream URL for an inbound endpoint on a connection (a Gemini connection's names the model). */
export function upstreamUrl(conn: ConnectionRecord, endpoint: UpstreamEndpoint, model = '', stream = false): URL {
  const base = conn.baseUrl.replace(/\/+$/, '');
  if (conn.protocol === 'gemini') {
    const root = base.replace(/\/(v1beta|v1)$/, '');
    if (endpoint === 'models') return new URL(`${root}/v1beta/models`);
    if (endpoint === 'gemini_count') return new URL(`${root}/v1beta/models/${encodeURIComponent(model.replace(/^models\//, ''))}:countTokens`);
    return new URL(`${root}${geminiUpstreamPath(model, stream)}`);
  }
  if (conn.protocol === 'anthropic') {
    const root = base.endsWith('/v1') ? base : `${base}/v1`;
    return new URL(`${root}${endpoint === 'count_tokens' ? '/messages/count_tokens' : endpoint === 'models' ? '/models' : '/messages'}`);
  }
  const path = endpoint === 'responses' ? '/responses' : endpoint === 'models' ? '/models' : '/chat/completions';
  return new URL(`${base}${path}`);
}

/** `gemini`: generateContent or streamGenerateContent (the model and stream flag pick the path); `gemini_count`: countTokens. */
export type UpstreamEndpoint = 'messages' | 'count_tokens' | 'chat' | 'responses' | 'models' | 'gemini' | 'gemini_count';

/** Response headers that must not be copied from the upstream to the client. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'set-cookie',
  'date',
  'server',
  'alt-svc',
  'strict-transport-security',
]);
