// Helpers for admission integration tests: an OpenAI client on the proxy, a call that reports the
// outcome (status, code, Retry-After, selected connection) instead of throwing, and a poll on the
// admission view (GET /api/rate-limits).
import OpenAI from 'openai';
import type { AdmissionView } from '../../../src/shared/model';
import type { TestEngine } from '../../support/harness';

export interface Outcome {
  status: number;
  code: string | null;
  retryAfter: number | null;
  text: string | null;
  connectionId: string | null;
}

export const openaiClient = (t: TestEngine) => new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });

/** One chat completion through the proxy; never throws for an HTTP error. */
export async function ask(client: OpenAI, model: string, opts: { signal?: AbortSignal } = {}): Promise<Outcome> {
  try {
    const { data, response } = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'hi' }] }, { signal: opts.signal })
      .withResponse();
    return {
      status: response.status,
      code: null,
      retryAfter: null,
      text: data.choices[0]?.message.content ?? null,
      connectionId: response.headers.get('x-switchyard-selected-connection-id'),
    };
  } catch (err) {
    if (err instanceof OpenAI.APIError && err.status !== undefined) {
      const ra = err.headers?.get('retry-after');
      return {
        status: err.status,
        code: err.code ?? null,
        retryAfter: ra ? Number(ra) : null,
        text: null,
        connectionId: err.headers?.get('x-switchyard-selected-connection-id') ?? null,
      };
    }
    throw err;
  }
}

export async function admissionOf(t: TestEngine, connectionId: string): Promise<AdmissionView> {
  const v = (await t.api.getAdmission()).find((x) => x.connectionId === connectionId);
  if (!v) throw new Error(`no admission view for ${connectionId}`);
  return v;
}

/** Polls GET /api/rate-limits until the connection's view satisfies `cond` (5 s at most). */
export async function waitForAdmission(
  t: TestEngine,
  connectionId: string,
  cond: (v: AdmissionView) => boolean,
  timeoutMs = 5_000,
): Promise<AdmissionView> {
  const start = Date.now();
  for (;;) {
    const v = await admissionOf(t, connectionId);
    if (cond(v)) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`admission view never matched: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A 429 whose Retry-After-ms header asks for `ms` of spacing. It says the whole key is out of
 * requests (`x-ratelimit-remaining: 0`), so it holds the connection's queue, not one model's.
 */
export const rateLimited = (ms: number, message = 'slow down') => ({
  status: 429,
  headers: { 'retry-after-ms': String(ms), 'x-ratelimit-remaining': '0' },
  json: { error: { type: 'rate_limit_error', message } },
});

/** A 429 for one model only (nothing says the key is spent): it holds only that model's requests. */
export const modelRateLimited = (ms: number, message = 'slow down') => ({
  status: 429,
  headers: { 'retry-after-ms': String(ms) },
  json: { error: { type: 'rate_limit_error', message } },
});
