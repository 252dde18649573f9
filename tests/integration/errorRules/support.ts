// Shared set-up for the provider error-rule integration tests: the real engine on a fake clock
// (with an optional rule registry), one fake upstream per file, and the Anthropic SDK client.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { ErrorRuleRegistry } from '../../../src/main/engine/resilience/errorRuleRegistry';
import type { ConnectionCreateInput } from '../../../src/shared/contract';
import type { ConnectionView } from '../../../src/shared/model';
import { FakeClock } from '../../support/fakeClock';
import { FakeUpstream, type ScriptedResponse } from '../../support/fakeUpstream';
import { ONE_ANSWER_ENV, startTestEngine, type TestEngine } from '../../support/harness';

export { ask, cooldownOf } from '../resilience/support';

export interface RuleRig {
  t: TestEngine;
  clock: FakeClock;
  client: Anthropic;
  /** An Anthropic-protocol connection of `provider` on the fake upstream with this key. */
  add(name: string, provider: string, key: string, extra?: Partial<ConnectionCreateInput>): Promise<ConnectionView>;
  /** PATCH /api/settings. */
  set(patch: Record<string, unknown>): Promise<unknown>;
  lockouts(): Promise<Awaited<ReturnType<TestEngine['api']['listModelCooldowns']>>['lockouts']>;
}

export interface RigOptions {
  clock?: FakeClock;
  errorRules?: ErrorRuleRegistry;
  dataDir?: string;
}

export function rulesRigPerTest() {
  const fake = new FakeUpstream();
  let engines: TestEngine[] = [];
  beforeAll(() => fake.listen());
  afterEach(async () => {
    for (const t of engines) await t.stop();
    engines = [];
    fake.reset();
  });
  afterAll(() => fake.close());
  const start = async (o: RigOptions = {}): Promise<RuleRig> => {
    const clock = o.clock ?? new FakeClock();
    const t = await startTestEngine({
      // One upstream answer per attempt: the rules' effect is what these tests read.
      env: ONE_ANSWER_ENV,
      engine: { clock, ...(o.errorRules ? { errorRules: o.errorRules } : {}) },
      dataDir: o.dataDir,
      keepDataDir: o.dataDir !== undefined,
    });
    engines.push(t);
    return {
      t,
      clock,
      client: new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 }),
      add: (name, provider, key, extra = {}) =>
        t.addConnection({ name, kind: 'anthropic-compatible', provider, baseUrl: fake.anthropicUrl, secret: key, ...extra } as ConnectionCreateInput),
      set: (patch) => t.api.patchSettings({ patch }),
      lockouts: async () => (await t.api.listModelCooldowns()).lockouts,
    };
  };
  /** Stops one engine early (e.g. to restart on the same data dir). */
  const stop = async (r: RuleRig) => {
    engines = engines.filter((t) => t !== r.t);
    await r.t.stop();
  };
  return { fake, start, stop };
}

/** An upstream error in the OpenAI-compatible shape gateways such as agentrouter use. */
export const gatewayError = (status: number, message: string, headers: Record<string, string> = {}): ScriptedResponse => ({
  status,
  headers,
  json: { error: { message, type: 'new_api_error' } },
});

/** What the client was told, for a relayed error: status, Retry-After and the body text. */
export async function rawAsk(t: TestEngine, model: string): Promise<{ status: number; retryAfter: string | null; body: string; selected: string | null }> {
  const res = await fetch(`${t.proxyUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': t.clientKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: await res.text(),
    selected: res.headers.get('x-switchyard-selected-connection-id'),
  };
}
