// Upstream retry hints: headers first, then typed Google RetryInfo, untyped body fields, prose.
import { describe, expect, it } from 'vitest';
import { parseDuration, retryHintFrom } from '../../../src/main/engine/resilience/retryHints';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

describe('retryHintFrom: headers', () => {
  it('reads retry-after-ms, then retry-after (seconds or HTTP date)', () => {
    expect(retryHintFrom({ 'retry-after-ms': '1500', 'retry-after': '9' }, '', NOW)).toEqual({ ms: 1500, source: 'retry-after-ms' });
    expect(retryHintFrom({ 'retry-after': '7' }, '', NOW)).toEqual({ ms: 7000, source: 'retry-after' });
    const date = new Date(NOW + 20_000).toUTCString();
    expect(retryHintFrom({ 'retry-after': date }, '', NOW)).toEqual({ ms: 20_000, source: 'retry-after' });
  });

  it('reads x-ratelimit-reset durations, epochs and seconds', () => {
    expect(retryHintFrom({ 'x-ratelimit-reset-requests': '6m0s' }, '', NOW)).toEqual({ ms: 360_000, source: 'x-ratelimit-reset' });
    expect(retryHintFrom({ 'x-ratelimit-reset': String(NOW / 1000 + 12) }, '', NOW)).toEqual({ ms: 12_000, source: 'x-ratelimit-reset' });
    expect(retryHintFrom({ 'x-ratelimit-reset-tokens': '12s' }, '', NOW)?.ms).toBe(12_000);
  });

  it('ignores the reset of a limit that still has room', () => {
    const h = {
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '2s',
      'x-ratelimit-remaining-tokens': '5000',
      'x-ratelimit-reset-tokens': '50s',
    };
    expect(retryHintFrom(h, '', NOW)).toEqual({ ms: 2000, source: 'x-ratelimit-reset' });
  });

  it('reads Anthropic reset timestamps of exhausted limits only', () => {
    const h = {
      'anthropic-ratelimit-requests-remaining': '0',
      'anthropic-ratelimit-requests-reset': new Date(NOW + 30_000).toISOString(),
      'anthropic-ratelimit-tokens-remaining': '100',
      'anthropic-ratelimit-tokens-reset': new Date(NOW + 90_000).toISOString(),
    };
    expect(retryHintFrom(h, '', NOW)).toEqual({ ms: 30_000, source: 'anthropic-ratelimit-reset' });
  });

  it('prefers headers over the body', () => {
    expect(retryHintFrom({ 'retry-after': '3' }, 'please try again in 60s', NOW)?.source).toBe('retry-after');
  });
});

describe('retryHintFrom: body', () => {
  it('tells typed Google RetryInfo from an untyped retryDelay', () => {
    const typed = { error: { code: 429, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '86399s' }] } };
    expect(retryHintFrom({}, JSON.stringify(typed), NOW)).toEqual({ ms: 86_399_000, source: 'google_rpc_retry_info' });
    expect(retryHintFrom({}, '{"error":{"retryDelay":"2s"}}', NOW)).toEqual({ ms: 2000, source: 'body_retry_delay' });
  });

  it('reads retry_after / resets_in_seconds / resets_at fields as untyped body hints', () => {
    expect(retryHintFrom({}, '{"error":{"retry_after":12}}', NOW)).toEqual({ ms: 12_000, source: 'body_retry_delay' });
    expect(retryHintFrom({}, '{"error":{"type":"usage_limit_reached","resets_in_seconds":3600}}', NOW)).toEqual({ ms: 3_600_000, source: 'body_retry_delay' });
    expect(retryHintFrom({}, `{"error":{"resets_at":${NOW / 1000 + 90}}}`, NOW)).toEqual({ ms: 90_000, source: 'body_retry_delay' });
  });

  it('parses prose in English and Chinese', () => {
    expect(retryHintFrom({}, 'Rate limit reached. Please try again in 20s.', NOW)).toEqual({ ms: 20_000, source: 'text' });
    expect(retryHintFrom({}, 'Please retry after 1.5 minutes', NOW)?.ms).toBe(90_000);
    expect(retryHintFrom({}, 'try again in 1m30s', NOW)?.ms).toBe(90_000);
    expect(retryHintFrom({}, 'Your limit resets in 2 hours', NOW)?.ms).toBe(7_200_000);
    expect(retryHintFrom({}, '请求过于频繁，请在 30 秒后重试', NOW)).toEqual({ ms: 30_000, source: 'text' });
    expect(retryHintFrom({}, `quota resets at ${new Date(NOW + 60_000).toISOString()}`, NOW)?.ms).toBe(60_000);
  });

  it('returns null when nothing says how long', () => {
    expect(retryHintFrom({}, '{"error":{"message":"slow down"}}', NOW)).toBeNull();
    expect(retryHintFrom({}, '', NOW)).toBeNull();
  });
});

describe('parseDuration', () => {
  it('reads seconds, Go and Google durations', () => {
    expect(parseDuration('30')).toBe(30_000);
    expect(parseDuration('1h2m3.5s')).toBe(3_723_500);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('soon')).toBeNull();
  });
});

describe('retryHintFrom: Claude subscription (unified) limits', () => {
  it('a rejected unified limit says when the account can be used again; an allowed one says nothing', () => {
    const reset = String(NOW / 1000 + 7_200);
    expect(retryHintFrom({ 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-reset': reset }, '', NOW)).toEqual({
      ms: 7_200_000,
      source: 'anthropic-ratelimit-reset',
    });
    expect(retryHintFrom({ 'anthropic-ratelimit-unified-status': 'allowed', 'anthropic-ratelimit-unified-reset': reset }, '', NOW)).toBeNull();
    const h = {
      'anthropic-ratelimit-unified-5h-status': 'allowed',
      'anthropic-ratelimit-unified-5h-reset': String(NOW / 1000 + 60),
      'anthropic-ratelimit-unified-7d-status': 'rejected',
      'anthropic-ratelimit-unified-7d-reset': String(NOW / 1000 + 86_400),
    };
    expect(retryHintFrom(h, '', NOW)?.ms).toBe(86_400_000);
    expect(retryHintFrom({ ...h, 'retry-after': '30' }, '', NOW)?.ms).toBe(30_000);
  });
});
