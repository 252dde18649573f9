// The one failure classifier: status + headers + body (or a transport error) -> verdict.
import { describe, expect, it } from 'vitest';
import { classifyFailure, CONCURRENCY_LIMIT_COOLDOWN_MS } from '../../../src/main/engine/resilience/classifyFailure';
import type { UpstreamFailure } from '../../../src/main/engine/resilience/port';

const NOW = Date.UTC(2026, 0, 1);
const http = (status: number, body: unknown = '', headers: Record<string, string> = {}): UpstreamFailure => ({
  kind: 'http',
  status,
  headers,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  message: `upstream answered ${status}`,
});
const transport = (kind: UpstreamFailure['kind']): UpstreamFailure => ({ kind, status: null, headers: {}, body: '', message: kind });
const classify = (f: UpstreamFailure) => classifyFailure(f, NOW);

describe('classifyFailure: which layer owns a failure', () => {
  it.each([408, 500, 502, 503, 504])('%i is provider-level: it trips the breaker, records the error, fails over', (status) => {
    const v = classify(http(status, { error: { message: 'upstream trouble' } }));
    expect(v).toMatchObject({ scope: 'provider', tripsBreaker: true, failover: true, countsForWindowGate: true, outlier: true });
    expect(v.cooldown).toEqual({ kind: 'record' });
  });

  it.each([400, 401, 403, 404, 409, 413, 422, 429, 501, 529])('%i never trips the breaker', (status) => {
    expect(classify(http(status)).tripsBreaker).toBe(false);
  });

  it('a 529 overload fails over and feeds the window gate but not the breaker', () => {
    const v = classify(http(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    expect(v).toMatchObject({ reason: 'overloaded', tripsBreaker: false, countsForWindowGate: true, failover: true, outlier: true });
  });

  it.each(['connect_timeout', 'headers_timeout', 'network'] as const)('a transport failure (%s) is provider-level and trips the breaker', (kind) => {
    expect(classify(transport(kind))).toMatchObject({ scope: 'provider', tripsBreaker: true, failover: true, outlier: true });
  });

  it('a stream stall belongs to its request: no breaker, no gate, a stall cooldown rule, failover before commit', () => {
    expect(classify(transport('stall'))).toMatchObject({
      reason: 'stream_stall',
      tripsBreaker: false,
      countsForWindowGate: false,
      cooldown: { kind: 'stall' },
      failover: true,
    });
  });

  it('a stream that breaks after commit is recorded only', () => {
    expect(classify({ kind: 'stream_error', status: null, headers: {}, body: '', message: 'reset' })).toMatchObject({
      reason: 'stream_error',
      tripsBreaker: false,
      cooldown: { kind: 'record' },
    });
  });

  it('an error event opening a 200 stream is classified by its mapped status', () => {
    const v = classifyFailure({ kind: 'stream_error', status: 429, headers: {}, body: '{"type":"error","error":{"type":"rate_limit_error"}}', message: 'x' }, NOW);
    expect(v.reason).toBe('rate_limit_exceeded');
  });

  it.each([400, 413, 422, 409])('%i is the request’s own fault: nothing recorded, no failover', (status) => {
    expect(classify(http(status, { error: { message: 'bad field' } }))).toMatchObject({ scope: 'request', failover: false, cooldown: { kind: 'none' } });
  });

  it('404 is model-scoped and fails over (another connection may serve the model)', () => {
    expect(classify(http(404, { error: { message: 'model not found' } }))).toMatchObject({
      reason: 'not_found',
      scope: 'model',
      failover: true,
      lockoutScope: 'exact',
      cooldown: { kind: 'record' },
    });
  });

  it('405 and 501 fail over without blaming the connection', () => {
    expect(classify(http(405))).toMatchObject({ failover: true, cooldown: { kind: 'none' } });
    expect(classify(http(501))).toMatchObject({ failover: true, cooldown: { kind: 'none' }, tripsBreaker: false });
  });
});

describe('classifyFailure: rate limits, quota and concurrency', () => {
  it('a plain 429 is a rate limit of that model only: the precedence-chain cooldown, scoped to (connection, model)', () => {
    expect(classify(http(429, { error: { type: 'rate_limit_error', message: 'slow down' } }))).toMatchObject({
      reason: 'rate_limit_exceeded',
      scope: 'model',
      scopeEvidence: null,
      cooldown: { kind: 'rate_limit' },
      tripsBreaker: false,
      outlier: false,
      failover: true,
      lockoutScope: 'family',
      modelScopable: true,
    });
  });

  it.each([
    ['a rejected unified limit', { 'anthropic-ratelimit-unified-status': 'rejected' }, '', 'unified_limit'],
    ['a rejected unified window', { 'anthropic-ratelimit-unified-7d-status': 'Rejected' }, '', 'unified_limit'],
    ['a spent key-wide x-ratelimit-remaining', { 'x-ratelimit-remaining': '0' }, '', 'key_wide_limit'],
    ['a spent account dimension', { 'x-ratelimit-remaining-requests-account': '0' }, '', 'key_wide_limit'],
    ['account-wide wording', {}, "This request would exceed your account's rate limit.", 'account_wording'],
    ['quota wording', {}, 'You exceeded your current quota', 'quota_wording'],
  ])('%s widens a 429 to the whole connection', (_n, headers, body, evidence) => {
    const v = classify(http(429, body, headers as Record<string, string>));
    expect(v).toMatchObject({ scope: 'connection', scopeEvidence: evidence, cooldown: { kind: 'rate_limit' }, modelScopable: false, tripsBreaker: false });
  });

  it.each([
    ['unified status allowed', { 'anthropic-ratelimit-unified-status': 'allowed_warning' }],
    ['a per-model limit spent', { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-remaining-tokens': '100' }],
    ['Anthropic per-model headers', { 'anthropic-ratelimit-requests-remaining': '0' }],
    ['a key-wide limit with room left', { 'x-ratelimit-remaining': '12' }],
  ])('%s keeps a 429 model-scoped', (_n, headers) => {
    expect(classify(http(429, 'rate limited', headers as Record<string, string>)).scope).toBe('model');
  });

  it('a provider metered per account widens every 429; per-model quota keeps quota wording with the model', () => {
    const perAccount = { perAccount: true, perModelQuota: false };
    expect(classifyFailure(http(429, 'slow down'), NOW, perAccount)).toMatchObject({ scope: 'connection', scopeEvidence: 'per_account' });
    const perModel = { perAccount: false, perModelQuota: true };
    expect(classifyFailure(http(429, 'Quota exceeded for metric requests, model: gemini-pro'), NOW, perModel)).toMatchObject({
      reason: 'quota_exhausted',
      scope: 'model',
    });
    expect(classifyFailure(http(429, 'slow down', { 'anthropic-ratelimit-unified-status': 'rejected' }), NOW, perModel).scope).toBe('connection');
  });

  it.each([
    'Too many concurrent requests for this model',
    'You have hit the CONCURRENCY LIMIT',
    'parallel request limit exceeded',
    '{"error":{"code":"1302","message":"并发数过高，请降低并发"}}',
  ])('a concurrency 429 ("%s") rests the key 1 s, takes no backoff step and never reaches the breaker', (body) => {
    const v = classify(http(429, body));
    expect(v).toMatchObject({
      reason: 'concurrency_limited',
      scope: 'connection',
      cooldown: { kind: 'fixed', ms: CONCURRENCY_LIMIT_COOLDOWN_MS },
      tripsBreaker: false,
      outlier: false,
      failover: true,
    });
  });

  it('a concurrency 429 with Retry-After rests until the hint instead of 1 s', () => {
    expect(classify(http(429, 'too many concurrent requests', { 'retry-after': '5' })).cooldown).toEqual({ kind: 'fixed', ms: 5000 });
  });

  it('a quota phrase wins over a concurrency phrase', () => {
    const v = classify(http(429, 'concurrency limit reached; you exceeded your current quota'));
    expect(v).toMatchObject({ reason: 'quota_exhausted', cooldown: { kind: 'rate_limit' }, scope: 'connection' });
  });

  it('carries the upstream hint and relays it to the client', () => {
    const v = classify(http(429, '', { 'retry-after': '30' }));
    expect(v.hint).toEqual({ ms: 30_000, source: 'retry-after' });
    expect(v.retryAfterMs).toBe(30_000);
  });

  it('has no client retry hint when the upstream gave none', () => {
    expect(classify(http(429)).retryAfterMs).toBeNull();
  });
});

describe('classifyFailure: accounts and terminal states', () => {
  it('401 is a credential rejection (counts toward expired)', () => {
    expect(classify(http(401, { error: { message: 'invalid x-api-key' } }))).toMatchObject({ reason: 'auth_error', cooldown: { kind: 'credential' }, failover: true });
  });

  it('a generic 403 is recoverable: backoff cooldown, never terminal', () => {
    expect(classify(http(403, { error: { message: 'forbidden' } }))).toMatchObject({ reason: 'forbidden', cooldown: { kind: 'backoff' } });
  });

  it('an Anthropic "Request not allowed" 403 is a per-request denial, never a ban', () => {
    const v = classify(http(403, { type: 'error', error: { type: 'permission_error', message: 'Request not allowed: this account is suspended?' } }));
    expect(v).toMatchObject({ reason: 'request_rejected', scope: 'model' });
  });

  it('an account-ban body makes the connection banned', () => {
    expect(classify(http(403, { error: { message: 'Your account has been suspended for violating our terms' } })).cooldown).toEqual({
      kind: 'terminal',
      status: 'banned',
    });
    expect(classify(http(401, 'This organization has been disabled.')).reason).toBe('banned');
  });

  it('a credits body is credits_exhausted, even on a 400 or a 429', () => {
    expect(classify(http(400, { error: { message: 'Your credit balance is too low to access the Anthropic API.' } })).cooldown).toEqual({
      kind: 'terminal',
      status: 'credits_exhausted',
    });
    expect(classify(http(429, 'insufficient balance')).reason).toBe('credits_exhausted');
    expect(classify(http(400, { error: { message: 'credit balance is too low' } })).failover).toBe(true);
  });

  it('a bare 402 is credits_exhausted', () => {
    expect(classify(http(402, 'Payment Required')).reason).toBe('credits_exhausted');
  });

  it('a quota body is never terminal', () => {
    expect(classify(http(429, '用户额度不足')).reason).toBe('quota_exhausted');
    expect(classify(http(403, 'quota exceeded for this key')).reason).toBe('quota_exhausted');
  });
});
