// Shared set-up for the translation suites: one fake upstream and one engine per file, the real
// SDK clients pointed at the proxy, and a reader for the request log's newest entry of a model.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { RequestLogEntry } from '../../../src/shared/model';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

export interface Suite {
  fake: FakeUpstream;
  t: TestEngine;
  anthropic: Anthropic;
  openai: OpenAI;
  /** The newest request-log entry for this requested model (the log is written in batches). */
  logOf(model: string): Promise<RequestLogEntry>;
}

export const WEATHER_TOOL_ANTHROPIC = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

export const WEATHER_TOOL_CHAT = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER_TOOL_ANTHROPIC.input_schema },
};

export const WEATHER_TOOL_RESPONSES = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: WEATHER_TOOL_ANTHROPIC.input_schema,
  strict: false,
};

/** Registers beforeAll/afterAll/afterEach for one suite; the returned object is filled in beforeAll. */
export function translationSuite(): Suite {
  const s = {} as Suite;
  beforeAll(async () => {
    s.fake = await FakeUpstream.start();
    s.t = await startTestEngine();
    s.anthropic = new Anthropic({ baseURL: s.t.proxyUrl, apiKey: s.t.clientKey, maxRetries: 0 });
    s.openai = new OpenAI({ baseURL: `${s.t.proxyUrl}/v1`, apiKey: s.t.clientKey, maxRetries: 0 });
    s.logOf = async (model: string) => {
      for (let i = 0; i < 100; i++) {
        const e = (await s.t.api.listLogs({ limit: 50 })).entries.find((x) => x.requestedModel === model);
        if (e) return e;
        await new Promise((r) => setTimeout(r, 30));
      }
      throw new Error(`no request-log entry for ${model}`);
    };
  });
  afterEach(() => s.fake.reset());
  afterAll(async () => {
    await s.t.stop();
    await s.fake.close();
  });
  return s;
}
