// Claude Code's credentials file, pasted tokens, and the stored bundle.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeCodeCredentialsPath, readClaudeCodeCredentials } from '../../../src/main/engine/claude/claudeCodeCredentials';
import { ClaudeAuthError } from '../../../src/main/engine/claude/claudeAuthError';
import {
  bundleSecrets,
  parseCredentialsFile,
  parsePastedTokens,
  parseStoredBundle,
  serializeBundle,
} from '../../../src/main/engine/claude/tokenBundle';

const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);
const ACCESS = 'sk-ant-oat01-abcdefghijklmnop';
const REFRESH = 'sk-ant-ort01-qrstuvwxyz012345';

function fileWith(inner: Record<string, unknown>) {
  return JSON.stringify({ claudeAiOauth: inner });
}

function errorOf(fn: () => unknown): ClaudeAuthError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ClaudeAuthError) return e;
    throw e;
  }
  throw new Error('expected a ClaudeAuthError');
}

describe('credentials file', () => {
  it('reads accessToken, refreshToken, expiresAt (ms), scopes and subscriptionType', () => {
    const b = parseCredentialsFile(
      fileWith({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: NOW + 3_600_000, scopes: ['user:inference', 'user:profile'], subscriptionType: 'max' }),
      NOW,
    );
    expect(b).toEqual({
      accessToken: ACCESS,
      refreshToken: REFRESH,
      expiresAt: NOW + 3_600_000,
      scopes: ['user:inference', 'user:profile'],
      subscriptionType: 'max',
    });
  });

  it('accepts an ISO expiry, epoch seconds, and an expired token that can be refreshed', () => {
    expect(parseCredentialsFile(fileWith({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: '2026-12-02T13:00:00.000Z' }), NOW).expiresAt).toBe(NOW + 3_600_000);
    expect(parseCredentialsFile(fileWith({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: NOW / 1000 + 60 }), NOW).expiresAt).toBe(NOW + 60_000);
    expect(parseCredentialsFile(fileWith({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: NOW - 1 }), NOW).expiresAt).toBe(NOW - 1);
  });

  it('accepts the bare claudeAiOauth object', () => {
    expect(parseCredentialsFile(JSON.stringify({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: NOW + 1 }), NOW).accessToken).toBe(ACCESS);
  });

  it('says what is wrong: bad JSON (without quoting the file), missing key, missing field, bad field', () => {
    const bad = errorOf(() => parseCredentialsFile(`{"claudeAiOauth": {"accessToken": "${ACCESS}",`, NOW));
    expect(bad.code).toBe('credentials_bad_json');
    expect(bad.message).not.toContain(ACCESS);
    expect(errorOf(() => parseCredentialsFile('[]', NOW)).code).toBe('credentials_bad_json');
    const key = errorOf(() => parseCredentialsFile(JSON.stringify({ mcpOAuth: {} }), NOW));
    expect(key.code).toBe('credentials_missing_key');
    expect(key.field).toBe('claudeAiOauth');
    const field = errorOf(() => parseCredentialsFile(fileWith({ refreshToken: REFRESH, expiresAt: NOW }), NOW));
    expect(field.code).toBe('credentials_missing_field');
    expect(field.field).toBe('claudeAiOauth.accessToken');
    const exp = errorOf(() => parseCredentialsFile(fileWith({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: 'next tuesday' }), NOW));
    expect(exp.code).toBe('credentials_bad_field');
    expect(exp.field).toBe('claudeAiOauth.expiresAt');
    const type = errorOf(() => parseCredentialsFile(fileWith({ accessToken: 42 }), NOW));
    expect(type.code).toBe('credentials_bad_field');
    expect(errorOf(() => parseCredentialsFile(fileWith({ accessToken: 'has spaces in it' }), NOW)).code).toBe('credentials_bad_field');
    expect(bad.toApiError().status).toBe(400);
    expect(field.toApiError().toBody().error).toMatchObject({ code: 'credentials_missing_field', field: 'claudeAiOauth.accessToken' });
  });

  it('refuses an expired access token with no refresh token', () => {
    const e = errorOf(() => parseCredentialsFile(fileWith({ accessToken: ACCESS, expiresAt: NOW - 1000 }), NOW));
    expect(e.code).toBe('credentials_expired');
    expect(e.message).toMatch(/sign in/);
  });
});

describe('pasted tokens', () => {
  it('takes a bare access token (no refresh, expiry unknown)', () => {
    expect(parsePastedTokens({ accessToken: ` ${ACCESS} ` }, NOW)).toEqual({ accessToken: ACCESS, refreshToken: null, expiresAt: null });
  });

  it('takes access + refresh + expiry fields', () => {
    expect(parsePastedTokens({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: NOW + 5 }, NOW)).toEqual({
      accessToken: ACCESS,
      refreshToken: REFRESH,
      expiresAt: NOW + 5,
    });
  });

  it('takes a pasted credentials JSON', () => {
    expect(parsePastedTokens({ accessToken: fileWith({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: NOW + 5 }) }, NOW).refreshToken).toBe(REFRESH);
  });

  it('refuses an empty paste naming the field', () => {
    const e = errorOf(() => parsePastedTokens({ accessToken: '  ' }, NOW));
    expect(e.code).toBe('credentials_missing_field');
    expect(e.field).toBe('accessToken');
  });
});

describe('stored bundle', () => {
  it('round-trips, keeping only known fields', () => {
    const b = { accessToken: ACCESS, refreshToken: REFRESH, expiresAt: NOW, scopes: ['user:inference'], subscriptionType: 'pro', organizationUUID: '2f1c3b8e-1111-4a5b-9c9d-0123456789ab' };
    const s = serializeBundle({ ...b, extra: 'x' } as typeof b);
    expect(JSON.parse(s)).toEqual(b);
    expect(parseStoredBundle(s)).toEqual(b);
  });

  it('reads an older bare-token secret as a bundle without refresh', () => {
    expect(parseStoredBundle(ACCESS)).toEqual({ accessToken: ACCESS, refreshToken: null, expiresAt: null });
  });

  it('lists every secret for the redactor', () => {
    expect(bundleSecrets({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: null })).toEqual([ACCESS, REFRESH]);
    expect(bundleSecrets({ accessToken: ACCESS, refreshToken: null, expiresAt: null })).toEqual([ACCESS]);
  });
});

describe('reading Claude Code\'s file', () => {
  it('finds it under ~/.claude or CLAUDE_CONFIG_DIR, reads it, and names a missing file', async () => {
    expect(claudeCodeCredentialsPath({}, '/home/u')).toBe(join('/home/u', '.claude', '.credentials.json'));
    expect(claudeCodeCredentialsPath({ CLAUDE_CONFIG_DIR: '/cfg' }, '/home/u')).toBe(join('/cfg', '.credentials.json'));
    const dir = mkdtempSync(join(tmpdir(), 'claude-creds-'));
    const file = join(dir, '.credentials.json');
    writeFileSync(file, fileWith({ accessToken: ACCESS, refreshToken: REFRESH, expiresAt: NOW + 1000 }));
    await expect(readClaudeCodeCredentials(file, NOW)).resolves.toMatchObject({ accessToken: ACCESS, refreshToken: REFRESH });
    await expect(readClaudeCodeCredentials(join(dir, 'missing.json'), NOW)).rejects.toMatchObject({ code: 'credentials_not_found', field: 'path' });
    writeFileSync(file, '{ nope');
    await expect(readClaudeCodeCredentials(file, NOW)).rejects.toMatchObject({ code: 'credentials_bad_json' });
    rmSync(dir, { recursive: true, force: true });
  });
});
