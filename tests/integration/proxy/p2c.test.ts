// Power-of-two-choices selection with the latency signal: once both connections have three
// samples, a weight above 0 sends traffic to the one that answers faster; weight 0 does not.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView } from '../../../src/shared/model';
import { anthropicMessage, FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

describe('p2c selection', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  let slow: ConnectionView;
  let fast: ConnectionView;
  let client: Anthropic;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    fake.script({ key: 'sk-ant-slow-ssssssssssss' }, [{ delayMs: 150, json: anthropicMessage('claude-x') }]);
    t = await startTestEngine();
    slow = await t.addConnection({ name: 'Slow', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-slow-ssssssssssss' });
    fast = await t.addConnection({ name: 'Fast', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-fast-ffffffffffff' });
    client = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const pick = async () => {
    const { response } = await client.messages
      .create({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    return response.headers.get('x-switchyard-selected-connection-id');
  };

  it('prefers the faster connection once both have three samples and the weight is on', async () => {
    // Warm up with round-robin: three samples on each.
    const warm = [];
    for (let i = 0; i < 6; i++) warm.push(await pick());
    expect(warm.filter((id) => id === slow.id)).toHaveLength(3);

    await t.api.patchSettings({ patch: { 'routing.strategy': 'p2c', 'p2cLatency.weight': 20 } });
    const chosen = new Set<string | null>();
    for (let i = 0; i < 8; i++) chosen.add(await pick());
    expect(chosen).toEqual(new Set([fast.id]));
  });

  it('with weight 0 the slow connection still gets traffic', async () => {
    await t.api.patchSettings({ patch: { 'p2cLatency.weight': 0 } });
    const chosen = new Set<string | null>();
    for (let i = 0; i < 30 && chosen.size < 2; i++) chosen.add(await pick());
    expect(chosen).toEqual(new Set([fast.id, slow.id]));
  });
});
