// Which connections the request queue protects (R-RQ-23..29): the auto-enable safety net covers
// API-key connections, RATE_LIMIT_AUTO_ENABLE beats the saved setting, mode "on" (SPEC's
// rateLimitProtection true) always protects, "auto" (the old false) follows the safety net, "off"
// (issue 22) opts a connection out of it, POST /api/rate-limits is the only write path (mode, or
// the old boolean enabled), and PUT/PATCH /api/providers/:id never change it. Default settings
// throttle nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView } from '../../../src/shared/model';
import { FakeUpstream, openaiCompletion } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { admissionOf, ask, openaiClient, waitForAdmission } from './support';

const slow = (ms: number) => (req: { model: string | null }) => ({ delayMs: ms, json: openaiCompletion(req.model ?? 'm') });

async function addConn(t: TestEngine, fake: FakeUpstream, name: string, extra: Record<string, unknown> = {}): Promise<ConnectionView> {
  return t.addConnection({ name, kind: 'openai-compatible', provider: 'acme', baseUrl: fake.openaiUrl, secret: `sk-${name}-xxxxxxxxxxxx`, ...extra });
}

/** Sends n requests at once and reports the most the upstream saw in flight together. */
async function burst(t: TestEngine, fake: FakeUpstream, n: number): Promise<{ statuses: number[]; maxInFlight: number }> {
  fake.maxInFlight = 0;
  const client = openaiClient(t);
  const outs = await Promise.all(Array.from({ length: n }, () => ask(client, 'm')));
  return { statuses: outs.map((o) => o.status), maxInFlight: fake.maxInFlight };
}

describe('queue protection', () => {
  let fake: FakeUpstream;
  let t: TestEngine;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
  });
  afterEach(async () => {
    fake.reset();
    for (const c of await t.api.listConnections()) await t.api.deleteConnection({ id: c.id });
    await t.api.patchResilience({ patch: { requestQueue: { autoEnableApiKeyProviders: null } } });
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  it('default settings impose no rate and no cap: a burst to a protected API-key connection arrives together', async () => {
    const c = await addConn(t, fake, 'healthy', { authClass: 'apikey' });
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: true, protectionSource: 'auto' });
    fake.script({}, [slow(400)]);
    const pending = burst(t, fake, 20);
    await fake.waitFor(() => fake.inFlight === 20);
    const { statuses } = await pending;
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it('an API-key connection is queued automatically: its configured spacing holds a burst back', async () => {
    const c = await addConn(t, fake, 'auto', { authClass: 'apikey', rateLimitOverrides: { minTimeMs: 500 } });
    fake.script({}, [slow(50)]);
    const pending = burst(t, fake, 3);
    await waitForAdmission(t, c.id, (v) => v.queued > 0);
    const { statuses, maxInFlight } = await pending;
    expect(statuses).toEqual([200, 200, 200]);
    expect(maxInFlight).toBe(1);
  });

  it('an OAuth connection is not queued unless protected explicitly through POST /api/rate-limits', async () => {
    const c = await addConn(t, fake, 'oauth', { authClass: 'oauth', rateLimitOverrides: { minTimeMs: 500 } });
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: false, protectionSource: 'off' });
    fake.script({}, [slow(300)]);
    let pending = burst(t, fake, 3);
    await fake.waitFor(() => fake.inFlight === 3);
    await pending;

    const res = await fetch(`${t.managementUrl}/api/rate-limits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ connectionId: c.id, enabled: true }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ connectionId: c.id, rateLimitProtection: true, mode: 'on', protected: true, protectionSource: 'explicit' });
    expect((await t.api.getConnection({ id: c.id })).rateLimitProtection).toBe(true);
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: true, protectionSource: 'explicit' });

    fake.script({}, [slow(50)]);
    pending = burst(t, fake, 3);
    const { maxInFlight } = await pending;
    expect(maxInFlight).toBe(1);
  });

  it('the old boolean enabled: false means automatic, which keeps an API-key connection in the safety net', async () => {
    const c = await addConn(t, fake, 'no-opt-out', { authClass: 'apikey', rateLimitProtection: true });
    expect(c.rateLimitProtectionMode).toBe('on');
    expect((await admissionOf(t, c.id)).protectionSource).toBe('explicit');
    const r = await t.api.setRateLimitProtection({ connectionId: c.id, enabled: false });
    expect(r).toEqual({ connectionId: c.id, rateLimitProtection: false, mode: 'auto', protected: true, protectionSource: 'auto' });
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: true, protectionSource: 'auto', protectionMode: 'auto' });
  });

  it('mode off takes an API-key connection out of the safety net: a burst is no longer spaced', async () => {
    const c = await addConn(t, fake, 'opt-out', { authClass: 'apikey', rateLimitOverrides: { minTimeMs: 500 } });
    expect(c.rateLimitProtectionMode).toBe('auto');
    const r = await t.api.setRateLimitProtection({ connectionId: c.id, mode: 'off' });
    expect(r).toEqual({ connectionId: c.id, rateLimitProtection: false, mode: 'off', protected: false, protectionSource: 'off' });
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: false, protectionMode: 'off' });
    expect((await t.api.getConnection({ id: c.id })).rateLimitProtectionMode).toBe('off');
    fake.script({}, [slow(300)]);
    const pending = burst(t, fake, 3);
    await fake.waitFor(() => fake.inFlight === 3);
    await pending;
    // Back to automatic: the safety net applies again.
    await t.api.setRateLimitProtection({ connectionId: c.id, mode: 'auto' });
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: true, protectionSource: 'auto' });
  });

  it('POST /api/rate-limits takes mode or enabled, not both and not neither, and names a bad mode', async () => {
    const c = await addConn(t, fake, 'bad-input', { authClass: 'apikey' });
    const post = (body: unknown) =>
      fetch(`${t.managementUrl}/api/rate-limits`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (const body of [{ connectionId: c.id }, { connectionId: c.id, enabled: true, mode: 'on' }, { connectionId: c.id, mode: 'sometimes' }]) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(JSON.stringify(await res.json())).toContain('mode');
    }
    expect((await t.api.getConnection({ id: c.id })).rateLimitProtectionMode).toBe('auto');
  });

  it('a connection can be created with mode off', async () => {
    const c = await addConn(t, fake, 'created-off', { authClass: 'apikey', rateLimitProtectionMode: 'off' });
    expect(c).toMatchObject({ rateLimitProtectionMode: 'off', rateLimitProtection: false });
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: false, protectionSource: 'off' });
  });

  it('only switching the safety net off globally unprotects API-key connections', async () => {
    const c = await addConn(t, fake, 'global-off', { authClass: 'apikey', rateLimitOverrides: { minTimeMs: 500 } });
    await t.api.patchResilience({ patch: { requestQueue: { autoEnableApiKeyProviders: false } } });
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: false, protectionSource: 'off' });
    fake.script({}, [slow(300)]);
    const pending = burst(t, fake, 3);
    await fake.waitFor(() => fake.inFlight === 3);
    await pending;
  });

  it('PUT and PATCH /api/providers/:id never change rateLimitProtection', async () => {
    const c = await addConn(t, fake, 'edits', { authClass: 'oauth' });
    const headers = { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' };
    const put = await fetch(`${t.managementUrl}/api/providers/${c.id}`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ name: 'edits 2', kind: 'openai-compatible', provider: 'acme', authClass: 'oauth', baseUrl: fake.openaiUrl, rateLimitProtection: true }),
    });
    expect(put.status).toBe(200);
    expect(((await put.json()) as ConnectionView).rateLimitProtection).toBe(false);
    const patch = await fetch(`${t.managementUrl}/api/providers/${c.id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ rateLimitProtection: true }),
    });
    expect(patch.status).toBe(200);
    const after = await t.api.getConnection({ id: c.id });
    expect(after).toMatchObject({ name: 'edits 2', rateLimitProtection: false });
    expect((await admissionOf(t, c.id)).protected).toBe(false);

    // And a protected connection stays protected through an edit.
    await t.api.setRateLimitProtection({ connectionId: c.id, enabled: true });
    await t.api.updateConnection({ id: c.id, patch: { name: 'edits 3', rateLimitProtection: false, rateLimitProtectionMode: 'off' } });
    expect(await admissionOf(t, c.id)).toMatchObject({ protected: true, protectionSource: 'explicit' });
  });
});

