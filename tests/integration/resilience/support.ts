// Shared set-up for the resilience integration tests: the real engine on a fake clock (so cooldowns
// and breaker timeouts are exact and never waited for), a fake upstream, and an Anthropic SDK
// client whose answers are reduced to what the tests observe (status, selected connection, hint).
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ConnectionCreateInput } from '../../../src/shared/contract';
import type { ConnectionView } from '../../../src/shared/model';
import { FakeClock } from '../../support/fakeClock';
import { FakeUpstream, type ScriptedResponse } from '../../support/fakeUpstream';
import { ONE_ANSWER_ENV, startTestEngine, type TestEngine } from '../../support/harness';

export const SELECTED = 'x-switchyard-selected-connection-id';

export interface Rig {
  fake: FakeUpstream;
  t: TestEngine;
  clock: FakeClock;
  client: Anthropic;
  /** Adds an Anthropic-protocol connection on the fake upstream with this key. */
  add(name: string, key: string, extra?: Partial<ConnectionCreateInput>): Promise<ConnectionView>;
  stop(): Promise<void>;
}

/**
 * The suites on this rig test what each layer does with one upstream answer: the same-target retry
 * and the plain-model cooldown waits are off (ONE_ANSWER_ENV) unless a test asks for the engine's
 * defaults (`defaults: true`, sameTargetRetry.test.ts, plainCooldownWait.test.ts).
 */
export async function startRig(
  o: { env?: Record<string, string>; clock?: FakeClock; dataDir?: string; fake?: FakeUpstream; defaults?: boolean } = {},
): Promise<Rig> {
  const fake = o.fake ?? (await FakeUpstream.start());
  const clock = o.clock ?? new FakeClock();
  const env = o.defaults ? o.env : { ...ONE_ANSWER_ENV, ...o.env };
  const t = await startTestEngine({ env, engine: { clock }, dataDir: o.dataDir, keepDataDir: o.dataDir !== undefined });
  const client = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
  return {
    fake,
    t,
    clock,
    client,
    add: (name, key, extra = {}) =>
      t.addConnection({ name, kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: key, ...extra } as ConnectionCreateInput),
    stop: once(async () => {
      await t.stop();
      if (!o.fake) await fake.close();
    }),
  };
}

/**
 * Registers the usual lifecycle inside a describe(): one fake upstream for the file (listening
 * from beforeAll), and a fresh engine rig per test from `startRig()`, stopped after that test with
 * the fake's scripts reset.
 */
export function rigPerTest() {
  const fake = new FakeUpstream();
  let rig: Rig | null = null;
  beforeAll(() => fake.listen());
  afterEach(async () => {
    await rig?.stop();
    rig = null;
    fake.reset();
  });
  afterAll(() => fake.close());
  return {
    fake,
    startRig: async (o: Omit<Parameters<typeof startRig>[0] & object, 'fake'> = {}) => (rig = await startRig({ fake, ...o })),
    /** The rig started last (stopped by the hook after the test unless already stopped). */
    current: () => rig,
  };
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | null = null;
  return () => (p ??= fn());
}

export interface Answer {
  status: number;
  selected: string | null;
  retryAfter: string | null;
  code: string | null;
  diagnostics: { excluded: { connectionName: string; reason: string; retryAfterSec: number | null }[] } | null;
}

/** One /v1/messages request through the proxy with the real SDK. */
export async function ask(client: Anthropic, model = 'claude-x'): Promise<Answer> {
  try {
    const { response } = await client.messages
      .create({ model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    return { status: response.status, selected: response.headers.get(SELECTED), retryAfter: null, code: null, diagnostics: null };
  } catch (e) {
    if (!(e instanceof Anthropic.APIError) || e.status === undefined) throw e;
    const err = (e.error as { error?: { code?: string; diagnostics?: Answer['diagnostics'] } } | undefined)?.error;
    return {
      status: e.status,
      selected: e.headers?.get(SELECTED) ?? null,
      retryAfter: e.headers?.get('retry-after') ?? null,
      code: err?.code ?? null,
      diagnostics: err?.diagnostics ?? null,
    };
  }
}

export const anthropicError = (status: number, type: string, message: string, headers: Record<string, string> = {}): ScriptedResponse => ({
  status,
  headers,
  json: { type: 'error', error: { type, message } },
});

export const rateLimited = (headers: Record<string, string> = {}, message = 'Number of requests has exceeded your rate limit') =>
  anthropicError(429, 'rate_limit_error', message, headers);

/**
 * A 429 that says the account is spent (a rejected unified limit): it cools the whole connection.
 * A plain 429 without such a signal rests only the model that was asked for (issue 9).
 */
export const ACCOUNT_WIDE = { 'anthropic-ratelimit-unified-status': 'rejected' } as const;
export const accountLimited = (headers: Record<string, string> = {}, message?: string) => rateLimited({ ...ACCOUNT_WIDE, ...headers }, message);

export const unavailable = () => anthropicError(503, 'overloaded_error', 'service unavailable');

/** The cooldown-manager entry of one connection. */
export async function cooldownOf(t: TestEngine, id: string) {
  const view = await t.api.listCooldowns({});
  const e = view.connections.find((c) => c.connectionId === id);
  if (!e) throw new Error(`no cooldown entry for ${id}`);
  return e;
}

export async function breakerOf(t: TestEngine, provider: string) {
  const health = await t.api.getHealth();
  const b = health.breakers.find((x) => x.provider === provider);
  if (!b) throw new Error(`no breaker for ${provider}`);
  return b;
}

/** Keys the fake upstream saw, in order. */
export const keysSeen = (fake: FakeUpstream) => fake.requests.map((r) => r.key);
