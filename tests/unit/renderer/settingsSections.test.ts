// The settings sections (shared/settings/sections.ts): every setting is in exactly one part of one
// section; search matches plain words first and technical names second; the plain words of every
// setting and section pass the jargon check a Playwright test runs over the page; and a typed value
// is checked before anything is sent (range in words, the rule against another saved value).
import { describe, expect, it } from 'vitest';
import { checkDraft, parseSettingText, settingText } from '../../../src/renderer/lib/settingInput';
import { SETTING_KEYS, settingDefs } from '../../../src/shared/settings';
import { filterSections, matchSetting, sectionOf, SETTING_SECTIONS } from '../../../src/shared/settings/sections';
import { findJargon } from '../../e2e/jargon';
import { settingsView } from './builders';

const view = settingsView();
const s = (k: string) => view.settings.find((x) => x.key === k)!;
const keysOf = (r: ReturnType<typeof filterSections>) => r.flatMap((g) => g.parts.flatMap((p) => p.settings.map((x) => x.setting.key)));

describe('settings sections', () => {
  it('place every setting in exactly one part of one section, and list no unknown key', () => {
    const placed = SETTING_SECTIONS.flatMap((sec) => sec.parts.flatMap((p) => p.keys));
    expect([...placed].sort()).toEqual([...SETTING_KEYS].sort());
    expect(new Set(placed).size).toBe(placed.length);
    for (const k of SETTING_KEYS) expect(sectionOf(k), k).toBeDefined();
  });

  it('are a handful, none empty, with distinct ids and titles', () => {
    expect(SETTING_SECTIONS.length).toBeGreaterThanOrEqual(6);
    expect(SETTING_SECTIONS.length).toBeLessThanOrEqual(12);
    expect(new Set(SETTING_SECTIONS.map((x) => x.id)).size).toBe(SETTING_SECTIONS.length);
    expect(new Set(SETTING_SECTIONS.map((x) => x.title)).size).toBe(SETTING_SECTIONS.length);
    for (const sec of SETTING_SECTIONS) {
      expect(sec.parts.length).toBeGreaterThan(0);
      for (const p of sec.parts) expect(p.keys.length, `${sec.id}/${p.title}`).toBeGreaterThan(0);
    }
  });

  it('with no query, show every setting in section order', () => {
    const all = filterSections(view.settings, '');
    expect(all.map((g) => g.section.id)).toEqual(SETTING_SECTIONS.map((x) => x.id));
    expect(keysOf(all)).toHaveLength(SETTING_KEYS.length);
  });
});

describe('settings search', () => {
  it('matches the plain label and description, every word of the query', () => {
    expect(matchSetting(s('modelLockout.baseCooldownMs'), 'first lockout')).toBe('plain');
    expect(matchSetting(s('modelLockout.baseCooldownMs'), 'LOCKOUT')).toBe('plain');
    expect(matchSetting(s('proxy.port'), 'lockout')).toBeNull();
    const hits = keysOf(filterSections(view.settings, 'lockout'));
    expect(hits).toContain('modelLockout.enabled');
    expect(hits).not.toContain('proxy.port');
    expect(hits.length).toBeLessThan(SETTING_KEYS.length / 3);
  });

  it('finds a setting by its key or environment variable, reported as a technical match', () => {
    expect(matchSetting(s('requestQueue.maxWaitMs'), 'requestQueue.maxWaitMs')).toBe('technical');
    expect(matchSetting(s('requestQueue.maxWaitMs'), 'rate_limit_max_wait_ms')).toBe('technical');
    expect(keysOf(filterSections(view.settings, 'requestQueue.maxWaitMs'))).toEqual(['requestQueue.maxWaitMs']);
  });

  it('returns nothing (the page says "no setting matches") for words nothing contains', () => {
    expect(filterSections(view.settings, 'zebra crossing')).toEqual([]);
  });
});

describe('plain words in the settings schema', () => {
  it('no label, description or section text carries a requirement id, an internal code or a setting key', () => {
    const texts = [
      ...SETTING_KEYS.flatMap((k) => [settingDefs[k].label, settingDefs[k].description]),
      ...SETTING_SECTIONS.flatMap((sec) => [sec.title, sec.summary, ...sec.parts.map((p) => p.title ?? '')]),
    ];
    const hits = texts.flatMap((t) => findJargon(t).map((h) => `${h.text} in "${t.slice(0, 60)}"`));
    expect(hits).toEqual([]);
  });

  it('the lockout switch says it governs only status lockouts, and that a plain 429 always pauses the model', () => {
    const d = settingDefs['modelLockout.enabled'].description;
    expect(d).toMatch(/^Off by default/);
    expect(d).toContain('a 429 without account-wide evidence always pauses just that model on that connection, on or off');
    expect(settingDefs['connectionCooldown.useUpstreamRetryHints'].description).toContain('just the limited model on that connection');
  });
});

describe('checking a typed value before it is sent', () => {
  const values = Object.fromEntries(view.settings.map((x) => [x.key, x.value]));

  it('an out-of-range number is refused with the range in words', () => {
    expect(checkDraft(s('proxy.maxAttempts'), '99', values)).toEqual({ ok: false, message: 'must be between 1 and 20' });
    expect(checkDraft(s('connectionCooldown.apikeyBaseMs'), '5', values)).toEqual({
      ok: false,
      message: 'must be between 100 and 86,400,000 ms (100 ms – 1 day)',
    });
    expect(checkDraft(s('proxy.maxAttempts'), '6', values)).toEqual({ ok: true, value: 6 });
  });

  it('a value against another saved one is refused (the longest lockout under the first)', () => {
    expect(checkDraft(s('modelLockout.maxCooldownMs'), '1000', values)).toEqual({ ok: false, message: 'must be at least the first lockout duration' });
  });

  it('a one-string setting (a URL) is edited as plain text, not as JSON', () => {
    const url = s('claude.tokenUrl');
    expect(settingText(url)).toBe('https://console.anthropic.com/v1/oauth/token');
    expect(parseSettingText(url, 'http://127.0.0.1:9/token')).toEqual({ ok: true, value: 'http://127.0.0.1:9/token' });
    expect(parseSettingText(url, 'not a url').ok).toBe(false);
    expect(parseSettingText(s('claude.apiBaseUrl'), '')).toEqual({ ok: true, value: '' });
  });

  it('an item error of a list names the item from 1, without the setting key', () => {
    const r = checkDraft(s('providerQuotaOverrides'), '[{"provider":"a","rateLimitCooldownSeconds":5},{"provider":"b","rateLimitCooldownSeconds":0}]', values);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).not.toContain('providerQuotaOverrides');
  });
});
