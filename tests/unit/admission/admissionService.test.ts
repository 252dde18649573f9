// The admission service end to end with a fake clock and a test pacer: the synchronous fast path,
// queue budgets and codes (R-RQ-02..07, R-RQ-18, R-RQ-20..22), declared waits (R-RQ-11..17),
// protection (R-RQ-23..27), concurrency gates (R-SQ-04..13), views and change pushes.
import { describe, expect, it, vi } from 'vitest';
import { AdmissionService } from '../../../src/main/engine/admission/admissionService';
import { AdmissionError } from '../../../src/main/engine/admission/port';
import type { AttemptVerdict, UpstreamFailure } from '../../../src/main/engine/resilience/port';
import type { RetryHint } from '../../../src/main/engine/resilience/retryHints';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import type { SettingKey } from '../../../src/shared/settings';
import { FakeClock } from '../../support/fakeClock';
import { conn, flush, manualPacers, target, TestRegistry, TestSettings, track } from './support';

function setup(conns: ConnectionRecord[], persisted: Partial<Record<SettingKey, unknown>> = {}) {
  const clock = new FakeClock();
  const settings = new TestSettings(persisted);
  const registry = new TestRegistry(...conns);
  const pacers = manualPacers();
  const lockModel = vi.fn();
  const admission = new AdmissionService({ clock, settings, registry, resilience: { lockModel }, pacer: pacers });
  let changes = 0;
  admission.onChange(() => changes++);
  return { clock, settings, registry, pacers, lockModel, admission, changes: () => changes };
}

const never = () => new AbortController().signal;
const failure429: UpstreamFailure = { kind: 'http', status: 429, headers: {}, body: '', message: 'rate limited' };
const verdict = (hint: RetryHint | null): AttemptVerdict => ({ reason: 'rate_limit_exceeded', failover: true, retryAfterMs: hint?.ms ?? null, hint });
const viewOf = (a: AdmissionService, id: string) => a.views().find((v) => v.connectionId === id)!;

describe('admission fast path', () => {
  it('an unprotected connection without caps is admitted at once, with no timer and no pacer', async () => {
    const c = conn();
    const { admission, clock, pacers } = setup([c]);
    const lease = track(admission.acquire(target(c), never()));
    await flush(1);
    expect(lease.status).toBe('resolved');
    expect(clock.pendingTimers()).toBe(0);
    expect(pacers.made).toHaveLength(0);
    expect(viewOf(admission, c.id).inFlight).toBe(1);
    lease.value!.release();
    lease.value!.release(); // idempotent
    expect(viewOf(admission, c.id).inFlight).toBe(0);
  });

  it('acquireNow hands over a free slot in the same turn, and says null (taking nothing) when the request must wait or be refused', () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { maxConcurrent: 1, maxWaitMs: 1_000 } });
    const { admission } = setup([c]);
    const lease = admission.acquireNow(target(c), never());
    expect(lease).not.toBeNull();
    expect(viewOf(admission, c.id).inFlight).toBe(1);
    // The cap is full: acquire() is the one to queue the request.
    expect(admission.acquireNow(target(c), never())).toBeNull();
    expect(viewOf(admission, c.id)).toMatchObject({ inFlight: 1, queued: 0 });
    lease!.release();
    // Paused past the caller's budget: null here, and acquire() gives the refusal with its reason.
    admission.observe(target(c), failure429, verdict({ ms: 60_000, source: 'text' }));
    expect(admission.acquireNow(target(c), never())).toBeNull();
    expect(viewOf(admission, c.id)).toMatchObject({ inFlight: 0, queued: 0 });
    // An aborted request gets nothing.
    const gone = new AbortController();
    gone.abort();
    expect(admission.acquireNow(target(conn()), gone.signal)).toBeNull();
  });

  it('a request admitted at once reports no time in a queue, however long the admission code itself took', async () => {
    // A clock whose monotonic time moves on every read: the admission's own work "takes" time.
    class TickingClock extends FakeClock {
      private reads = 0;
      override monotonic(): number {
        return super.monotonic() + ++this.reads;
      }
    }
    const c = conn({ authClass: 'apikey' });
    const admission = new AdmissionService({ clock: new TickingClock(), settings: new TestSettings({}), registry: new TestRegistry(c), resilience: { lockModel: vi.fn() }, pacer: manualPacers() });
    expect(admission.acquireNow(target(c), never())!.queuedMs).toBe(0);
    expect((await admission.acquire(target(c), never())).queuedMs).toBe(0);
  });

  it('an idle protected connection skips the pacer too; execution budgets share one timer', async () => {
    const c = conn({ authClass: 'apikey' });
    const { admission, clock, pacers } = setup([c]);
    const leases = [await admission.acquire(target(c), never()), await admission.acquire(target(c), never())];
    expect(pacers.made).toHaveLength(0);
    expect(clock.pendingTimers()).toBe(1);
    expect(leases[0]!.queuedMs).toBe(0);
    leases.forEach((l) => l.release());
    clock.advance(600_000);
    expect(leases.some((l) => l.signal.aborted)).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('default settings impose no rate and no cap: many requests are in flight together', async () => {
    const c = conn({ authClass: 'apikey' });
    const { admission } = setup([c]);
    const leases = await Promise.all(Array.from({ length: 50 }, () => admission.acquire(target(c), never())));
    expect(viewOf(admission, c.id)).toMatchObject({ inFlight: 50, queued: 0, protected: true, protectionSource: 'auto' });
    leases.forEach((l) => l.release());
  });

  it('pushes a change when in-flight counts move', async () => {
    const c = conn();
    const { admission, changes } = setup([c]);
    const before = changes();
    const lease = await admission.acquire(target(c), never());
    lease.release();
    expect(changes()).toBeGreaterThanOrEqual(before + 2);
  });
});

