// Shared set-up for the Gemini client suites: the real engine on a fake clock, one fake upstream
// for the file, and the real @google/genai SDK pointed at the proxy (its base URL, the client key as
// its API key). Helpers add a Chat, an Anthropic and a native Gemini connection on the fake, read
// the request log and the model lockouts, and collect an SDK stream.
import { GoogleGenAI, type GenerateContentResponse } from '@google/genai';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ConnectionCreateInput } from '../../../src/shared/contract';
import type { ConnectionView, RequestLogEntry } from '../../../src/shared/model';
import { FakeClock } from '../../support/fakeClock';
import { FakeUpstream, LiveStream, type RecordedRequest } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

export const SELECTED = 'x-switchyard-selected-connection-id';

export type TargetShape = 'chat' | 'anthropic' | 'gemini';

export interface GeminiRig {
  fake: FakeUpstream;
  t: TestEngine;
  clock: FakeClock;
  /** The real SDK, with the client key as its API key and the proxy as its base URL. */
  ai: GoogleGenAI;
  /** A connection of this shape on the fake with this key. */
  add(shape: TargetShape, name: string, key: string, extra?: Partial<ConnectionCreateInput>): Promise<ConnectionView>;
  settings(patch: Record<string, unknown>): Promise<void>;
  /** A live stream scripted for the next request with this key. */
  live(key: string): LiveStream;
  /** The newest request-log entry for a requested model. */
  logOf(model: string, pred?: (e: RequestLogEntry) => boolean): Promise<RequestLogEntry>;
  lockouts(): Promise<{ connectionId: string; model: string; lockedAt: number; expiresAt: number; origin: string; reason: string | null }[]>;
}

export function geminiRigPerTest() {
  const fake = new FakeUpstream();
  let rig: GeminiRig | null = null;
  beforeAll(() => fake.listen());
  afterEach(async () => {
    await rig?.t.stop();
    rig = null;
    fake.reset();
  });
  afterAll(() => fake.close());
  return {
    fake,
    async start(o: { env?: Record<string, string> } = {}): Promise<GeminiRig> {
      const clock = new FakeClock();
      const t = await startTestEngine({ env: o.env, engine: { clock } });
      const ai = sdkFor(t.proxyUrl, t.clientKey);
      const r: GeminiRig = {
        fake,
        t,
        clock,
        ai,
        add(shape, name, key, extra = {}) {
          const base =
            shape === 'chat'
              ? { kind: 'openai-compatible', provider: 'acme', baseUrl: fake.openaiUrl }
              : shape === 'anthropic'
                ? { kind: 'anthropic', baseUrl: fake.anthropicUrl }
                : { kind: 'gemini', baseUrl: fake.geminiUrl };
          return t.addConnection({ name, secret: key, ...base, ...extra } as ConnectionCreateInput);
        },
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
        async lockouts() {
          return (await t.api.listModelCooldowns({})).lockouts as never;
        },
      };
      rig = r;
      return r;
    },
  };
}

/** The SDK as Gemini CLI builds it: an API key and a base URL (it retries nothing unless told to). */
export function sdkFor(proxyUrl: string, apiKey: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey, httpOptions: { baseUrl: proxyUrl } });
}

/** What an SDK stream gave: its chunks, the text joined, the function calls seen. */
export interface StreamRead {
  chunks: GenerateContentResponse[];
  text: string;
  calls: { id?: string; name?: string; args?: Record<string, unknown> }[];
  finish: string | undefined;
}

export async function readStream(it: AsyncGenerator<GenerateContentResponse>): Promise<StreamRead> {
  const out: StreamRead = { chunks: [], text: '', calls: [], finish: undefined };
  for await (const ch of it) {
    out.chunks.push(ch);
    out.text += ch.text ?? '';
    for (const c of ch.functionCalls ?? []) out.calls.push(c as StreamRead['calls'][number]);
    out.finish = ch.candidates?.[0]?.finishReason ?? out.finish;
  }
  return out;
}

/** The one weather tool, as a Gemini functionDeclaration. */
export const WEATHER_DECL = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** The requests the fake got that are real turns (not count_tokens or model lists). */
export const turns = (reqs: RecordedRequest[]) =>
  reqs.filter((r) => r.path === '/v1/chat/completions' || r.path === '/v1/messages' || (r.gemini !== null && r.gemini.method !== 'countTokens'));
