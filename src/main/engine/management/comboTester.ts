// "Test combo": one small request through the local proxy to the combo, as an agent would send it,
// so it takes the real route (strategy, resilience, failover) and lands in the request log. The
// protocol is the one its first usable target speaks (Anthropic, OpenAI Chat or Gemini); the answer
// says which target served it.
import { modelFromHeader } from '../../../shared/modelIds';
import type { ComboTestResult, WireProtocol } from '../../../shared/model';
import type { ClientKeyService } from '../auth/clientKeys';
import type { Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import type { ComboRecord } from '../store/combosRepo';

export interface ComboTesterDeps {
  clock: Clock;
  registry: ConnectionRegistry;
  clientKeys: ClientKeyService;
  /** `localUrl`: how this process reaches the proxy (default http://127.0.0.1:<port>). */
  proxy: () => { port: number | null; localUrl?: string | null };
}

const TEST_TIMEOUT_MS = 60_000;

export async function testCombo(d: ComboTesterDeps, combo: ComboRecord): Promise<ComboTestResult> {
  const fail = (message: string, status = 0): ComboTestResult => ({
    ok: false,
    status,
    connectionId: null,
    connectionName: null,
    servedModel: null,
    latencyMs: 0,
    requestId: null,
    message,
  });
  const { port, localUrl } = d.proxy();
  if (port === null) return fail('the proxy is not listening');
  const key = d.clientKeys.list().find((k) => k.revokedAt === null);
  if (!key) return fail('there is no active client key to send the test with');
  const conns = d.registry.all().filter((c) => c.enabled);
  const first = combo.targets
    .map((t) => (t.connectionId ? conns.find((c) => c.id === t.connectionId) : conns.find((c) => c.provider === t.provider)))
    .find((c) => c !== undefined);
  if (!first) return fail('no target of this combo has an enabled connection');
  const secret = d.clientKeys.reveal(key.id);
  const { path, headers, body } = comboTestRequest(first.protocol, combo.name, secret);
  const url = `${localUrl ?? `http://127.0.0.1:${port}`}${path}`;

  const controller = new AbortController();
  const cancel = d.clock.setTimer(() => controller.abort(), TEST_TIMEOUT_MS);
  const t0 = d.clock.monotonic();
  try {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: controller.signal });
    const text = await res.text();
    const latencyMs = Math.round(d.clock.monotonic() - t0);
    const connectionId = res.headers.get('x-switchyard-selected-connection-id');
    const servedHeader = res.headers.get('x-switchyard-served-model');
    const servedModel = servedHeader === null ? null : modelFromHeader(servedHeader);
    const connectionName = connectionId ? (d.registry.get(connectionId)?.name ?? null) : null;
    const base = { status: res.status, connectionId, connectionName, servedModel, latencyMs, requestId: res.headers.get('x-switchyard-request-id') };
    if (res.ok) return { ok: true, ...base, message: `served by ${connectionName ?? 'a connection'} with ${servedModel ?? 'the model'} in ${latencyMs} ms` };
    return { ok: false, ...base, message: `${res.status}: ${errorText(text)}` };
  } catch (err) {
    return fail(controller.signal.aborted ? `no answer within ${TEST_TIMEOUT_MS / 1000} s` : (err as Error).message);
  } finally {
    cancel();
  }
}

/**
 * The test request in the protocol its first target speaks, as that protocol's agents send it:
 * Anthropic Messages, Chat Completions, or Gemini's generateContent (the model named in the path,
 * the client key in Google's key header).
 */
export function comboTestRequest(protocol: WireProtocol, comboName: string, secret: string): { path: string; headers: Record<string, string>; body: unknown } {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (protocol === 'gemini') {
    headers['x-goog-api-key'] = secret;
    return {
      path: `/v1beta/models/${encodeURIComponent(comboName)}:generateContent`,
      headers,
      body: { contents: [{ role: 'user', parts: [{ text: PROMPT }] }], generationConfig: { maxOutputTokens: 16 } },
    };
  }
  const body = { model: comboName, max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] };
  if (protocol === 'anthropic') {
    headers['x-api-key'] = secret;
    headers['anthropic-version'] = '2023-06-01';
    return { path: '/v1/messages', headers, body };
  }
  headers.authorization = `Bearer ${secret}`;
  return { path: '/v1/chat/completions', headers, body };
}

const PROMPT = 'Reply with the word OK.';

function errorText(text: string): string {
  try {
    const j = JSON.parse(text) as { error?: { message?: string } | string };
    return (typeof j.error === 'string' ? j.error : j.error?.message) ?? text.slice(0, 300);
  } catch {
    return text.slice(0, 300);
  }
}
