// Validation of the operator rule settings (R-PER-06/09/11, R-CM-06), the outbound-proxy URL
// check and mask, and the rule tester's words.
import { describe, expect, it } from 'vitest';
import { ErrorRuleRegistry } from '../../../src/main/engine/resilience/errorRuleRegistry';
import { explainProviderError, formatMs } from '../../../src/main/engine/resilience/errorRuleTester';
import { checkOutboundProxy, maskOutboundProxy } from '../../../src/shared/outboundProxy';
import { defaultValues, validatePatch } from '../../../src/shared/settings';

const MIN = 60_000;

describe('operator rule settings', () => {
  const check = (patch: Record<string, unknown>) => validatePatch(patch);

  it('R-PER-06: a rule needs a status or a match; match is text; no unknown fields', () => {
    expect(check({ providerErrorRules: [{ provider: 'glm', match: 'quota' }] }).ok).toBe(true);
    expect(check({ providerErrorRules: [{ provider: 'glm', status: 429 }] }).ok).toBe(true);
    expect(check({ providerErrorRules: [{ provider: 'glm', cooldownMs: MIN }] })).toMatchObject({
      ok: false,
      field: 'providerErrorRules',
      message: 'providerErrorRules[0].match needs a status, a match text, or both',
    });
    expect(check({ providerErrorRules: [{ provider: 'glm', match: '   ' }] })).toMatchObject({ ok: false });
    expect(check({ providerErrorRules: [{ provider: 'glm', status: 429, regex: 'a.*' }] })).toMatchObject({ ok: false, field: 'providerErrorRules' });
  });

  it('R-PER-09/R-CM-06: cooldownMs from 1 s to 30 days (43,200 min), refused beyond, at most 50 rules', () => {
    expect(check({ providerErrorRules: [{ provider: 'glm', status: 429, cooldownMs: 43_200 * MIN }] }).ok).toBe(true);
    expect(check({ providerErrorRules: [{ provider: 'glm', status: 429, cooldownMs: 43_201 * MIN }] })).toMatchObject({
      ok: false,
      message: 'providerErrorRules[0].cooldownMs must be at most 30 days (2592000000 ms)',
    });
    expect(check({ providerErrorRules: [{ provider: 'glm', status: 429, cooldownMs: 500 }] })).toMatchObject({ ok: false });
    const many = Array.from({ length: 51 }, () => ({ provider: 'glm', status: 429 }));
    expect(check({ providerErrorRules: many })).toMatchObject({ ok: false, message: 'providerErrorRules lists more than 50 rules' });
    expect(check({ providerErrorRules: many.slice(0, 50) }).ok).toBe(true);
  });

  it('R-PER-11: defaults need 1 min to 30 days; scope and reason are optional and checked', () => {
    expect(check({ providerErrorDefaults: { glm: { cooldownMs: 120_000 } } }).ok).toBe(true);
    expect(check({ providerErrorDefaults: { glm: { cooldownMs: 30_000 } } })).toMatchObject({
      ok: false,
      message: 'providerErrorDefaults.glm.cooldownMs must be at least 1 minute (60000 ms)',
    });
    expect(check({ providerErrorDefaults: { glm: { cooldownMs: MIN, scope: 'everything' } } })).toMatchObject({ ok: false });
    expect(check({ providerErrorDefaults: { glm: { cooldownMs: MIN, reason: 'banned' } } })).toMatchObject({ ok: false });
  });

  it('the probe URL is off by default and must be http(s)', () => {
    expect(defaultValues()['egress.probeUrl']).toBe('');
    expect(check({ 'egress.probeUrl': 'https://api.ipify.org' }).ok).toBe(true);
    expect(check({ 'egress.probeUrl': 'ftp://x' }).ok).toBe(false);
  });
});

describe('outbound proxy URLs', () => {
  it('accepts http(s) and socks5 proxies, refuses paths and a SOCKS URL without port', () => {
    expect(checkOutboundProxy('http://proxy.local:3128')).toMatchObject({ ok: true, kind: 'http', hasCredentials: false });
    expect(checkOutboundProxy('socks5://u:p@127.0.0.1:1080')).toMatchObject({ ok: true, kind: 'socks5', hasCredentials: true });
    expect(checkOutboundProxy('socks5h://127.0.0.1:1080').ok).toBe(true);
    expect(checkOutboundProxy('socks5://127.0.0.1').ok).toBe(false);
    expect(checkOutboundProxy('http://proxy.local:3128/path').ok).toBe(false);
    expect(checkOutboundProxy('ftp://proxy.local').ok).toBe(false);
  });

  it('masks credentials, keeps host and port', () => {
    expect(maskOutboundProxy('socks5://user:secret@10.0.0.2:1080')).toBe('socks5://••••@10.0.0.2:1080');
    expect(maskOutboundProxy('http://proxy.local:3128')).toBe('http://proxy.local:3128');
  });
});

describe('the rule tester', () => {
  const v = defaultValues();
  const registry = new ErrorRuleRegistry();
  registry.setOperator([{ provider: 'glm', match: 'insufficient', cooldownMs: 10 * MIN }], { acme: { cooldownMs: 2 * MIN } });
  const test = (provider: string, status: number, body: string) => explainProviderError(registry, { provider, status, body }, 0, v);

  it('agentrouter quota: restated to 429, the built-in connection rule, the client told 60 s', () => {
    const r = test('agentrouter', 403, '{"error":{"message":"用户额度不足"}}');
    expect(r).toMatchObject({
      restated: { fromStatus: 403, toStatus: 429, clientRetryAfterMs: 60_000 },
      status: 429,
      matched: { source: 'builtin', id: 'agentrouter-user-quota-exhausted', honored: true },
      reason: 'quota_exhausted',
      scope: 'connection',
      terminal: null,
      clientRetryAfterMs: 60_000,
    });
    expect(r.effect).toContain('Cools the whole connection');
  });

  it('agentrouter model access denied: a model lock capped at the lockout maximum', () => {
    const r = test('agentrouter', 403, '无权访问模型');
    expect(r).toMatchObject({ restated: null, status: 403, scope: 'model', matched: { id: 'agentrouter-model-access-denied' } });
    expect(r.effect).toBe('Locks this model on this connection for 30 min (declared 6 h, capped by the lockout maximum); the connection keeps serving its other models.');
  });

  it('an operator rule, a default, a detector, the 400 gap and an informational match', () => {
    expect(test('glm', 429, 'insufficient balance?')).toMatchObject({ matched: { source: 'detector', id: 'credits_exhausted' }, terminal: 'credits_exhausted' });
    const op = test('glm', 429, 'Insufficient_user_quota');
    expect(op).toMatchObject({ matched: { source: 'operator', id: 'operator[0]', index: 0 }, cooldownMs: 10 * MIN });
    expect(op.effect).toBe('Cools the whole connection for exactly 10 min (never shortening a longer cooldown).');
    expect(test('acme', 503, 'down').effect).toBe("Cools the whole connection for 2 min, or the upstream's retry hint if longer (never shortening a longer cooldown).");
    expect(test('acme', 400, 'bad').notes.join(' ')).toContain('never checked against rules');
    expect(test('opencode', 429, 'slow').matched).toMatchObject({ source: 'builtin', honored: false });
    expect(test('deepseek', 404, 'no').matched).toMatchObject({ source: 'none', id: null });
  });

  it('formats durations in words', () => {
    expect([formatMs(3_000), formatMs(10 * MIN), formatMs(6 * 60 * MIN), formatMs(30 * 24 * 60 * MIN)]).toEqual(['3 s', '10 min', '6 h', '30 days']);
  });
});
