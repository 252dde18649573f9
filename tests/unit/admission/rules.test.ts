// The pure admission rules: protection (R-RQ-23..27), queue depth (R-RQ-20..22), the pause fast
// rejection (R-RQ-18), declared waits (R-RQ-10..17), limiter scope, caps (R-SQ-03..11) and the
// per-connection budgets with their precedence (R-RQ-05, R-RQ-06, R-RQ-09).
import { describe, expect, it } from 'vitest';
import { modeOfFlag, protectionOf } from '../../../src/main/engine/admission/protection';
import { checkQueueAdmission } from '../../../src/main/engine/admission/queueAdmission';
import { checkLimiterPause } from '../../../src/main/engine/admission/limiterPause';
import { decideDeclaredWait } from '../../../src/main/engine/admission/declaredWait';
import { limiterKeyOf, limiterScopeOf } from '../../../src/main/engine/admission/limiterScope';
import { capOf, gateStagesFor, quotaShareCapOf } from '../../../src/main/engine/admission/concurrencyCaps';
import { configuredSpacingMs, queueBudgetsFor } from '../../../src/main/engine/admission/budgets';
import { resolveSettings } from '../../../src/main/engine/settings/resolve';
import { conn } from './support';

describe('rate-limit protection', () => {
  it('mode on protects any connection, auto-enable on or off', () => {
    for (const authClass of ['oauth', 'apikey', 'local'] as const) {
      for (const auto of [true, false]) {
        expect(protectionOf(conn({ authClass, protectionMode: 'on' }), auto)).toEqual({ protected: true, source: 'explicit' });
      }
    }
  });

  it('mode off protects no connection, not even an API-key one under the safety net', () => {
    for (const authClass of ['oauth', 'apikey', 'local'] as const) {
      for (const auto of [true, false]) {
        expect(protectionOf(conn({ authClass, protectionMode: 'off' }), auto)).toEqual({ protected: false, source: 'off' });
      }
    }
  });

  it('mode auto: the safety net protects enabled API-key connections only', () => {
    expect(protectionOf(conn({ authClass: 'apikey' }), true)).toEqual({ protected: true, source: 'auto' });
    expect(protectionOf(conn({ authClass: 'oauth' }), true)).toEqual({ protected: false, source: 'off' });
    expect(protectionOf(conn({ authClass: 'local' }), true)).toEqual({ protected: false, source: 'off' });
    expect(protectionOf(conn({ authClass: 'apikey', enabled: false }), true).protected).toBe(false);
  });

  it("SPEC's boolean maps to a mode: true is on, false is automatic (the safety net still applies)", () => {
    expect(modeOfFlag(true)).toBe('on');
    expect(modeOfFlag(false)).toBe('auto');
    expect(protectionOf(conn({ authClass: 'apikey', protectionMode: modeOfFlag(false) }), true)).toEqual({ protected: true, source: 'auto' });
  });

  it('turning the safety net off globally leaves automatic API-key connections unprotected', () => {
    expect(protectionOf(conn({ authClass: 'apikey' }), false)).toEqual({ protected: false, source: 'off' });
  });
});

describe('queue depth admission', () => {
  it('0 means no cap', () => {
    expect(checkQueueAdmission(100_000, 0)).toEqual({ admit: true });
  });

  it('refuses once the queue already holds maxQueueDepth requests', () => {
    expect(checkQueueAdmission(0, 1)).toEqual({ admit: true });
    expect(checkQueueAdmission(1, 1)).toEqual({ admit: false, waiting: 1 });
    expect(checkQueueAdmission(4, 5)).toEqual({ admit: true });
    expect(checkQueueAdmission(5, 5)).toEqual({ admit: false, waiting: 5 });
  });
});

