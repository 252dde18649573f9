// The provider error-rule matcher (SPEC §7b): operator rules, the built-in catalog behind its two
// allowlists, and the general defaults, with the precedence of R-PER-05..19.
import { describe, expect, it } from 'vitest';
import { errorViewOf, ErrorRuleRegistry } from '../../../src/main/engine/resilience/errorRuleRegistry';
import type { BuiltInErrorRule } from '../../../src/main/engine/resilience/providerErrorRules';
import type { OperatorErrorRule } from '../../../src/shared/settings';

const CATALOG: BuiltInErrorRule[] = [
  { id: 'ar-text', providers: ['agentrouter', 'gw'], textMarkers: ['spent'], reason: 'quota_exhausted', scope: 'connection', note: '' },
  { id: 'gw-code', providers: ['gw'], codes: ['insufficient_user_quota'], reason: 'quota_exhausted', scope: 'connection', note: '' },
  { id: 'gw-429', providers: ['gw'], statuses: [429], reason: 'rate_limit_exceeded', scope: 'connection', note: '' },
];
const registry = (rules: OperatorErrorRule[] = [], defaults = {}) => {
  const r = new ErrorRuleRegistry({ catalog: CATALOG, fullTextProviders: ['agentrouter'], honorsScopeProviders: ['agentrouter'] });
  r.setOperator(rules, defaults);
  return r;
};

describe('built-in rules and the allowlists', () => {
  it('R-PER-01: a body marker fires for an allowlisted provider, never for another built-in provider', () => {
    const r = registry();
    expect(r.match('agentrouter', 429, 'account spent')?.id).toBe('ar-text');
    expect(r.match('gw', 403, 'account spent')).toBeNull();
  });

  it('R-PER-02: status and code/type rules fire for providers off the full-text list', () => {
    const r = registry();
    expect(r.match('gw', 403, '{"error":{"code":"insufficient_user_quota","message":"spent"}}')?.id).toBe('gw-code');
    expect(r.match('gw', 429, 'whatever')?.id).toBe('gw-429');
    expect(errorViewOf('{"type":"error","error":{"type":"rate_limit_error"}}')).toMatchObject({ type: 'rate_limit_error', code: null });
  });

  it('R-PER-04: the scope is acted on only for allowlisted providers; elsewhere the match is informational', () => {
    const r = registry();
    expect(r.match('agentrouter', 429, 'spent')?.honored).toBe(true);
    expect(r.match('gw', 429, 'x')).toMatchObject({ id: 'gw-429', scope: 'connection', honored: false });
  });

  it('R-PER-05: an operator rule for a provider gives its built-in rules the full text and honours their scope', () => {
    const r = registry([{ provider: 'gw', status: 500 }]);
    expect(r.match('gw', 403, 'account spent')).toMatchObject({ id: 'ar-text', honored: true });
  });

  it('R-PER-15: a default counts as an operator rule for the allowlists', () => {
    const r = registry([], { gw: { cooldownMs: 120_000 } });
    expect(r.hasOperatorRuleFor('gw')).toBe(true);
    expect(r.match('gw', 403, 'spent')).toMatchObject({ id: 'ar-text', honored: true });
  });
});

describe('operator rules', () => {
  it('R-PER-06: match is a case-insensitive substring, never a RegExp', () => {
    const r = registry([{ provider: 'p', match: 'QuOtA' }, { provider: 'q', match: 'a.*b' }]);
    expect(r.match('p', 429, 'no more quota')?.id).toBe('operator[0]');
    expect(r.match('q', 429, 'a then b')).toBeNull();
    expect(r.match('q', 429, 'literally a.*b here')?.id).toBe('operator[1]');
  });

  it('R-PER-07: status and match combine with AND; an omitted field matches anything', () => {
    const r = registry([{ provider: 'p', status: 429, match: 'x' }]);
    expect(r.match('p', 503, 'x marks')).toBeNull();
    expect(r.match('p', 429, 'x marks')).not.toBeNull();
    const any = registry([{ provider: 'p', match: 'insufficient_quota' }]);
    expect(any.match('p', 429, '{"code":"insufficient_quota"}')).not.toBeNull();
    expect(any.match('p', 403, '{"code":"insufficient_quota"}')).not.toBeNull();
  });

  it('R-PER-08: the first matching rule wins', () => {
    const r = registry([
      { provider: 'p', match: 'quota', cooldownMs: 600_000 },
      { provider: 'p', status: 429, cooldownMs: 1_200_000 },
    ]);
    expect(r.match('p', 429, 'quota')).toMatchObject({ id: 'operator[0]', cooldown: { mode: 'exact', ms: 600_000 } });
  });

  it('operator rules win over built-in rules; scope defaults to connection', () => {
    const r = registry([{ provider: 'agentrouter', match: 'spent', scope: 'model', cooldownMs: 60_000 }]);
    expect(r.match('agentrouter', 429, 'spent')).toMatchObject({ source: 'operator', scope: 'model' });
    expect(registry([{ provider: 'p', status: 429 }]).match('p', 429, '')?.scope).toBe('connection');
  });

  it('R-PER-19: HTTP 400 is never checked against rules, whatever they say', () => {
    const r = registry([{ provider: 'p', status: 400, cooldownMs: 600_000 }, { provider: 'p', match: 'bad' }]);
    expect(r.match('p', 400, 'bad request')).toBeNull();
    expect(r.defaultFor('p', 400)).toBeNull();
  });
});

describe('general defaults', () => {
  const r = registry([], { p: { cooldownMs: 120_000 } });

  it('R-PER-12: only for 402, 403, 408, 429 and 5xx; the cooldown is a floor under the upstream hint (R-PER-16)', () => {
    for (const s of [402, 403, 408, 429, 500, 503, 529]) expect(r.defaultFor('p', s), String(s)).toMatchObject({ cooldown: { mode: 'floor', ms: 120_000 } });
  });

  it('R-PER-13: never for request-shape errors or a bare 401', () => {
    for (const s of [400, 401, 404, 409, 413, 422]) expect(r.defaultFor('p', s), String(s)).toBeNull();
  });

  it('R-PER-14/15: no reason = derived later; scope defaults to connection', () => {
    expect(r.defaultFor('p', 429)).toMatchObject({ reason: null, scope: 'connection', source: 'default' });
    expect(r.defaultFor('other', 429)).toBeNull();
  });
});
