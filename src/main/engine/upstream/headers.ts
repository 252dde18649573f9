// Upstream request headers are built from scratch for each attempt: credentials come from the
// connection, a short allowlist of protocol headers comes from the client, and nothing else
// crosses (never the client key, cookies, session or lease headers).
import type { IncomingHttpHeaders } from 'node:http';
import { CLAUDE_KIND } from '../../../shared/model';
import type { ConnectionRecord } from '../store/connectionsRepo';

const ANTHROPIC_VERSION = '2023-06-01';
const OAUTH_BETA = 'oauth-2025-04-20';

/** Client headers that may be forwarded upstream, per protocol. */
const FORWARD: Record<'anthropic' | 'openai', readonly string[]> = {
  anthropic: ['anthropic-version', 'anthropic-beta', 'user-agent', 'x-app'],
  openai: ['openai-beta', 'user-agent'],
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
  } else if (secret) {
    h['authorization'] = `Bearer ${secret}`;
  }
  return h;
}

const targets = new WeakMap<ConnectionRecord, Map<UpstreamEndpoint, { origin: string; path: string }>>();

/** Origin and path for an endpoint on a connection, computed once per connection record. */
export function upstreamTarget(conn: ConnectionRecord, endpoint: UpstreamEndpoint): { origin: string; path: string } {
  let m = targets.get(conn);
  if (!m) targets.set(conn, (m = new Map()));
  let t = m.get(endpoint);
  if (!t) {
    const u = upstreamUrl(conn, endpoint);
    t = { origin: u.origin, path: u.pathname + u.search };
    m.set(endpoint, t);
  }
  return t;
}

/** Full upstream URL for an inbound endpoint on a connection. */
export function upstreamUrl(conn: ConnectionRecord, endpoint: UpstreamEndpoint): URL {
  const base = conn.baseUrl.replace(/\/+$/, '');
  if (conn.protocol === 'anthropic') {
    const root = base.endsWith('/v1') ? base : `${base}/v1`;
    return new URL(`${root}${endpoint === 'count_tokens' ? '/messages/count_tokens' : endpoint === 'models' ? '/models' : '/messages'}`);
  }
  const path = endpoint === 'responses' ? '/responses' : endpoint === 'models' ? '/models' : '/chat/completions';
  return new URL(`${base}${path}`);
}

export type UpstreamEndpoint = 'messages' | 'count_tokens' | 'chat' | 'responses' | 'models';

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