describe('limiter pause fast rejection', () => {
  const now = 1_000_000;
  it('waits when there is no pause or it is over', () => {
    expect(checkLimiterPause(null, now, now + 10)).toEqual({ wait: true });
    expect(checkLimiterPause(now, now, now + 10)).toEqual({ wait: true });
    expect(checkLimiterPause(now - 5, now, now + 10)).toEqual({ wait: true });
  });

  it('rejects at once a caller whose budget ends before the pause does', () => {
    expect(checkLimiterPause(now + 60_000, now, now + 1_000)).toEqual({ wait: false, pauseLeftMs: 60_000 });
  });

  it('lets a caller wait when its budget outlasts the pause, or ends exactly with it', () => {
    expect(checkLimiterPause(now + 2_000, now, now + 30_000)).toEqual({ wait: true });
    expect(checkLimiterPause(now + 2_000, now, now + 2_000)).toEqual({ wait: true });
  });
});

describe('declared waits on a 429', () => {
  const typed = (ms: number) => ({ ms, source: 'google_rpc_retry_info' as const });

  it('a wait within maxWaitMs is spacing, whatever its source; equal to the budget still fits', () => {
    expect(decideDeclaredWait(429, typed(2_000), 30_000, 'model')).toEqual({ kind: 'pause', ms: 2_000, why: 'spacing' });
    expect(decideDeclaredWait(429, { ms: 5_000, source: 'text' }, 30_000, 'connection')).toEqual({
      kind: 'pause',
      ms: 5_000,
      why: 'spacing',
    });
    expect(decideDeclaredWait(429, { ms: 30_000, source: 'retry-after' }, 30_000, 'connection').kind).toBe('pause');
  });

  it('a long typed Google RetryInfo on a model-scoped limiter locks the model, capped at 24 h', () => {
    expect(decideDeclaredWait(429, typed(86_399_000), 30_000, 'model')).toEqual({ kind: 'lock_model', ms: 86_399_000 });
    expect(decideDeclaredWait(429, typed(3 * 86_400_000), 30_000, 'model')).toEqual({ kind: 'lock_model', ms: 86_400_000 });
  });

  it('a long wait from prose, an untyped retryDelay or on a connection-wide limiter pauses the limiter', () => {
    expect(decideDeclaredWait(429, { ms: 60_000, source: 'text' }, 30_000, 'model')).toEqual({
      kind: 'pause',
      ms: 60_000,
      why: 'long_wait',
    });
    expect(decideDeclaredWait(429, { ms: 60_000, source: 'body_retry_delay' }, 30_000, 'model').kind).toBe('pause');
    expect(decideDeclaredWait(429, typed(86_399_000), 30_000, 'connection')).toEqual({
      kind: 'pause',
      ms: 86_399_000,
      why: 'long_wait',
    });
  });

  it('ignores failures that are not 429s and 429s without a hint', () => {
    expect(decideDeclaredWait(503, typed(2_000), 30_000, 'model')).toEqual({ kind: 'none' });
    expect(decideDeclaredWait(429, null, 30_000, 'model')).toEqual({ kind: 'none' });
    expect(decideDeclaredWait(429, { ms: 0, source: 'retry-after' }, 30_000, 'model')).toEqual({ kind: 'none' });
  });
});