describe('RATE_LIMIT_AUTO_ENABLE', () => {
  let fake: FakeUpstream;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
  });
  afterAll(async () => {
    await fake.close();
  });

  it('off beats a saved true: API-key connections burst unqueued', async () => {
    const t = await startTestEngine({ env: { RATE_LIMIT_AUTO_ENABLE: 'off' } });
    try {
      await t.api.patchResilience({ patch: { requestQueue: { autoEnableApiKeyProviders: true } } });
      const c = await addConn(t, fake, 'env-off', { authClass: 'apikey', rateLimitOverrides: { minTimeMs: 500 } });
      expect(await admissionOf(t, c.id)).toMatchObject({ protected: false, protectionSource: 'off' });
      fake.script({}, [slow(300)]);
      const pending = burst(t, fake, 3);
      await fake.waitFor(() => fake.inFlight === 3);
      await pending;
    } finally {
      fake.reset();
      await t.stop();
    }
  });

  it('on beats a saved false: API-key connections are queued', async () => {
    const t = await startTestEngine({ env: { RATE_LIMIT_AUTO_ENABLE: '1' } });
    try {
      await t.api.patchResilience({ patch: { requestQueue: { autoEnableApiKeyProviders: false } } });
      const c = await addConn(t, fake, 'env-on', { authClass: 'apikey', rateLimitOverrides: { minTimeMs: 500 } });
      expect(await admissionOf(t, c.id)).toMatchObject({ protected: true, protectionSource: 'auto' });
      fake.script({}, [slow(50)]);
      const { maxInFlight } = await burst(t, fake, 3);
      expect(maxInFlight).toBe(1);
    } finally {
      fake.reset();
      await t.stop();
    }
  });
});
