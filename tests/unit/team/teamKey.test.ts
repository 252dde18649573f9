// The team key (secrets/teamKey.ts): made and pasted in either spelling, shown only masked and as a
// fingerprint; what it encrypts opens only with the same key, and its seal fails on any change.
import { describe, expect, it } from 'vitest';
import { generateTeamKey, maskTeamKey, parseTeamKey, TeamCipher, teamKeyFingerprint } from '../../../src/main/engine/secrets/teamKey';

describe('the team key', () => {
  it('is 32 random bytes, read back from base64, base64url or hex, and nothing else', () => {
    const text = generateTeamKey();
    const key = parseTeamKey(text)!;
    expect(key).toHaveLength(32);
    expect(generateTeamKey()).not.toBe(text);
    expect(parseTeamKey(`  ${text}\n`)!.equals(key)).toBe(true);
    expect(parseTeamKey(key.toString('hex'))!.equals(key)).toBe(true);
    expect(parseTeamKey(key.toString('base64url'))!.equals(key)).toBe(true);
    expect(parseTeamKey('not a key')).toBeNull();
    expect(parseTeamKey(Buffer.alloc(16).toString('base64'))).toBeNull();
  });

  it('is shown as its last characters and a fingerprint, neither of which gives it away', () => {
    const key = parseTeamKey(generateTeamKey())!;
    const masked = maskTeamKey(key);
    expect(masked).toMatch(/^….{4}$/);
    expect(teamKeyFingerprint(key)).toMatch(/^[0-9A-F]{4}-[0-9A-F]{4}$/);
    expect(teamKeyFingerprint(key)).toBe(teamKeyFingerprint(Buffer.from(key)));
    expect(teamKeyFingerprint(parseTeamKey(generateTeamKey())!)).not.toBe(teamKeyFingerprint(key));
    expect(key.toString('hex')).not.toContain(teamKeyFingerprint(key).replace('-', '').toLowerCase());
  });

  it('encrypts what only the same key opens, and seals a text so that any change is seen', () => {
    const key = parseTeamKey(generateTeamKey())!;
    const a = new TeamCipher(key);
    const same = new TeamCipher(Buffer.from(key));
    const other = new TeamCipher(parseTeamKey(generateTeamKey())!);
    const enc = a.encrypt('sk-secret-value');
    expect(enc).not.toContain('sk-secret-value');
    expect(same.decrypt(enc)).toBe('sk-secret-value');
    expect(other.decrypt(enc)).toBeNull();
    expect(a.keyId).toBe(same.keyId);
    expect(a.keyId).not.toBe(other.keyId);
    const mac = a.seal('{"body":1}');
    expect(same.verify('{"body":1}', mac)).toBe(true);
    expect(same.verify('{"body":2}', mac)).toBe(false);
    expect(other.verify('{"body":1}', mac)).toBe(false);
    expect(a.verify('{"body":1}', 'short')).toBe(false);
  });
});