describe('the request queue of a protected connection', () => {
  it('a request that outlives maxWaitMs in the queue fails with RATE_LIMIT_QUEUE_TIMEOUT and is never dispatched', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { minTimeMs: 60_000, maxWaitMs: 1_000 } });
    const { admission, clock, pacers } = setup([c]);
    const p = track(admission.acquire(target(c), never()));
    expect(viewOf(admission, c.id).queued).toBe(1);
    clock.advance(1_000);
    await flush();
    expect(p.error).toBeInstanceOf(AdmissionError);
    expect(p.error).toMatchObject({ code: 'RATE_LIMIT_QUEUE_TIMEOUT', status: 429 });
    pacers.drainAll();
    await flush();
    expect(viewOf(admission, c.id)).toMatchObject({ queued: 0, inFlight: 0 });
  });

  it('a full queue refuses at once with RATE_LIMIT_QUEUE_FULL', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { minTimeMs: 1_000 } });
    const { admission } = setup([c], { 'requestQueue.maxQueueDepth': 1 });
    const first = track(admission.acquire(target(c), never()));
    const second = track(admission.acquire(target(c), never()));
    await flush();
    expect(first.status).toBe('pending');
    expect(second.error).toMatchObject({ code: 'RATE_LIMIT_QUEUE_FULL', status: 429 });
    expect(viewOf(admission, c.id).queued).toBe(1);
  });

  it('maxQueueDepth 0 keeps the queue unbounded', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { minTimeMs: 1_000 } });
    const { admission } = setup([c]);
    const all = Array.from({ length: 60 }, () => track(admission.acquire(target(c), never())));
    await flush();
    expect(all.every((p) => p.status === 'pending')).toBe(true);
    expect(viewOf(admission, c.id).queued).toBe(60);
  });

  it('queued requests dispatch through the pacer, and queuedMs says how long they waited', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { minTimeMs: 250 } });
    const { admission, clock, pacers } = setup([c]);
    const p = track(admission.acquire(target(c), never()));
    clock.advance(250);
    pacers.drainAll();
    await flush();
    expect(p.value!.queuedMs).toBe(250);
    expect(pacers.made[0]!.minTime).toBe(250);
  });

  it('the execution budget aborts the lease with RATE_LIMIT_EXECUTION_TIMEOUT (504), raised to the headers timeout', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { executionMaxWaitMs: 1_000 }, timeouts: { headersMs: 3_000 } });
    const { admission, clock } = setup([c]);
    const lease = await admission.acquire(target(c), never());
    clock.advance(2_999);
    expect(lease.signal.aborted).toBe(false);
    clock.advance(300); // budgets end on a tick of a tenth of themselves, never early
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toMatchObject({ code: 'RATE_LIMIT_EXECUTION_TIMEOUT', status: 504 });
    lease.release();
  });

  it('an unprotected connection has no execution budget', async () => {
    const c = conn({ rateLimitOverrides: { executionMaxWaitMs: 1_000 } });
    const { admission, clock } = setup([c]);
    const lease = await admission.acquire(target(c), never());
    clock.advance(86_400_000);
    expect(lease.signal.aborted).toBe(false);
  });
});

