// The Claude settings: defaults (the public Claude Code client and Anthropic's endpoints), URL
// checks that name the field, and the config object the modules take.
import { describe, expect, it } from 'vitest';
import { accountApiBase, claudeConfigFrom } from '../../../src/main/engine/claude/claudeConfig';
import { resolveSettings } from '../../../src/main/engine/settings/resolve';
import { CLAUDE_CODE_CLIENT_ID, SETTING_GROUPS, defaultValues, validatePatch } from '../../../src/shared/settings';

describe('claude settings', () => {
  it('default to the public Claude Code client and Anthropic endpoints', () => {
    const cfg = claudeConfigFrom(defaultValues());
    expect(cfg).toEqual({
      authorizeUrl: 'https://claude.ai/oauth/authorize',
      tokenUrl: 'https://console.anthropic.com/v1/oauth/token',
      pasteRedirectUri: 'https://console.anthropic.com/oauth/code/callback',
      clientId: CLAUDE_CODE_CLIENT_ID,
      scopes: 'org:create_api_key user:profile user:inference',
      apiBaseUrl: '',
      refreshMarginMs: 5 * 60_000,
    });
    expect(accountApiBase(cfg, 'https://api.anthropic.com')).toBe('https://api.anthropic.com');
    expect(SETTING_GROUPS.some((g) => g.id === 'claude')).toBe(true);
  });

  it('every endpoint can point at a fake; a saved value is what the modules read', () => {
    const v = validatePatch({ claude: { tokenUrl: 'http://127.0.0.1:4567/v1/oauth/token', apiBaseUrl: 'http://127.0.0.1:4567', clientId: 'test-client' } });
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    const persisted = Object.fromEntries(v.entries.map((e) => [e.key, e.value]));
    const cfg = claudeConfigFrom(resolveSettings({}, persisted).values);
    expect(cfg.tokenUrl).toBe('http://127.0.0.1:4567/v1/oauth/token');
    expect(cfg.apiBaseUrl).toBe('http://127.0.0.1:4567');
    expect(cfg.clientId).toBe('test-client');
  });

  it('refuses a value that is not an http(s) URL, naming the field', () => {
    for (const bad of ['ftp://x.example/token', 'not a url', 42]) {
      const v = validatePatch({ 'claude.tokenUrl': bad });
      expect(v).toMatchObject({ ok: false, field: 'claude.tokenUrl' });
    }
    expect(validatePatch({ 'claude.clientId': '  ' })).toMatchObject({ ok: false, field: 'claude.clientId' });
    expect(validatePatch({ 'claude.apiBaseUrl': '' })).toMatchObject({ ok: true });
  });

  it('clamps the refresh margin to 0-60 min', () => {
    const v = validatePatch({ 'claude.refreshMarginMs': 7_200_000 });
    expect(v).toMatchObject({ ok: true, adjusted: [{ key: 'claude.refreshMarginMs', from: 7_200_000, to: 3_600_000 }] });
  });
});
