// Usage windows: the unified headers (liberal in, strict out), the per-account snapshot with lazy
// reset, the headroom strategies read, and GET /api/oauth/usage against the fake.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccountApiError, fetchOrganizationUUID, fetchUsage, postResetRateLimits } from '../../../src/main/engine/claude/accountApi';
import { accountApiBase } from '../../../src/main/engine/claude/claudeConfig';
import { createUndiciHttp } from '../../../src/main/engine/claude/http';
import { isLimit429, parseUnifiedHeaders } from '../../../src/main/engine/claude/unifiedHeaders';
import { UsageBook } from '../../../src/main/engine/claude/usageWindows';
import { FakeClaudeAuth } from '../../support/fakeClaudeAuth';

const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);
const S = (ms: number) => String(Math.floor(ms / 1000));
const P = 'anthropic-ratelimit-unified-';

describe('unified headers', () => {
  it('reads status, both windows, claim, overage, fallback and the lane headers', () => {
    const u = parseUnifiedHeaders({
      [`${P}status`]: 'rejected',
      [`${P}reset`]: S(NOW + 3_600_000),
      [`${P}5h-status`]: 'rejected',
      [`${P}5h-utilization`]: '1.0',
      [`${P}5h-reset`]: S(NOW + 3_600_000),
      [`${P}7d-status`]: 'allowed',
      [`${P}7d-utilization`]: '0.42',
      [`${P}7d-reset`]: S(NOW + 86_400_000),
      [`${P}representative-claim`]: 'five_hour',
      [`${P}overage-status`]: 'rejected',
      [`${P}overage-in-use`]: 'false',
      [`${P}fallback-percentage`]: '0.5',
      [`${P}slow-offer`]: 'treatment',
      [`${P}slow-status`]: 'slot_busy',
      [`${P}slow-retry-after`]: '5',
      [`${P}slow-max-wait`]: '60',
    });
    expect(u).toEqual({
      present: true,
      status: 'rejected',
      reset: NOW + 3_600_000,
      fiveHour: { status: 'rejected', utilization: 1, resetsAt: NOW + 3_600_000 },
      sevenDay: { status: 'allowed', utilization: 0.42, resetsAt: NOW + 86_400_000 },
      representativeClaim: 'five_hour',
      overage: { status: 'rejected', inUse: false, resetsAt: null },
      fallbackPercentage: 0.5,
      slow: { offer: 'treatment', status: 'slot_busy', retryAfterSec: 5, maxWaitSec: 60, budgetResetAt: null },
    });
    expect(isLimit429(429, u)).toBe(true);
    expect(isLimit429(200, u)).toBe(false);
  });

  it('is liberal: any case, arrays, percentages, ISO and ms resets, word variants', () => {
    const u = parseUnifiedHeaders({
      'Anthropic-Ratelimit-Unified-Status': ['Allowed_Warning'],
      [`${P}5h-utilization`]: '85%',
      [`${P}5h-reset`]: new Date(NOW + 60_000).toISOString(),
      [`${P}7d-utilization`]: '37',
      [`${P}7d-reset`]: String(NOW + 120_000),
      [`${P}representative-claim`]: '7d',
      [`${P}slow-status`]: 'Not-Needed',
      [`${P}slow-retry-after`]: '12s',
      [`${P}overage-in-use`]: 'TRUE',
    });
    expect(u.status).toBe('allowed_warning');
    expect(u.fiveHour).toEqual({ status: null, utilization: 0.85, resetsAt: NOW + 60_000 });
    expect(u.sevenDay).toEqual({ status: null, utilization: 0.37, resetsAt: NOW + 120_000 });
    expect(u.representativeClaim).toBe('seven_day');
    expect(u.slow.status).toBe('not_needed');
    expect(u.slow.retryAfterSec).toBe(12);
    expect(u.overage?.inUse).toBe(true);
  });

  it('is strict in what it keeps: junk reads as null, fractions are clamped', () => {
    const u = parseUnifiedHeaders({
      [`${P}status`]: 'maybe',
      [`${P}5h-utilization`]: '-0.2',
      [`${P}7d-utilization`]: 'lots',
      [`${P}7d-reset`]: 'soon',
      [`${P}slow-status`]: 'sleepy',
      [`${P}slow-retry-after`]: '-3',
      [`${P}representative-claim`]: '<script>',
    });
    expect(u.present).toBe(true);
    expect(u.status).toBeNull();
    expect(u.fiveHour?.utilization).toBe(0);
    expect(u.sevenDay).toBeNull();
    expect(u.slow.status).toBeNull();
    expect(u.slow.retryAfterSec).toBeNull();
    expect(u.representativeClaim).toBeNull();
  });

  it('a response without unified headers is not present (a burst 429 is not the limit)', () => {
    const u = parseUnifiedHeaders({ 'retry-after': '3', 'content-type': 'application/json' });
    expect(u.present).toBe(false);
    expect(isLimit429(429, u)).toBe(false);
  });
});