describe('declared waits', () => {
  it('a wait within maxWaitMs spaces the queue: the next request waits, then dispatches', async () => {
    const c = conn({ authClass: 'apikey' });
    const { admission, clock, pacers } = setup([c]);
    admission.observe(target(c), failure429, verdict({ ms: 2_000, source: 'google_rpc_retry_info' }));
    expect(viewOf(admission, c.id).pausedUntil).toBe(clock.now() + 2_000);
    const p = track(admission.acquire(target(c), never()));
    await flush();
    expect(p.status).toBe('pending');
    clock.advance(2_000);
    pacers.drainAll();
    await flush();
    expect(p.status).toBe('resolved');
  });

  it('a pause longer than the caller’s budget is refused at once with the pause as Retry-After', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { maxWaitMs: 1_000 } });
    const { admission, clock } = setup([c]);
    admission.observe(target(c), failure429, verdict({ ms: 60_000, source: 'text' }));
    const p = track(admission.acquire(target(c), never()));
    await flush();
    expect(p.error).toMatchObject({ code: 'RATE_LIMIT_QUEUE_TIMEOUT', retryAfterMs: 60_000 });
    expect(clock.pendingTimers()).toBe(1); // only the pause's own wake-up
  });

  it('a long typed RetryInfo on a model-scoped connection locks that model (≤ 24 h) and leaves the queue running', async () => {
    const c = conn({ authClass: 'apikey', provider: 'gemini' });
    const { admission, lockModel, pacers } = setup([c]);
    const t = target(c, 'gemini-2.5-pro');
    admission.observe(t, failure429, verdict({ ms: 86_399_000, source: 'google_rpc_retry_info' }));
    expect(lockModel).toHaveBeenCalledWith(t, 86_399_000, 'long_retry_delay', expect.any(Number));
    const other = await admission.acquire(target(c, 'gemini-2.5-flash'), never());
    const same = await admission.acquire(t, never());
    expect(pacers.made).toHaveLength(0);
    expect(viewOf(admission, c.id).pausedUntil).toBeNull();
    other.release();
    same.release();
  });

  it('the lockout is capped at 24 h', () => {
    const c = conn({ authClass: 'apikey', provider: 'gemini' });
    const { admission, lockModel } = setup([c]);
    admission.observe(target(c, 'g'), failure429, verdict({ ms: 5 * 86_400_000, source: 'google_rpc_retry_info' }));
    expect(lockModel.mock.calls[0]![1]).toBe(86_400_000);
  });

  it('the same long wait on a connection-wide limiter pauses the limiter instead', () => {
    const c = conn({ authClass: 'apikey', provider: 'openai' });
    const { admission, lockModel, clock } = setup([c]);
    admission.observe(target(c), failure429, verdict({ ms: 86_399_000, source: 'google_rpc_retry_info' }));
    expect(lockModel).not.toHaveBeenCalled();
    expect(viewOf(admission, c.id).pausedUntil).toBe(clock.now() + 86_399_000);
  });

  it('a model-scoped pause holds only that model', async () => {
    const c = conn({ authClass: 'apikey', provider: 'gemini' });
    const { admission, clock } = setup([c]);
    admission.observe(target(c, 'a'), failure429, verdict({ ms: 5_000, source: 'text' }));
    const a = track(admission.acquire(target(c, 'a'), never()));
    const b = track(admission.acquire(target(c, 'b'), never()));
    await flush();
    expect(a.status).toBe('pending');
    expect(b.status).toBe('resolved');
    const v = viewOf(admission, c.id);
    expect(v.pausedUntil).toBeNull();
    expect(v.models.find((m) => m.model === 'a')).toMatchObject({ queued: 1, pausedUntil: clock.now() + 5_000 });
  });

  it('re-enabling a model lifts its own queue pause at once: the waiting request dispatches, other models untouched', async () => {
    const c = conn({ authClass: 'apikey', provider: 'gemini' });
    const { admission, pacers } = setup([c]);
    admission.observe(target(c, 'a'), failure429, verdict({ ms: 5_000, source: 'retry-after' }));
    admission.observe(target(c, 'b'), failure429, verdict({ ms: 5_000, source: 'retry-after' }));
    const a = track(admission.acquire(target(c, 'a'), never()));
    await flush();
    expect(a.status).toBe('pending');
    expect(admission.resumeModel(c.id, 'a')).toBe(true);
    pacers.drainAll(); // the pacer hands it on at once: nothing waits for the clock
    await flush();
    expect(a.status).toBe('resolved');
    const v = viewOf(admission, c.id);
    expect(v.models.find((m) => m.model === 'a')?.pausedUntil ?? null).toBeNull();
    expect(v.models.find((m) => m.model === 'b')?.pausedUntil).not.toBeNull();
    expect(admission.resumeModel(c.id, 'a')).toBe(false);
  });

  it('re-enabling a model lifts its pause inside a connection-wide queue too (a 429 scoped to one model)', async () => {
    const c = conn({ authClass: 'apikey', provider: 'openai' });
    const { admission, pacers } = setup([c]);
    admission.observe(target(c, 'a'), failure429, { ...verdict({ ms: 5_000, source: 'retry-after' }), scope: 'model' });
    expect(viewOf(admission, c.id).models.find((m) => m.model === 'a')?.pausedUntil).not.toBeNull();
    const a = track(admission.acquire(target(c, 'a'), never()));
    await flush();
    expect(a.status).toBe('pending');
    expect(admission.resumeModel(c.id, 'a')).toBe(true);
    pacers.drainAll(); // the pacer hands it on at once: nothing waits for the clock
    await flush();
    expect(a.status).toBe('resolved');
  });

  it('an unprotected connection ignores declared waits (resilience handles them)', async () => {
    const c = conn({ authClass: 'oauth' });
    const { admission, lockModel } = setup([c]);
    admission.observe(target(c), failure429, verdict({ ms: 5_000, source: 'retry-after' }));
    expect(lockModel).not.toHaveBeenCalled();
    expect(viewOf(admission, c.id).pausedUntil).toBeNull();
    const lease = track(admission.acquire(target(c), never()));
    await flush(1);
    expect(lease.status).toBe('resolved');
  });

  it('new credentials end a pause the old ones earned', () => {
    const c = conn({ authClass: 'apikey' });
    const { admission, registry } = setup([c]);
    admission.observe(target(c), failure429, verdict({ ms: 60_000, source: 'text' }));
    registry.update({ ...c, name: 'renamed' });
    expect(viewOf(admission, c.id).pausedUntil).not.toBeNull();
    registry.update({ ...c, secretMasked: 'sk-…zzzz' });
    expect(viewOf(admission, c.id).pausedUntil).toBeNull();
  });
});

