// The classifier with provider error rules (SPEC §7b): built-in detectors first, then operator
// rules, the built-in catalog, the defaults, and the built-in classification; each verdict names
// the layer the resilience service applies it to.
import { describe, expect, it } from 'vitest';
import { classifyStatus, type RuleContext } from '../../../src/main/engine/resilience/classifyFailure';
import { ErrorRuleRegistry } from '../../../src/main/engine/resilience/errorRuleRegistry';
import type { OperatorErrorRule, ProviderErrorDefaults } from '../../../src/shared/settings';

const NOW = Date.UTC(2026, 0, 1);
const ctx = (provider: string, rules: OperatorErrorRule[] = [], defaults: ProviderErrorDefaults = {}, o = {}): RuleContext => {
  const registry = new ErrorRuleRegistry(o);
  registry.setOperator(rules, defaults);
  return { registry, provider };
};
const classify = (status: number, body: string, rules?: RuleContext, headers: Record<string, string> = {}) =>
  classifyStatus(status, headers, body, NOW, undefined, rules);

describe('the agentrouter built-in rules (honoured: agentrouter is on both allowlists)', () => {
  const ar = ctx('agentrouter');

  it('R-USR-09/10: 无权访问模型 locks the model (scope model) with the declared 6 h, capped later by the lockout maximum', () => {
    const v = classify(403, '{"error":{"message":"无权访问模型 claude-x"}}', ar);
    expect(v).toMatchObject({ reason: 'auth_error', scope: 'model', cooldown: { kind: 'record' }, failover: true, tripsBreaker: false });
    expect(v.rule).toMatchObject({ id: 'agentrouter-model-access-denied', honored: true, cooldown: { mode: 'capped', ms: 6 * 3_600_000 } });
  });

  it('R-USR-11/12: a restated 额度不足 429 is a connection-wide quota with the scaled backoff, never terminal', () => {
    const v = classify(429, '{"error":{"message":"用户额度不足"}}', ar);
    expect(v).toMatchObject({ reason: 'quota_exhausted', scope: 'connection', cooldown: { kind: 'rate_limit' }, modelScopable: false });
    expect(v.rule?.id).toBe('agentrouter-user-quota-exhausted');
  });

  it('R-USR-12: a quota body that also says the credit balance is too low keeps the built-in terminal detector', () => {
    expect(classify(429, '额度不足: credit balance is too low', ar).cooldown).toEqual({ kind: 'terminal', status: 'credits_exhausted' });
  });
});