describe('usage book', () => {
  const headers = (five: number, seven: number, fiveReset = NOW + 3_600_000) =>
    parseUnifiedHeaders({
      [`${P}status`]: 'allowed',
      [`${P}5h-utilization`]: String(five),
      [`${P}5h-reset`]: S(fiveReset),
      [`${P}7d-utilization`]: String(seven),
      [`${P}7d-reset`]: S(NOW + 5 * 86_400_000),
      [`${P}representative-claim`]: 'five_hour',
    });

  it('keeps a timestamped snapshot per account and answers headroom per window', () => {
    const book = new UsageBook();
    expect(book.recordHeaders('a', parseUnifiedHeaders({}), NOW)).toBe(false);
    expect(book.recordHeaders('a', headers(0.8, 0.3), NOW)).toBe(true);
    book.recordHeaders('b', headers(0.1, 0.9), NOW);
    const s = book.snapshot('a', NOW + 1000)!;
    expect(s.fiveHour).toMatchObject({ utilization: 0.8, resetsAt: NOW + 3_600_000, observedAt: NOW, source: 'headers' });
    expect(s.representativeClaim).toBe('five_hour');
    const h = book.headroom('a', NOW + 1000)!;
    expect(h.fiveHour!.remaining).toBeCloseTo(0.2);
    expect(h.sevenDay!.remaining).toBeCloseTo(0.7);
    expect(h.remaining).toBeCloseTo(0.2);
    expect(h.resetsAt).toBe(NOW + 3_600_000);
    expect(h.ageMs).toBe(1000);
    expect(book.headroom('b', NOW)!.remaining).toBeCloseTo(0.1);
    expect(book.headroom('b', NOW)!.resetsAt).toBe(NOW + 5 * 86_400_000);
  });

  it('a window past its reset reads as fresh, without a timer', () => {
    const book = new UsageBook();
    book.recordHeaders('a', headers(1, 0.3), NOW);
    const h = book.headroom('a', NOW + 3_600_000)!;
    expect(h.fiveHour).toEqual({ remaining: 1, resetsAt: null });
    expect(h.remaining).toBeCloseTo(0.7);
  });

  it('a response naming only one window keeps the other', () => {
    const book = new UsageBook();
    book.recordHeaders('a', headers(0.5, 0.5), NOW);
    book.recordHeaders('a', parseUnifiedHeaders({ [`${P}5h-utilization`]: '0.6', [`${P}5h-reset`]: S(NOW + 3_600_000) }), NOW + 5);
    const s = book.snapshot('a', NOW + 5)!;
    expect(s.fiveHour!.utilization).toBe(0.6);
    expect(s.sevenDay!.utilization).toBe(0.5);
  });

  it('the usage call refreshes the windows', () => {
    const book = new UsageBook();
    book.recordHeaders('a', headers(0.5, 0.5), NOW);
    book.recordUsageAnswer('a', { fiveHour: { utilization: 0.9, resetsAt: NOW + 10 }, sevenDay: null }, NOW + 1);
    const s = book.snapshot('a', NOW + 1)!;
    expect(s.fiveHour).toMatchObject({ utilization: 0.9, source: 'usage_api', observedAt: NOW + 1 });
    expect(s.sevenDay!.utilization).toBe(0.5);
  });
});