describe('protection follows settings and the connection', () => {
  it('auto-enable covers API-key connections; explicit protection covers any; switching auto off unprotects', () => {
    const apikey = conn({ authClass: 'apikey' });
    const oauth = conn({ authClass: 'oauth', protectionMode: 'on' });
    const { admission, settings } = setup([apikey, oauth]);
    expect(viewOf(admission, apikey.id)).toMatchObject({ protected: true, protectionSource: 'auto' });
    expect(viewOf(admission, oauth.id)).toMatchObject({ protected: true, protectionSource: 'explicit' });
    settings.set({ 'requestQueue.autoEnableApiKeyProviders': false });
    expect(viewOf(admission, apikey.id)).toMatchObject({ protected: false, protectionSource: 'off' });
    expect(viewOf(admission, oauth.id).protected).toBe(true);
  });

  // Issue 22: the dashboard's Automatic / On / Off control does what it shows.
  const spaced = { minTimeMs: 60_000 };

  it('mode off admits an API-key connection without the queue, even with a configured spacing', async () => {
    const c = conn({ authClass: 'apikey', protectionMode: 'off', rateLimitOverrides: spaced });
    const { admission, pacers } = setup([c]);
    const leases = [track(admission.acquire(target(c), never())), track(admission.acquire(target(c), never()))];
    await flush();
    expect(leases.map((l) => l.status)).toEqual(['resolved', 'resolved']);
    expect(pacers.made).toHaveLength(0);
    expect(viewOf(admission, c.id)).toMatchObject({ protected: false, protectionSource: 'off', protectionMode: 'off', queued: 0, inFlight: 2 });
  });

  it('mode on queues any connection, the safety net on or off', async () => {
    const c = conn({ authClass: 'local', protectionMode: 'on', rateLimitOverrides: spaced });
    const { admission, settings } = setup([c]);
    settings.set({ 'requestQueue.autoEnableApiKeyProviders': false });
    track(admission.acquire(target(c), never()));
    track(admission.acquire(target(c), never()));
    await flush();
    expect(viewOf(admission, c.id)).toMatchObject({ protected: true, protectionSource: 'explicit', protectionMode: 'on', queued: 2, inFlight: 0 });
  });

  it('mode auto follows the rule: an API-key connection queues, an OAuth one does not', async () => {
    const apikey = conn({ authClass: 'apikey', protectionMode: 'auto', rateLimitOverrides: spaced });
    const oauth = conn({ authClass: 'oauth', protectionMode: 'auto', rateLimitOverrides: spaced });
    const { admission } = setup([apikey, oauth]);
    for (const c of [apikey, oauth]) for (let i = 0; i < 2; i++) track(admission.acquire(target(c), never()));
    await flush();
    expect(viewOf(admission, apikey.id)).toMatchObject({ protected: true, protectionSource: 'auto', protectionMode: 'auto', queued: 2, inFlight: 0 });
    expect(viewOf(admission, oauth.id)).toMatchObject({ protected: false, protectionSource: 'off', protectionMode: 'auto', queued: 0, inFlight: 2 });
  });

  it('switching a queued connection to off lets the next request through at once', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: spaced });
    const { admission, registry } = setup([c]);
    const held = track(admission.acquire(target(c), never()));
    await flush();
    expect(held.status).toBe('pending');
    const off = registry.update({ ...c, protectionMode: 'off' });
    expect(viewOf(admission, c.id)).toMatchObject({ protected: false, protectionMode: 'off' });
    const next = track(admission.acquire(target(off), never()));
    await flush();
    expect(next.status).toBe('resolved');
  });
});

