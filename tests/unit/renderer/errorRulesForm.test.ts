// The Error rules editors' form logic (R-CM-05/06): duration choices, rows to setting values and
// back, errors keyed by row and field, and engine messages mapped to rows.
import { describe, expect, it } from 'vitest';
import { buildCreateInput, buildUpdateInput, emptyForm, formFromConnection } from '../../../src/renderer/lib/connectionForm';
import {
  defaultsFromRows,
  durationFromMs,
  durationToMs,
  emptyDefaultRow,
  emptyRuleRow,
  rowErrorFromMessage,
  rowsFromDefaults,
  rowsFromRules,
  rulesFromRows,
} from '../../../src/renderer/lib/errorRulesForm';
import { connection } from './builders';

const MIN = 60_000;

describe('duration choices (R-CM-06)', () => {
  it('Default, 30 min, 1 h, 5 h, 24 h or custom minutes', () => {
    expect(durationFromMs(undefined)).toEqual({ choice: 'default', customMinutes: '' });
    expect(durationFromMs(30 * MIN).choice).toBe('30m');
    expect(durationFromMs(5 * 60 * MIN).choice).toBe('5h');
    expect(durationFromMs(90 * MIN)).toEqual({ choice: 'custom', customMinutes: '90' });
    expect(durationToMs({ choice: '24h', customMinutes: '' })).toEqual({ ok: true, ms: 24 * 60 * MIN });
    expect(durationToMs({ choice: 'default', customMinutes: '' })).toEqual({ ok: true, ms: undefined });
  });

  it('custom is 1 to 43,200 whole minutes', () => {
    expect(durationToMs({ choice: 'custom', customMinutes: '43,200' })).toEqual({ ok: true, ms: 43_200 * MIN });
    expect(durationToMs({ choice: 'custom', customMinutes: '1' })).toEqual({ ok: true, ms: MIN });
    expect(durationToMs({ choice: 'custom', customMinutes: '43201' })).toMatchObject({ ok: false });
    expect(durationToMs({ choice: 'custom', customMinutes: '0' })).toMatchObject({ ok: false });
    expect(durationToMs({ choice: 'custom', customMinutes: '1.5' })).toMatchObject({ ok: false, message: 'enter whole minutes' });
  });
});

describe('rule rows', () => {
  it('round-trip the stored rules', () => {
    const rules = [
      { provider: 'glm', status: 429, match: 'quota', reason: 'quota_exhausted' as const, scope: 'model' as const, cooldownMs: 30 * MIN },
      { provider: 'acme', match: 'busy', scope: 'connection' as const },
    ];
    expect(rulesFromRows(rowsFromRules(rules))).toEqual({ ok: true, value: rules });
  });

  it('errors name the row and the field', () => {
    const rows = [
      { ...emptyRuleRow('glm'), status: '429' },
      { ...emptyRuleRow('glm') },
      { ...emptyRuleRow('GLM!'), status: '503' },
      { ...emptyRuleRow('glm'), status: 'abc' },
      { ...emptyRuleRow('glm'), status: '429', duration: { choice: 'custom' as const, customMinutes: '50000' } },
    ];
    const r = rulesFromRows(rows);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.errors).sort()).toEqual(['1.match', '2.provider', '3.status', '4.cooldownMs']);
  });
});

describe('default rows', () => {
  it('round-trip, need a duration and one row per provider', () => {
    const defaults = { glm: { cooldownMs: 30 * MIN, scope: 'connection' as const } };
    expect(defaultsFromRows(rowsFromDefaults(defaults))).toEqual({ ok: true, value: defaults });
    const r = defaultsFromRows([emptyDefaultRow('glm'), emptyDefaultRow('glm'), { ...emptyDefaultRow('x'), duration: { choice: 'default', customMinutes: '' } }]);
    expect(r).toMatchObject({ ok: false, errors: { '1.provider': 'glm has a default already', '2.cooldownMs': 'a default needs a duration' } });
  });
});

describe('engine messages', () => {
  it('map to the row they name', () => {
    expect(rowErrorFromMessage('providerErrorRules[3].cooldownMs must be at most 30 days (2592000000 ms)')).toEqual({
      key: '3.cooldownMs',
      message: 'must be at most 30 days (2592000000 ms)',
    });
    expect(rowErrorFromMessage('providerErrorDefaults.z.ai.cooldownMs must be at least 1 minute (60000 ms)', (p) => (p === 'z.ai' ? 2 : -1))).toEqual({
      key: '2.cooldownMs',
      message: 'must be at least 1 minute (60000 ms)',
    });
    expect(rowErrorFromMessage('providerErrorRules lists more than 50 rules')).toBeNull();
  });
});

describe('the connection form\'s outbound proxy', () => {
  it('an untouched masked proxy is not sent; a new one is; clearing it sends null; a bad URL is refused in place', () => {
    const c = connection({ outboundProxy: 'socks5://••••@10.0.0.2:1080' });
    const f = formFromConnection(c);
    expect(f.outboundProxy).toBe('socks5://••••@10.0.0.2:1080');
    expect(buildUpdateInput(f, c)).toEqual({ ok: true, input: {} });
    expect(buildUpdateInput({ ...f, outboundProxy: 'http://proxy.local:3128' }, c)).toEqual({ ok: true, input: { outboundProxy: 'http://proxy.local:3128' } });
    expect(buildUpdateInput({ ...f, outboundProxy: '' }, c)).toEqual({ ok: true, input: { outboundProxy: null } });
    expect(buildUpdateInput({ ...f, outboundProxy: 'ftp://x' }, c)).toMatchObject({ ok: false, errors: { outboundProxy: expect.stringContaining('socks5://') } });
    const created = buildCreateInput({ ...emptyForm('openai-compatible'), name: 'N', provider: 'p', baseUrl: 'http://x.test', outboundProxy: 'socks5://u:p@127.0.0.1:1080' });
    expect(created.ok && created.input.outboundProxy).toBe('socks5://u:p@127.0.0.1:1080');
  });
});
