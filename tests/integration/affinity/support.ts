// Shared set-up for the session affinity and lease integration tests: the real engine on a fake
// clock, one fake upstream, three Anthropic-protocol connections of one provider with the same
// priority (so round-robin spreads plain requests over all three), queue protection off.
import Anthropic from '@anthropic-ai/sdk';
import type { ConnectionView, RequestLogEntry } from '../../../src/shared/model';
import type { Rig } from '../resilience/support';

export const KEYS = ['key-one-000000000001', 'key-two-000000000002', 'key-three-0000000003'] as const;
export const ENV = { RATE_LIMIT_AUTO_ENABLE: 'false' };
export const SELECTED = 'x-switchyard-selected-connection-id';

/** Every header name that is only for the proxy: none may reach an upstream. */
export const PROXY_ONLY_HEADERS = [
  'x-session-id',
  'x-codex-session-id',
  'x-switchyard-session',
  'x-omniroute-session',
  'x-claude-code-session-id',
  'session-id',
  'session_id',
  'thread-id',
  'x-opencode-session',
  'x-switchyard-lease-owner',
  'x-switchyard-lease-generation',
  'x-omniroute-lease-owner',
  'x-omniroute-lease-generation',
];

export interface Trio {
  rig: Rig;
  conns: ConnectionView[];
  lastLog(): Promise<RequestLogEntry>;
}

export async function trio(rig: Rig): Promise<Trio> {
  const conns: ConnectionView[] = [];
  for (const [i, key] of KEYS.entries()) conns.push(await rig.add(`Conn ${i + 1}`, key, { priority: 1 }));
  return { rig, conns, lastLog: async () => (await rig.t.api.listLogs({ limit: 1 })).entries[0]! };
}

export interface Reply {
  status: number;
  selected: string | null;
  retryAfter: string | null;
  error: { code?: string; status?: string; message?: string; retry_after?: number; param?: string } | null;
}

/** One Messages call with the real Anthropic SDK and extra request headers (e.g. Claude Code's session header). */
export async function say(client: Anthropic, headers: Record<string, string> = {}, model = 'claude-x'): Promise<Reply> {
  try {
    const { response } = await client.messages
      .create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }, { headers })
      .withResponse();
    return { status: response.status, selected: response.headers.get(SELECTED), retryAfter: null, error: null };
  } catch (e) {
    if (!(e instanceof Anthropic.APIError) || e.status === undefined) throw e;
    return {
      status: e.status,
      selected: e.headers?.get(SELECTED) ?? null,
      retryAfter: e.headers?.get('retry-after') ?? null,
      error: (e.error as { error?: Reply['error'] } | undefined)?.error ?? null,
    };
  }
}

/** Claude Code's own session header, as it sends it on every request of a session. */
export const claudeCode = (session: string) => ({ 'X-Claude-Code-Session-Id': session });

export interface LeaseAnswer {
  status: number;
  retryAfter: string | null;
  body: any;
}

/** One call to the lease endpoint on the proxy port, with a plain HTTP client (R-LS-02). */
export async function leaseCall(proxyUrl: string, clientKey: string, body: unknown): Promise<LeaseAnswer> {
  const res = await fetch(`${proxyUrl}/api/v1/session-leases`, {
    method: 'POST',
    headers: { authorization: `Bearer ${clientKey}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

/** The headers an inference request presents a lease with. */
export const leaseHeaders = (owner: string, generation: number | string, spelling: 'Switchyard' | 'OmniRoute' = 'Switchyard') => ({
  [`X-${spelling}-Lease-Owner`]: owner,
  [`X-${spelling}-Lease-Generation`]: String(generation),
});
