// A 429's scope from its evidence: header signals, body wording, and how the provider meters.
import { describe, expect, it } from 'vitest';
import { accountWideHeader, meteredPerAccount, rateLimitScope } from '../../../src/main/engine/resilience/rateLimitScope';

const conn = (o: Partial<Parameters<typeof meteredPerAccount>[0]> = {}) => ({
  provider: 'anthropic',
  authClass: 'apikey' as const,
  kind: 'anthropic' as const,
  baseUrl: 'https://api.anthropic.com',
  ...o,
});

describe('rate-limit scope', () => {
  it('reads the account-wide header signals', () => {
    expect(accountWideHeader({ 'anthropic-ratelimit-unified-status': 'rejected' })).toBe('unified_limit');
    expect(accountWideHeader({ 'anthropic-ratelimit-unified-5h-status': ' REJECTED ' })).toBe('unified_limit');
    expect(accountWideHeader({ 'anthropic-ratelimit-unified-status': 'allowed' })).toBeNull();
    expect(accountWideHeader({ 'x-ratelimit-remaining': '0' })).toBe('key_wide_limit');
    expect(accountWideHeader({ 'x-ratelimit-remaining': '3' })).toBeNull();
    expect(accountWideHeader({ 'x-ratelimit-remaining-org-requests': '0' })).toBe('key_wide_limit');
    expect(accountWideHeader({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-remaining-tokens': '0' })).toBeNull();
    expect(accountWideHeader({ 'anthropic-ratelimit-requests-remaining': '0' })).toBeNull();
    expect(accountWideHeader({})).toBeNull();
  });

  it('knows which providers meter every model against one account', () => {
    expect(meteredPerAccount(conn())).toBe(false);
    expect(meteredPerAccount(conn({ authClass: 'oauth' }))).toBe(true);
    expect(meteredPerAccount(conn({ provider: 'claude', kind: 'anthropic-compatible', authClass: 'oauth' }))).toBe(true);
    expect(meteredPerAccount(conn({ provider: 'codex', kind: 'openai-compatible', authClass: 'oauth' }))).toBe(false);
    expect(meteredPerAccount(conn({ provider: 'glm', kind: 'anthropic-compatible' }))).toBe(true);
    expect(meteredPerAccount(conn({ provider: 'my-zai', kind: 'anthropic-compatible', baseUrl: 'https://api.z.ai/api/anthropic' }))).toBe(true);
    expect(meteredPerAccount(conn({ provider: 'openai', kind: 'openai', baseUrl: 'https://api.openai.com/v1' }))).toBe(false);
  });

  it('picks the scope: any account-wide signal widens to the connection; otherwise the model', () => {
    const none = { header: null, accountWording: false, quotaWording: false };
    const plain = { perAccount: false, perModelQuota: false };
    expect(rateLimitScope(none, plain)).toEqual({ scope: 'model', evidence: null });
    expect(rateLimitScope({ ...none, header: 'unified_limit' }, plain)).toEqual({ scope: 'connection', evidence: 'unified_limit' });
    expect(rateLimitScope({ ...none, accountWording: true }, plain)).toEqual({ scope: 'connection', evidence: 'account_wording' });
    expect(rateLimitScope({ ...none, quotaWording: true }, plain)).toEqual({ scope: 'connection', evidence: 'quota_wording' });
    expect(rateLimitScope({ ...none, quotaWording: true }, { perAccount: false, perModelQuota: true }).scope).toBe('model');
    expect(rateLimitScope(none, { perAccount: true, perModelQuota: false })).toEqual({ scope: 'connection', evidence: 'per_account' });
  });
});