describe('limiter scope', () => {
  it('Gemini-style providers and Google endpoints get one limiter per model', () => {
    expect(limiterScopeOf(conn({ provider: 'gemini' }))).toBe('model');
    expect(limiterScopeOf(conn({ provider: 'Antigravity' }))).toBe('model');
    expect(limiterScopeOf(conn({ provider: 'my-google', baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai' }))).toBe(
      'model',
    );
    // A native Gemini connection, whatever its provider name and host (a local relay, a test fake).
    expect(limiterScopeOf({ ...conn({ provider: 'team-relay', baseUrl: 'http://127.0.0.1:9000' }), protocol: 'gemini' })).toBe('model');
    expect(limiterScopeOf({ ...conn({ provider: 'team-relay', baseUrl: 'http://127.0.0.1:9000' }), protocol: 'openai' })).toBe('connection');
  });

  it('everything else shares one limiter per connection', () => {
    expect(limiterScopeOf(conn({ provider: 'openai' }))).toBe('connection');
    expect(limiterScopeOf(conn({ provider: 'glm', baseUrl: 'https://api.z.ai/api/anthropic' }))).toBe('connection');
    expect(limiterKeyOf('connection', 'glm-5')).toBe('');
    expect(limiterKeyOf('model', 'gemini-2.5-pro')).toBe('gemini-2.5-pro');
  });
});

describe('concurrency caps', () => {
  it('only positive integers are caps', () => {
    expect(capOf(3)).toBe(3);
    for (const v of [0, -1, 1.5, '2', null, undefined, Number.NaN]) expect(capOf(v)).toBeNull();
  });

  it('no configuration adds no gate', () => {
    expect(gateStagesFor(conn(), 'glm-5')).toEqual([]);
    expect(gateStagesFor(conn({ rateLimitOverrides: { modelConcurrency: {} } }), 'glm-5')).toEqual([]);
  });

  it('builds account then model stages, matching the exact upstream model id', () => {
    const c = conn({ rateLimitOverrides: { maxConcurrent: 4, modelConcurrency: { 'glm-5': 1, 'glm-4.7': 3 } } });
    expect(gateStagesFor(c, 'glm-5').map((s) => [s.kind, s.cap])).toEqual([
      ['account', 4],
      ['model', 1],
    ]);
    expect(gateStagesFor(c, 'zai/glm-5').map((s) => s.kind)).toEqual(['account']);
    const aliasKeyed = conn({ rateLimitOverrides: { modelConcurrency: { 'zai/glm-5': 1 } } });
    expect(gateStagesFor(aliasKeyed, 'glm-5')).toEqual([]);
  });

  it('max_concurrent drives only the shared-quota layer, and only while it is enabled', () => {
    const c = conn({ maxConcurrent: 2 });
    expect(gateStagesFor(c, 'm')).toEqual([]);
    expect(quotaShareCapOf(c, true)).toBe(2);
    expect(quotaShareCapOf(c, false)).toBeNull();
    expect(quotaShareCapOf(conn(), true)).toBeNull();
  });
});

describe('queue budgets for a connection', () => {
  it('per-connection overrides beat persisted values, which beat env values', () => {
    const settings = resolveSettings(
      { RATE_LIMIT_MAX_WAIT_MS: '30000', RATE_LIMIT_EXECUTION_MAX_WAIT_MS: '900000' },
      { 'requestQueue.maxWaitMs': 5000 },
    );
    expect(queueBudgetsFor(settings, conn()).maxWaitMs).toBe(5000);
    expect(queueBudgetsFor(settings, conn({ rateLimitOverrides: { maxWaitMs: 1000 } })).maxWaitMs).toBe(1000);
    expect(queueBudgetsFor(settings, conn()).executionMs).toBe(900_000);
    expect(queueBudgetsFor(settings, conn({ rateLimitOverrides: { executionMaxWaitMs: 700_000 } })).executionMs).toBe(700_000);
  });

  it('the execution budget is raised to the connection’s headers timeout when that is longer', () => {
    const settings = resolveSettings({}, {});
    const c = conn({ rateLimitOverrides: { executionMaxWaitMs: 1000 }, timeouts: { headersMs: 120_000 } });
    expect(queueBudgetsFor(settings, c).executionMs).toBe(120_000);
    const short = conn({ rateLimitOverrides: { executionMaxWaitMs: 300_000 }, timeouts: { headersMs: 5_000 } });
    expect(queueBudgetsFor(settings, short).executionMs).toBe(300_000);
  });

  it('defaults: 30 s queue wait, 10 min execution, no depth cap, no spacing', () => {
    const b = queueBudgetsFor(resolveSettings({}, {}), conn());
    expect(b).toEqual({ maxWaitMs: 30_000, executionMs: 600_000, maxQueueDepth: 0, minTimeMs: 0 });
  });

  it('requests per minute become even spacing, and the stricter of rate and minTime wins', () => {
    expect(configuredSpacingMs(conn({ rateLimitOverrides: { requestsPerMinute: 60 } }))).toBe(1000);
    expect(configuredSpacingMs(conn({ rateLimitOverrides: { requestsPerMinute: 60, minTimeMs: 2500 } }))).toBe(2500);
    expect(configuredSpacingMs(conn({ rateLimitOverrides: { requestsPerMinute: 600, minTimeMs: 10 } }))).toBe(100);
  });
});
