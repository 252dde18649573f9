// Cooldown-aware waits in combos (SPEC §4.4, R-SQ-16..25) and the answers when nothing could be
// sent (R-DBG-01..03). The engine runs on a fake clock: a waiting request is released by
// advancing it, so nothing here sleeps for real.
import { describe, expect, it } from 'vitest';
import { anthropicMessage } from '../../support/fakeUpstream';
import { anthropicError, rateLimited, rigPerTest, type Rig } from '../resilience/support';
import { comboRig, ENV, KEY_A, KEY_B, overloaded, send, waiting, type ComboRig } from './support';

const quotaExhausted = () =>
  anthropicError(429, 'rate_limit_error', 'You exceeded your current quota, please check your plan and billing details', { 'retry-after': '2' });

describe('combo cooldown-aware waits', () => {
  const { fake, startRig } = rigPerTest();

  async function start(settings: Record<string, unknown> = {}): Promise<ComboRig> {
    const rig = await startRig({ env: ENV });
    if (Object.keys(settings).length) await rig.t.api.patchSettings({ patch: settings });
    const r = await comboRig(rig);
    await r.combo({ strategy: 'weighted', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    return r;
  }

  /** Sends a request that is expected to wait, advances the fake clock by `ms`, and returns its answer. */
  async function sendThroughWait(rig: Rig, ms: number, waitsBefore = 0) {
    const pending = send(rig.client);
    await waiting(rig, waitsBefore + 1);
    rig.clock.advance(ms);
    return pending;
  }

  it('both targets answer 429 Retry-After: 2: the request waits 2 s and succeeds (R-SQ-16)', async () => {
    const r = await start();
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '2' })], { repeatLast: false });
    fake.script({ key: KEY_B }, [rateLimited({ 'retry-after': '2' })], { repeatLast: false });
    const got = await sendThroughWait(r.rig, 2_000);
    expect(got.status).toBe(200);
    expect(['model-x', 'model-y']).toContain(got.bodyModel);
    // Both were tried, then one of them again after the wait.
    expect(fake.requests).toHaveLength(3);
    const log = await r.lastLog();
    expect(log.combo!.waits).toEqual([{ ms: 2_000, reason: expect.any(String) }]);
  });

  it('a wait longer than maxWaitMs is not taken: the 429 comes back at once with its Retry-After (R-SQ-17)', async () => {
    const r = await start({ 'comboCooldownWait.maxWaitMs': 1_000 });
    fake.script({ path: '/v1/messages' }, [rateLimited({ 'retry-after': '2' })]);
    const got = await send(r.rig.client);
    expect(got.status).toBe(429);
    expect(got.retryAfter).toBe('2');
    expect(r.rig.t.logs.lines.some((l) => l.includes('combo.waiting'))).toBe(false);
  });

  it('every target cooling for at most maxWaitMs before dispatch: waits, then sends (R-SQ-23)', async () => {
    const r = await start({ 'comboCooldownWait.maxWaitMs': 5_000 });
    // Cool both targets for 4 s with a request of a combo that does not wait.
    await r.rig.t.api.updateCombo({ id: 'pool', patch: { options: { comboCooldownWaitEnabled: false } } });
    fake.script({ path: '/v1/messages' }, [rateLimited({ 'retry-after': '4' })], { repeatLast: false });
    fake.script({ key: KEY_B }, [rateLimited({ 'retry-after': '4' })], { repeatLast: false });
    expect((await send(r.rig.client)).status).toBe(429);
    await r.rig.t.api.updateCombo({ id: 'pool', patch: { options: {} } });
    r.rig.clock.advance(1_000);
    const sent = fake.requests.length;
    const pending = send(r.rig.client);
    await waiting(r.rig);
    expect(fake.requests.length).toBe(sent); // nothing dispatched while both cool
    r.rig.clock.advance(3_000);
    const got = await pending;
    expect(got.status).toBe(200);
    expect(fake.requests.length).toBe(sent + 1);
    const log = await r.lastLog();
    expect(log.attempts).toHaveLength(1);
    expect(log.combo!.waits.map((w) => w.ms)).toEqual([3_000]);
  });

  it('beyond maxWaitMs the client gets 429 rate_limit_error with a truthful Retry-After and reset_at (R-SQ-24)', async () => {
    const r = await start({ 'comboCooldownWait.maxWaitMs': 1_000 });
    fake.script({ path: '/v1/messages' }, [rateLimited({ 'retry-after': '30' })]);
    expect((await send(r.rig.client)).status).toBe(429); // cools both targets for 30 s
    const before = fake.requests.length;
    r.rig.clock.advance(10_000);
    const got = await send(r.rig.client);
    expect(fake.requests.length).toBe(before); // nothing was sent
    expect(got.status).toBe(429);
    expect(got.error).toMatchObject({ type: 'rate_limit_error', code: 'all_targets_cooling_down', retry_after: 20 });
    expect(got.retryAfter).toBe('20');
    expect(Date.parse(got.error!.reset_at!)).toBe(r.rig.clock.now() + 20_000);
    expect(got.error!.diagnostics!.excluded.map((e: { reason: string }) => e.reason)).toEqual(['model_lockout', 'model_lockout']); // a plain 429 rests only that model on that key
    expect(got.error!.diagnostics!.waitRefused).toBe('too_long');
    expect(r.rig.t.logs.lines.some((l) => l.includes('[COMBO] Weighted selection: every target excluded before dispatch — '))).toBe(true);
  });

  it('never waits on quota exhaustion; later requests get 503 ALL_TARGETS_SKIPPED without a hint (R-SQ-18, R-SQ-25)', async () => {
    const r = await start();
    fake.script({ path: '/v1/messages' }, [quotaExhausted()]);
    const got = await send(r.rig.client);
    expect(got.status).toBe(429);
    expect(r.rig.t.logs.lines.some((l) => l.includes('combo.waiting'))).toBe(false);
    const before = fake.requests.length;
    const next = await send(r.rig.client);
    expect(fake.requests.length).toBe(before);
    expect(next.status).toBe(503);
    expect(next.error?.code).toBe('ALL_TARGETS_SKIPPED');
    expect(next.retryAfter).toBeNull();
    expect(next.error?.diagnostics?.excluded.map((e: { cause: string }) => e.cause)).toEqual(['quota_exhausted', 'quota_exhausted']);
  });

  it('a combo with comboCooldownWaitEnabled: false answers the 429 at once (R-SQ-19)', async () => {
    const r = await start();
    await r.rig.t.api.updateCombo({ id: 'pool', patch: { options: { comboCooldownWaitEnabled: false } } });
    fake.script({ path: '/v1/messages' }, [rateLimited({ 'retry-after': '2' })]);
    const got = await send(r.rig.client);
    expect(got.status).toBe(429);
    expect(r.rig.t.logs.lines.some((l) => l.includes('combo.waiting'))).toBe(false);
  });

  it('with waits off globally a combo cannot turn them on with true (R-SQ-20)', async () => {
    const r = await start({ 'comboCooldownWait.enabled': false });
    await r.rig.t.api.updateCombo({ id: 'pool', patch: { options: { comboCooldownWaitEnabled: true } } });
    fake.script({ path: '/v1/messages' }, [rateLimited({ 'retry-after': '2' })]);
    expect((await send(r.rig.client)).status).toBe(429);
    expect(r.rig.t.logs.lines.some((l) => l.includes('combo.waiting'))).toBe(false);
  });

  it('one target 429s with a Retry-After that fits, the other fails: waits it out and retries once', async () => {
    const r = await start();
    await r.rig.t.api.updateCombo({ id: 'pool', patch: { strategy: 'priority' } });
    fake.script({ key: KEY_A }, [rateLimited({ 'retry-after': '3' }), { json: anthropicMessage('model-x') }], { repeatLast: false });
    fake.script({ key: KEY_B }, [overloaded()]);
    const got = await sendThroughWait(r.rig, 3_000);
    expect(got).toMatchObject({ status: 200, connection: r.a.id, servedModel: 'model-x' });
    // A was not sent again before the 3 s it asked for had passed.
    expect(fake.requestsFor({ key: KEY_A })).toHaveLength(2);
  });

  it('every target behind an open breaker: 503 all_targets_cooling_down with Retry-After and circuit_open (R-DBG-01/02)', async () => {
    const r = await start({
      'comboCooldownWait.enabled': false,
      'providerBreaker.apikey.failureThreshold': 1,
      'providerBreaker.apikey.degradationThreshold': 1,
    });
    fake.script({ path: '/v1/messages' }, [overloaded()]);
    await send(r.rig.client); // opens both breakers
    const got = await send(r.rig.client);
    expect(got.status).toBe(503);
    expect(got.error?.code).toBe('all_targets_cooling_down');
    expect(Number(got.retryAfter)).toBe(30);
    expect(got.error!.diagnostics!.excluded.map((e: { reason: string }) => e.reason)).toEqual(['circuit_open', 'circuit_open']);
    expect(r.rig.t.logs.lines.some((l) => l.includes('[COMBO] Weighted selection: every target excluded before dispatch — ') && l.includes('circuit_open'))).toBe(true);
  });

  it('a combo whose targets have no usable connection answers 404 no_executable_targets (R-DBG-03)', async () => {
    const r = await start();
    await r.rig.t.api.updateConnection({ id: r.a.id, patch: { enabled: false } });
    await r.rig.t.api.updateConnection({ id: r.b.id, patch: { enabled: false } });
    const got = await send(r.rig.client);
    expect(got.status).toBe(404);
    expect(got.error?.code).toBe('no_executable_targets');
    expect(got.error!.diagnostics!.unusable.map((u: { reason: string }) => u.reason)).toEqual(['disabled', 'disabled']);
    expect(fake.requests).toHaveLength(0);
  });
});