describe('concurrency gates', () => {
  it('a saturated model gate times out with SEMAPHORE_TIMEOUT after concurrency.waitTimeoutMs', async () => {
    const c = conn({ rateLimitOverrides: { modelConcurrency: { 'glm-5': 1 } } });
    const { admission, clock } = setup([c], { 'concurrency.waitTimeoutMs': 2_000 });
    const held = await admission.acquire(target(c, 'glm-5'), never());
    const p = track(admission.acquire(target(c, 'glm-5'), never()));
    await flush();
    expect(viewOf(admission, c.id).models).toEqual([{ model: 'glm-5', inFlight: 1, queued: 1, cap: 1, pausedUntil: null }]);
    clock.advance(2_000);
    await flush();
    expect(p.error).toMatchObject({ code: 'SEMAPHORE_TIMEOUT', status: 429 });
    held.release();
  });

  it('too many waiters for one gate get SEMAPHORE_QUEUE_FULL at once', async () => {
    const c = conn({ rateLimitOverrides: { maxConcurrent: 1 } });
    const { admission } = setup([c], { 'concurrency.maxWaiting': 1 });
    await admission.acquire(target(c), never());
    const waiting = track(admission.acquire(target(c), never()));
    const refused = track(admission.acquire(target(c), never()));
    await flush();
    expect(waiting.status).toBe('pending');
    expect(refused.error).toMatchObject({ code: 'SEMAPHORE_QUEUE_FULL', status: 429 });
  });

  it('a waiter gets the slot when one frees, and other models are not blocked', async () => {
    const c = conn({ rateLimitOverrides: { maxConcurrent: 4, modelConcurrency: { 'glm-5': 1 } } });
    const { admission } = setup([c]);
    const first = await admission.acquire(target(c, 'glm-5'), never());
    const second = track(admission.acquire(target(c, 'glm-5'), never()));
    const other = track(admission.acquire(target(c, 'glm-4.7'), never()));
    await flush();
    expect(second.status).toBe('pending');
    expect(other.status).toBe('resolved');
    first.release();
    await flush();
    expect(second.status).toBe('resolved');
  });

  it('on a protected connection the queue budget ends the gate wait when it comes first', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { maxConcurrent: 1, maxWaitMs: 500 } });
    const { admission, clock } = setup([c], { 'concurrency.waitTimeoutMs': 10_000 });
    await admission.acquire(target(c), never());
    const p = track(admission.acquire(target(c), never()));
    clock.advance(500);
    await flush();
    expect(p.error).toMatchObject({ code: 'RATE_LIMIT_QUEUE_TIMEOUT' });
  });

  it('raising a cap on the connection lets waiters through at once', async () => {
    const c = conn({ rateLimitOverrides: { maxConcurrent: 1 } });
    const { admission, registry } = setup([c]);
    await admission.acquire(target(c), never());
    const p = track(admission.acquire(target(c), never()));
    await flush();
    registry.update({ ...c, rateLimitOverrides: { maxConcurrent: 2 } });
    await flush();
    expect(p.status).toBe('resolved');
  });

  it('shared-quota serialisation waits for max_concurrent, then fails open and dispatches anyway', async () => {
    const c = conn({ maxConcurrent: 1 });
    const { admission, clock } = setup([c], { 'concurrency.waitTimeoutMs': 3_000 });
    await admission.acquire(target(c), never());
    const p = track(admission.acquire(target(c), never()));
    await flush();
    expect(p.status).toBe('pending');
    clock.advance(3_000);
    await flush();
    expect(p.status).toBe('resolved');
    expect(viewOf(admission, c.id)).toMatchObject({ inFlight: 2, maxConcurrent: 1 });
  });

  it('switching shared-quota serialisation off lets waiting requests go and stops gating', async () => {
    const c = conn({ maxConcurrent: 1 });
    const { admission, settings } = setup([c]);
    await admission.acquire(target(c), never());
    const p = track(admission.acquire(target(c), never()));
    await flush();
    settings.set({ 'quotaShareConcurrencyLimit.enabled': false });
    await flush();
    expect(p.status).toBe('resolved');
    const third = track(admission.acquire(target(c), never()));
    await flush(1);
    expect(third.status).toBe('resolved');
    expect(viewOf(admission, c.id).maxConcurrent).toBeNull();
  });

  it('a client that goes away while waiting leaves no trace', async () => {
    const c = conn({ rateLimitOverrides: { maxConcurrent: 1 } });
    const { admission } = setup([c]);
    const held = await admission.acquire(target(c), never());
    const ac = new AbortController();
    const p = track(admission.acquire(target(c), ac.signal));
    ac.abort(new Error('gone'));
    await flush();
    expect(p.error.message).toBe('gone');
    held.release();
    expect(viewOf(admission, c.id)).toMatchObject({ queued: 0, inFlight: 0 });
  });
});