describe('account API against the fake', () => {
  let fake: FakeClaudeAuth;
  const http = createUndiciHttp({ timeoutMs: 5_000 });
  beforeEach(async () => {
    fake = await new FakeClaudeAuth().start();
  });
  afterEach(() => fake.close());

  it('GET /api/oauth/usage?at_wall=1&skip_spend=1 with the bearer and OAuth beta; percent windows and juniper_tide', async () => {
    const t = fake.issue();
    fake.usage = {
      five_hour: { utilization: 92.5, resets_at: '2026-12-02T15:00:00Z' },
      seven_day: { utilization: 40, resets_at: '2026-12-06T00:00:00+00:00' },
      juniper_tide: { arm: 'reset', available: true, next_available_at: '2026-12-09T00:00:00Z' },
    };
    const a = await fetchUsage(http, { apiBase: fake.apiBase, accessToken: t.accessToken });
    expect(fake.usageCalls).toHaveLength(1);
    expect(fake.usageCalls[0]!.query).toEqual({ at_wall: '1', skip_spend: '1' });
    expect(fake.usageCalls[0]!.headers.authorization).toBe(`Bearer ${t.accessToken}`);
    expect(fake.usageCalls[0]!.headers['anthropic-beta']).toBe('oauth-2025-04-20');
    expect(a).toEqual({
      fiveHour: { utilization: 0.925, resetsAt: Date.parse('2026-12-02T15:00:00Z') },
      sevenDay: { utilization: 0.4, resetsAt: Date.parse('2026-12-06T00:00:00Z') },
      juniperTide: { arm: 'reset', available: true, nextAvailableAt: Date.parse('2026-12-09T00:00:00Z') },
    });
  });

  it('POST reset_rate_limits with {"program":"juniper_tide"} on the org path; profile names the org', async () => {
    const t = fake.issue();
    const org = await fetchOrganizationUUID(http, { apiBase: fake.apiBase, accessToken: t.accessToken });
    expect(org).toBe(fake.organizationUUID);
    fake.resetScript.push({ json: { result: 'already_used', next_available_at: 1_800_000_000 } });
    const r = await postResetRateLimits(http, { apiBase: fake.apiBase, accessToken: t.accessToken, organizationUUID: org! });
    expect(r).toEqual({ result: 'already_used', nextAvailableAt: 1_800_000_000_000 });
    expect(fake.resetCalls[0]!.path).toBe(`/api/organizations/${org}/reset_rate_limits`);
    expect(JSON.parse(fake.resetCalls[0]!.rawBody)).toEqual({ program: 'juniper_tide' });
    fake.resetScript.push({ json: { result: 'surprise' } });
    await expect(postResetRateLimits(http, { apiBase: fake.apiBase, accessToken: t.accessToken, organizationUUID: org! })).resolves.toEqual({
      result: null,
      nextAvailableAt: null,
    });
  });

  it('errors are typed: http status, malformed body, network', async () => {
    const t = fake.issue();
    const call = { apiBase: fake.apiBase, accessToken: t.accessToken };
    fake.usageScript.push({ status: 500, json: {} });
    await expect(fetchUsage(http, call)).rejects.toMatchObject({ kind: 'http', status: 500 });
    fake.usageScript.push({ status: 200, body: 'oops' });
    await expect(fetchUsage(http, call)).rejects.toMatchObject({ kind: 'malformed' });
    await expect(fetchUsage(http, { ...call, accessToken: 'not-valid-token' })).rejects.toMatchObject({ kind: 'http', status: 401 });
    const e = await fetchUsage(http, { ...call, apiBase: 'http://127.0.0.1:1' }).catch((x) => x);
    expect(e).toBeInstanceOf(AccountApiError);
    expect(e.kind).toBe('network');
  });

  it('the account API base is the setting, else the connection base URL without /v1', () => {
    expect(accountApiBase({ apiBaseUrl: '' }, 'https://api.anthropic.com/v1/')).toBe('https://api.anthropic.com');
    expect(accountApiBase({ apiBaseUrl: 'http://127.0.0.1:9/' }, 'https://api.anthropic.com')).toBe('http://127.0.0.1:9');
  });
});
