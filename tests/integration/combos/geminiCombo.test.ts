// "Test combo" on a combo whose first target is a Google AI Studio (Gemini) connection: the test is
// sent as Gemini CLI sends it (generateContent, the client key in Google's header) and served
// natively, also for a combo name holding "/" and ":"; a combo mixing Gemini with another protocol
// names both in its warning.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

const GKEY = 'AIzaSy-combo-gemini-Kd8fJ2';
const AKEY = 'sk-combo-alpha-Mn3bV7';

describe('a combo on a Gemini connection', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine({ env: { RATE_LIMIT_AUTO_ENABLE: 'false' } });
    await t.addConnection({ name: 'AI Studio', kind: 'gemini', baseUrl: fake.geminiUrl, secret: GKEY, models: ['gemini-2.5-flash'], passthroughModels: false });
    await t.addConnection({ name: 'Alpha', kind: 'anthropic-compatible', provider: 'alpha', baseUrl: fake.anthropicUrl, secret: AKEY, models: ['model-x'], passthroughModels: false });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it('is tested with a Gemini request, served natively by the Gemini target', async () => {
    const { combo, warnings } = await t.api.createCombo({
      name: 'gem-pool',
      targets: [
        { provider: 'gemini', model: 'gemini-2.5-flash' },
        { provider: 'alpha', model: 'model-x' },
      ],
    });
    expect(warnings.join(' ')).toContain('The targets speak both the Anthropic and the Gemini protocol');
    const r = await t.api.testCombo({ id: combo.id });
    expect(r).toMatchObject({ ok: true, status: 200, connectionName: 'AI Studio', servedModel: 'gemini-2.5-flash' });
    const [up] = fake.requestsFor({ key: GKEY });
    expect(up).toMatchObject({ path: '/v1beta/models/gemini-2.5-flash:generateContent', gemini: { method: 'generateContent', sse: false } });
    expect(fake.requestsFor({ key: AKEY })).toHaveLength(0);
    const log = (await t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(log.protocol).toBe('gemini');
    expect(log.attempts[0]?.translated ?? null).toBeNull();
  });

  it('names a combo holding "/" and ":" in the path so the proxy reads it back whole', async () => {
    const { combo } = await t.api.createCombo({ name: 'team/fast:v2', targets: [{ provider: 'gemini', model: 'gemini-2.5-flash' }] });
    const r = await t.api.testCombo({ id: combo.id });
    expect(r).toMatchObject({ ok: true, connectionName: 'AI Studio', servedModel: 'gemini-2.5-flash' });
  });
});