describe('shutdown', () => {
  it('close rejects requests still waiting', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { minTimeMs: 1_000, maxConcurrent: 1 } });
    const { admission } = setup([c]);
    const p = track(admission.acquire(target(c), never()));
    await admission.close();
    await flush();
    expect(p.status).toBe('rejected');
    await expect(admission.acquire(target(c), never())).rejects.toThrow();
  });
});

describe('the waits a lease reports (request log reasons)', () => {
  it('a request admitted at once reports no wait', async () => {
    const c = conn({ authClass: 'apikey' });
    const { admission } = setup([c]);
    expect((await admission.acquire(target(c), never())).waits ?? null).toBeNull();
  });

  it('a wait on a paused queue says so, with when the pause lifts', async () => {
    const c = conn({ authClass: 'apikey' });
    const { admission, clock, pacers } = setup([c]);
    admission.observe(target(c), failure429, verdict({ ms: 2_000, source: 'google_rpc_retry_info' }));
    const until = clock.now() + 2_000;
    const p = track(admission.acquire(target(c), never()));
    await flush();
    clock.advance(2_000);
    pacers.drainAll();
    await flush();
    expect(p.value!.waits).toEqual([{ reason: 'queue_paused', ms: 2_000, until }]);
  });

  it('a wait for the spacing of a protected queue says spacing', async () => {
    const c = conn({ authClass: 'apikey', rateLimitOverrides: { minTimeMs: 250 } });
    const { admission, clock, pacers } = setup([c]);
    const p = track(admission.acquire(target(c), never()));
    clock.advance(250);
    pacers.drainAll();
    await flush();
    expect(p.value!.waits).toEqual([{ reason: 'queue_spacing', ms: 250 }]);
  });

  it('a wait for a full model cap says which cap', async () => {
    const c = conn({ rateLimitOverrides: { modelConcurrency: { 'glm-5': 1 } } });
    const { admission, clock } = setup([c]);
    const held = await admission.acquire(target(c, 'glm-5'), never());
    const p = track(admission.acquire(target(c, 'glm-5'), never()));
    await flush();
    clock.advance(300);
    held.release();
    await flush();
    expect(p.value!.waits).toEqual([{ reason: 'concurrency_cap', ms: 300, cap: 'model' }]);
  });
});
