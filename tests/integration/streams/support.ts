// Shared set-up for the stream-resilience suites: the real engine on a fake clock (watchdog
// deadlines fire when a test advances it, never by waiting), one fake upstream whose streams the
// tests write frame by frame (LiveStream), the real SDK clients of all three protocols, and readers
// for the request log, a connection's cooldown entry and a provider's breaker.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ConnectionCreateInput } from '../../../src/shared/contract';
import type { ConnectionView, RequestLogEntry } from '../../../src/shared/model';
import { FakeClock } from '../../support/fakeClock';
import { FakeUpstream, LiveStream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

export const SELECTED = 'x-switchyard-selected-connection-id';
export const MODEL = 'claude-stream';
export const CHAT_MODEL = 'gpt-stream';

export interface StreamRig {
  fake: FakeUpstream;
  t: TestEngine;
  clock: FakeClock;
  anthropic: Anthropic;
  openai: OpenAI;
  /** An Anthropic-protocol connection on the fake with this key. */
  addAnthropic(name: string, key: string, extra?: Partial<ConnectionCreateInput>): Promise<ConnectionView>;
  /** An OpenAI-protocol connection on the fake (kind openai: it serves /responses natively). */
  addOpenAI(name: string, key: string, extra?: Partial<ConnectionCreateInput>): Promise<ConnectionView>;
  /** Saves resilience settings (nested or dotted keys). */
  settings(patch: Record<string, unknown>): Promise<void>;
  /** A live stream scripted for the next request with this key. */
  live(key: string): LiveStream;
  /** The newest request-log entry for a requested model. */
  logOf(model: string, pred?: (e: RequestLogEntry) => boolean): Promise<RequestLogEntry>;
  cooldownOf(id: string): Promise<{ status: string; remainingMs: number; lastErrorType: string | null; lastError: string | null }>;
  breakerWindow(provider: string): Promise<{ failures: number; windowOutcomes: number }>;
  /** Lets pending I/O run (sockets, the engine's event loop turns): never a timing assertion. */
  settle(ms?: number): Promise<void>;
}

export function streamRigPerTest() {
  const fake = new FakeUpstream();
  let rig: StreamRig | null = null;
  beforeAll(() => fake.listen());
  afterEach(async () => {
    await rig?.t.stop();
    rig = null;
    fake.reset();
  });
  afterAll(() => fake.close());
  return {
    fake,
    async start(o: { env?: Record<string, string> } = {}): Promise<StreamRig> {
      const clock = new FakeClock();
      const t = await startTestEngine({ env: o.env, engine: { clock } });
      const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
      const openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
      const r: StreamRig = {
        fake,
        t,
        clock,
        anthropic,
        openai,
        addAnthropic: (name, key, extra = {}) => t.addConnection({ name, kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: key, ...extra } as ConnectionCreateInput),
        addOpenAI: (name, key, extra = {}) => t.addConnection({ name, kind: 'openai', baseUrl: fake.openaiUrl, secret: key, ...extra } as ConnectionCreateInput),
        async settings(patch) {
          await t.api.patchResilience({ patch });
        },
        live(key) {
          const s = new LiveStream();
          fake.script({ key }, [{ live: s }], { repeatLast: false });
          return s;
        },
        async logOf(model, pred = () => true) {
          for (let i = 0; i < 200; i++) {
            const e = (await t.api.listLogs({ limit: 50 })).entries.find((x) => x.requestedModel === model && pred(x));
            if (e) return e;
            await new Promise((res) => setTimeout(res, 20));
          }
          throw new Error(`no request-log entry for ${model}`);
        },
        async cooldownOf(id) {
          const view = await t.api.listCooldowns({});
          const e = view.connections.find((c) => c.connectionId === id);
          if (!e) throw new Error(`no cooldown entry for ${id}`);
          return e;
        },
        async breakerWindow(provider) {
          const b = (await t.api.getHealth()).breakers.find((x) => x.provider === provider);
          if (!b) throw new Error(`no breaker for ${provider}`);
          return { failures: b.failures, windowOutcomes: b.windowOutcomes };
        },
        settle: (ms = 30) => new Promise((res) => setTimeout(res, ms)),
      };
      rig = r;
      return r;
    },
  };
}

/** Resolves when `cond` holds, polling real time (I/O between the fake, the proxy and the client). */
export async function until(cond: () => boolean, what = 'condition', timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Text pieces "w0 w1 … w(n-1) " as tokens. */
export const words = (from: number, to: number, prefix = 'w'): string[] => Array.from({ length: to - from }, (_, i) => `${prefix}${from + i} `);

/** Outcome of an Anthropic stream read with the SDK's accumulator. */
export interface AnthropicRead {
  text: string;
  final: Anthropic.Message | null;
  error: unknown;
  events: string[];
}

/** Streams one /v1/messages request with the SDK and reports what its accumulator saw. */
export function readAnthropic(
  client: Anthropic,
  body: Partial<Anthropic.MessageStreamParams> = {},
  headers: Record<string, string> = {},
): { done: Promise<AnthropicRead>; stream: ReturnType<Anthropic['messages']['stream']>; seen: () => string; events: string[] } {
  const stream = client.messages.stream({ model: MODEL, max_tokens: 200, messages: [{ role: 'user', content: 'Write the words.' }], ...body } as Anthropic.MessageStreamParams, { headers });
  const events: string[] = [];
  let text = '';
  stream.on('streamEvent', (e) => events.push(e.type));
  stream.on('text', (t) => (text += t));
  stream.on('error', () => {});
  const done = stream.finalMessage().then(
    (final) => ({ text, final, error: null, events }),
    (error: unknown) => ({ text, final: null, error, events }),
  );
  return { done, stream, seen: () => text, events };
}

/** The final text of an Anthropic message (its text blocks joined). */
export const textOf = (m: Anthropic.Message | null): string =>
  (m?.content ?? []).map((b) => (b.type === 'text' ? b.text : '')).join('');