describe('precedence', () => {
  it('R-PER-18: built-in detectors win for their own phrases (credits, ban, request not allowed, concurrency)', () => {
    const all = ctx('p', [{ provider: 'p', match: 'e', cooldownMs: 600_000 }]);
    expect(classify(403, 'Your credit balance is too low', all).reason).toBe('credits_exhausted');
    expect(classify(403, 'This account has been suspended', all).reason).toBe('banned');
    expect(classify(403, 'Request not allowed', all).reason).toBe('request_rejected');
    expect(classify(429, 'Too many concurrent requests', all).reason).toBe('concurrency_limited');
    expect(classify(429, 'slow down please', all).rule?.id).toBe('operator[0]');
  });

  it('R-PER-10: an operator rule keeps its exact cooldown, whatever the upstream hint says', () => {
    const v = classify(429, 'quota', ctx('p', [{ provider: 'p', match: 'quota', cooldownMs: 600_000 }]), { 'retry-after': '3600' });
    expect(v.cooldown).toEqual({ kind: 'operator', ms: 600_000 });
    expect(v.hint?.ms).toBe(3_600_000);
  });

  it('R-PER-12/16: a default applies when nothing matched, as a floor under the hint', () => {
    const v = classify(503, 'upstream down', ctx('p', [], { p: { cooldownMs: 120_000 } }));
    expect(v).toMatchObject({ reason: 'server_error', scope: 'connection', cooldown: { kind: 'operator', ms: 120_000, withHint: true }, tripsBreaker: false });
    expect(v.rule?.source).toBe('default');
  });

  it('R-PER-12: with a matching operator rule the rule wins over the default', () => {
    const v = classify(503, 'down', ctx('p', [{ provider: 'p', status: 503, cooldownMs: 300_000 }], { p: { cooldownMs: 120_000 } }));
    expect(v.cooldown).toEqual({ kind: 'operator', ms: 300_000 });
  });

  it('R-PER-14: without a reason the default takes the status-derived one', () => {
    const d = ctx('p', [], { p: { cooldownMs: 120_000 } });
    expect(classify(429, 'slow down', d).reason).toBe(classify(429, 'slow down').reason);
    expect(classify(403, 'nope', d).reason).toBe('forbidden');
    // A bare 402 under a default is a cooldown, never terminal.
    expect(classify(402, '', d)).toMatchObject({ reason: 'quota_exhausted', cooldown: { kind: 'operator' } });
  });

  it('R-PER-13: request-shape errors and a bare 401 keep their own handling under a default', () => {
    const d = ctx('p', [], { p: { cooldownMs: 120_000 } });
    for (const s of [400, 404, 409, 413, 422, 401]) expect(classify(s, 'x', d), String(s)).toEqual(classify(s, 'x'));
  });

  it('R-PER-19: an operator rule with status 400 never fires', () => {
    const v = classify(400, 'bad', ctx('p', [{ provider: 'p', status: 400, cooldownMs: 600_000 }]));
    expect(v).toMatchObject({ reason: 'bad_request', scope: 'request', rule: null });
  });

  it('R-PER-04: a non-allowlisted built-in match travels with the verdict and changes nothing else', () => {
    const plain = classify(429, 'slow down');
    const v = classify(429, 'slow down', ctx('opencode'));
    expect(v.rule).toMatchObject({ id: 'opencode-rate-limit', honored: false });
    expect({ ...v, rule: null }).toEqual(plain);
  });

  it('rule scopes: provider trips the breaker; model records on the connection; connection cools it', () => {
    const p = classify(500, 'x', ctx('p', [{ provider: 'p', status: 500, scope: 'provider', cooldownMs: 60_000 }]));
    expect(p).toMatchObject({ scope: 'provider', tripsBreaker: true, countsForWindowGate: true, cooldown: { kind: 'record' } });
    const m = classify(429, 'x', ctx('p', [{ provider: 'p', status: 429, scope: 'model' }]));
    expect(m).toMatchObject({ scope: 'model', cooldown: { kind: 'record' }, reason: 'rate_limit_exceeded' });
    const c = classify(403, 'x', ctx('p', [{ provider: 'p', status: 403, reason: 'quota_exhausted' }]));
    expect(c).toMatchObject({ scope: 'connection', cooldown: { kind: 'rate_limit' }, reason: 'quota_exhausted' });
  });
});

describe('R-PER-03: adding a provider to the full-text list leaves every other provider byte for byte', () => {
  const failures: [number, string][] = [
    [429, '{"error":{"message":"slow down"}}'],
    [403, '{"error":{"message":"用户额度不足"}}'],
    [503, 'unavailable'],
    [401, 'bad key'],
    [402, ''],
    [404, 'no such model'],
  ];
  it('for a provider with built-in rules and for one without', () => {
    for (const provider of ['opencode', 'deepseek']) {
      const before = ctx(provider);
      const after = ctx(provider, [], {}, { fullTextProviders: ['agentrouter', 'newgateway'], honorsScopeProviders: ['agentrouter', 'newgateway'] });
      for (const [s, body] of failures) {
        expect(JSON.stringify(classify(s, body, after)), `${provider} ${s}`).toBe(JSON.stringify(classify(s, body, before)));
      }
    }
    // And a provider no rule knows classifies exactly as without any rules.
    for (const [s, body] of failures) expect(classify(s, body, ctx('deepseek'))).toEqual(classify(s, body));
  });
});
