// Rate-limit headers as quota signals: OpenAI, Anthropic, subscription utilisation and generic
// forms; lazy refill at the reset time.
import { describe, expect, it } from 'vitest';
import { durationMs, parseQuotaHeaders, QuotaSignals, resetTime } from '../../../src/main/engine/routing/combos/quotaSignals';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('quota headers', () => {
  it('reads durations and reset times in every form', () => {
    expect(durationMs('6m0s')).toBe(360_000);
    expect(durationMs('1h2m3.5s')).toBe(3_723_500);
    expect(durationMs('20ms')).toBe(20);
    expect(durationMs('soon')).toBeNull();
    expect(resetTime('30', NOW)).toBe(NOW + 30_000);
    expect(resetTime(String(NOW / 1000 + 60), NOW)).toBe(NOW + 60_000);
    expect(resetTime(new Date(NOW + 5_000).toISOString(), NOW)).toBe(NOW + 5_000);
  });

  it('OpenAI: requests and tokens', () => {
    const q = parseQuotaHeaders(
      {
        'x-ratelimit-limit-requests': '500',
        'x-ratelimit-remaining-requests': '499',
        'x-ratelimit-reset-requests': '120ms',
        'x-ratelimit-limit-tokens': '30000',
        'x-ratelimit-remaining-tokens': '3000',
        'x-ratelimit-reset-tokens': '6m0s',
      },
      NOW,
    );
    expect(q).toEqual({
      requests: { limit: 500, remaining: 499, resetAt: NOW + 120 },
      tokens: { limit: 30_000, remaining: 3_000, resetAt: NOW + 360_000 },
    });
  });

  it('Anthropic: the tightest token budget counts', () => {
    const reset = new Date(NOW + 40_000).toISOString();
    const q = parseQuotaHeaders(
      {
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '40',
        'anthropic-ratelimit-requests-reset': reset,
        'anthropic-ratelimit-input-tokens-limit': '40000',
        'anthropic-ratelimit-input-tokens-remaining': '36000',
        'anthropic-ratelimit-input-tokens-reset': reset,
        'anthropic-ratelimit-output-tokens-limit': '8000',
        'anthropic-ratelimit-output-tokens-remaining': '800',
        'anthropic-ratelimit-output-tokens-reset': reset,
      },
      NOW,
    );
    expect(q?.requests).toEqual({ limit: 50, remaining: 40, resetAt: NOW + 40_000 });
    expect(q?.tokens).toEqual({ limit: 8_000, remaining: 800, resetAt: NOW + 40_000 });
  });

  it('subscription utilisation reads as a share left', () => {
    const q = parseQuotaHeaders({ 'anthropic-ratelimit-unified-5h-utilization': '0.8', 'anthropic-ratelimit-unified-reset': String(NOW / 1000 + 3600) }, NOW);
    expect(q?.requests).toEqual({ limit: 1_000, remaining: 200, resetAt: NOW + 3_600_000 });
  });

  it('no rate-limit headers: nothing', () => {
    expect(parseQuotaHeaders({ 'content-type': 'application/json' }, NOW)).toBeNull();
  });
});

describe('QuotaSignals', () => {
  it('keeps the reading per connection and model, falling back to the connection', () => {
    const q = new QuotaSignals();
    q.observe('c1', 'gpt-4o', { 'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': '25', 'x-ratelimit-reset-requests': '30s' }, NOW);
    expect(q.reading('c1', 'gpt-4o', NOW)).toMatchObject({ fraction: 0.25, requestsRemaining: 25, resetAt: NOW + 30_000 });
    expect(q.reading('c1', 'other', NOW)?.fraction).toBe(0.25);
    expect(q.reading('c2', 'gpt-4o', NOW)).toBeNull();
  });

  it('a budget past its reset reads as full again (lazy refill)', () => {
    const q = new QuotaSignals();
    q.observe('c1', 'm', { 'x-ratelimit-limit-requests': '10', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '5s' }, NOW);
    expect(q.reading('c1', 'm', NOW + 4_999)).toMatchObject({ fraction: 0, resetAt: NOW + 5_000 });
    expect(q.reading('c1', 'm', NOW + 5_000)).toMatchObject({ fraction: 1, requestsRemaining: 10, resetAt: null });
  });

  it('forgets a removed connection', () => {
    const q = new QuotaSignals();
    q.observe('c1', 'm', { 'x-ratelimit-remaining': '3' }, NOW);
    q.forget('c1');
    expect(q.reading('c1', 'm', NOW)).toBeNull();
  });
});
