// Shared set-up for the combo integration tests: the real engine on a fake clock, one fake
// upstream, and providers "alpha" and "beta" (Anthropic protocol, one key each, each listing its
// own models) plus "gamma" (OpenAI protocol). Queue protection is off so these tests are about
// routing, not the request queue.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ComboCreateInput } from '../../../src/shared/contract';
import type { ComboView, ConnectionView, RequestLogEntry } from '../../../src/shared/model';
import { anthropicError, type Rig } from '../resilience/support';

export const KEY_A = 'key-alpha-00000001';
export const KEY_B = 'key-beta-000000002';
export const KEY_C = 'key-gamma-00000003';

export interface ComboRig {
  rig: Rig;
  a: ConnectionView;
  b: ConnectionView;
  c: ConnectionView;
  openai: OpenAI;
  combo(input: Partial<ComboCreateInput> & Pick<ComboCreateInput, 'targets'>): Promise<ComboView>;
  lastLog(): Promise<RequestLogEntry>;
}

export async function comboRig(rig: Rig): Promise<ComboRig> {
  const a = await rig.add('Alpha', KEY_A, { kind: 'anthropic-compatible', provider: 'alpha', models: ['model-x', 'model-s'], passthroughModels: false });
  const b = await rig.add('Beta', KEY_B, { kind: 'anthropic-compatible', provider: 'beta', models: ['model-y', 'model-s', 'model-l'], passthroughModels: false });
  const c = await rig.t.addConnection({ name: 'Gamma', kind: 'openai-compatible', provider: 'gamma', baseUrl: rig.fake.openaiUrl, secret: KEY_C, models: ['model-z'] });
  const openai = new OpenAI({ baseURL: `${rig.t.proxyUrl}/v1`, apiKey: rig.t.clientKey, maxRetries: 0 });
  return {
    rig,
    a,
    b,
    c,
    openai,
    combo: async (input) => (await rig.t.api.createCombo({ name: 'pool', ...input })).combo,
    lastLog: async () => (await rig.t.api.listLogs({ limit: 1 })).entries[0]!,
  };
}

export const ENV = { RATE_LIMIT_AUTO_ENABLE: 'false' };

export interface Served {
  status: number;
  connection: string | null;
  servedModel: string | null;
  combo: string | null;
  bodyModel: string | null;
  retryAfter: string | null;
  error: { type?: string; code?: string; retry_after?: number; reset_at?: string; diagnostics?: Record<string, any>; message?: string } | null;
}

/** One Messages call through the proxy with the real SDK, reduced to what the tests look at. */
export async function send(client: Anthropic, model = 'pool', extra: Record<string, unknown> = {}): Promise<Served> {
  try {
    const { data, response } = await client.messages
      .create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], ...extra })
      .withResponse();
    return {
      status: response.status,
      connection: response.headers.get('x-switchyard-selected-connection-id'),
      servedModel: response.headers.get('x-switchyard-served-model'),
      combo: response.headers.get('x-switchyard-combo'),
      bodyModel: data.model,
      retryAfter: null,
      error: null,
    };
  } catch (e) {
    if (!(e instanceof Anthropic.APIError) || e.status === undefined) throw e;
    const err = (e.error as { error?: Served['error'] } | undefined)?.error ?? null;
    return {
      status: e.status,
      connection: e.headers?.get('x-switchyard-selected-connection-id') ?? null,
      servedModel: e.headers?.get('x-switchyard-served-model') ?? null,
      combo: e.headers?.get('x-switchyard-combo') ?? null,
      bodyModel: null,
      retryAfter: e.headers?.get('retry-after') ?? null,
      error: err,
    };
  }
}

export const overloaded = () => anthropicError(503, 'overloaded_error', 'service unavailable');
export const tooLong = (needed: number, max: number) => anthropicError(400, 'invalid_request_error', `prompt is too long: ${needed} tokens > ${max} maximum`);

/** Resolves once the engine logged that a request is waiting out a cooldown. */
export async function waiting(rig: Rig, count = 1): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (rig.t.logs.lines.filter((l) => l.includes('combo.waiting')).length < count) {
    if (Date.now() > deadline) throw new Error(`no combo.waiting line: ${rig.t.logs.lines.slice(-5).join('')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
