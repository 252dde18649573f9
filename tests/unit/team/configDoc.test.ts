// The team's configuration as it travels (team/configDoc.ts): secrets encrypted with the team key,
// the body sealed; a follower opens it only with the same key and only as published; machine
// settings and Claude sign-ins stay home.
import { describe, expect, it } from 'vitest';
import { buildPublication, contentHash, MACHINE_SETTINGS, openPublication, type PublishSource } from '../../../src/main/engine/team/configDoc';
import { generateTeamKey, parseTeamKey, TeamCipher } from '../../../src/main/engine/secrets/teamKey';
import { emptyHealth, type ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';

const conn = (over: Partial<ConnectionRecord> & { id: string }): ConnectionRecord => ({
  name: over.id,
  kind: 'openai-compatible',
  protocol: 'openai',
  provider: 'openai',
  authClass: 'apikey',
  baseUrl: 'https://api.example/v1',
  priority: 1,
  enabled: true,
  models: ['m1'],
  passthroughModels: true,
  servesResponses: false,
  maxConcurrent: null,
  rateLimitOverrides: {},
  protectionMode: 'auto',
  disableCooling: false,
  providerSpecificData: {},
  timeouts: {},
  secretEnc: 'v1.local-ciphertext',
  secretMasked: 'sk-…1234',
  outboundProxy: null,
  outboundProxyEnc: null,
  health: emptyHealth(),
  createdAt: 1,
  updatedAt: 2,
  ...over,
});

const SECRETS: Record<string, string> = { a: 'sk-alpha-secret-1234', claude: '{"accessToken":"tok"}' };
const PROXY = 'http://user:proxy-pass@10.0.0.1:3128';

function source(over: Partial<PublishSource> = {}): PublishSource {
  const connections = [
    conn({ id: 'a', outboundProxy: 'http://user:***@10.0.0.1:3128', outboundProxyEnc: 'v1.local-proxy' }),
    conn({ id: 'claude', kind: 'claude-subscription', authClass: 'oauth', provider: 'claude' }),
    conn({ id: 'local', secretEnc: null, secretMasked: null, baseUrl: 'http://127.0.0.1:11434/v1' }),
  ];
  return {
    connections,
    secretOf: (c) => SECRETS[c.id] ?? null,
    outboundProxyOf: (c) => (c.id === 'a' ? PROXY : null),
    combos: [{ id: 'k1', name: 'pool', strategy: 'priority', targets: [{ provider: 'openai', model: 'm1', connectionId: 'a', weight: 1 }], options: {}, createdAt: 1, updatedAt: 1 }],
    mappings: [{ id: 'm1', pattern: 'pool-*', comboId: 'k1', createdAt: 1, updatedAt: 1 }],
    settings: { 'proxy.maxAttempts': 3, 'proxy.port': 9000, 'logs.retentionDays': 2, 'notifications.muted': ['claude-lane'] },
    ...over,
  };
}

const stamp = { owner: { name: 'Alice', instanceId: 'A' }, revision: 4, publishedAt: 1_000 };

describe('a configuration publication', () => {
  const key = parseTeamKey(generateTeamKey())!;

  it('carries secrets and proxy credentials only encrypted, and opens with the same key to what was published', () => {
    const pub = buildPublication(source(), stamp, new TeamCipher(key));
    const text = JSON.stringify(pub);
    expect(text).not.toContain('sk-alpha-secret-1234');
    expect(text).not.toContain('proxy-pass');
    expect(text).not.toContain('v1.local-ciphertext');
    const opened = openPublication(JSON.parse(text), new TeamCipher(Buffer.from(key)));
    expect(opened.ok).toBe(true);
    if (!opened.ok) return;
    const c = opened.config;
    expect(c.owner).toEqual({ name: 'Alice', instanceId: 'A' });
    expect(c.revision).toBe(4);
    expect(c.connections.map((x) => x.id)).toEqual(['a', 'local']);
    expect(c.connections[0]).toMatchObject({ secret: 'sk-alpha-secret-1234', outboundProxy: PROXY, baseUrl: 'https://api.example/v1' });
    expect(c.connections[1]).toMatchObject({ secret: null, outboundProxy: null });
    expect(c.combos.map((x) => x.id)).toEqual(['k1']);
    expect(c.mappings.map((x) => x.pattern)).toEqual(['pool-*']);
    expect(c.settings).toEqual({ 'proxy.maxAttempts': 3 });
    for (const k of MACHINE_SETTINGS) expect(Object.keys(c.settings)).not.toContain(k);
  });

  it('is refused with another key, and when anything was changed after it was sealed', () => {
    const pub = buildPublication(source(), stamp, new TeamCipher(key));
    expect(openPublication(pub, new TeamCipher(parseTeamKey(generateTeamKey())!))).toEqual({ ok: false, why: 'wrong-key' });
    // Someone who can write to Redis points a published key at another address: the seal says no.
    const tampered = { ...pub, body: pub.body.replace('https://api.example/v1', 'https://evil.example/v1') };
    expect(openPublication(tampered, new TeamCipher(key))).toEqual({ ok: false, why: 'seal' });
    expect(openPublication({ ...pub, format: 99 }, new TeamCipher(key))).toEqual({ ok: false, why: 'format' });
  });

  it('leaves out a setting the follower does not know or would refuse', () => {
    const pub = buildPublication(source({ settings: { 'proxy.maxAttempts': 3, 'some.futureSetting': 1, 'routing.strategy': 'no-such-strategy' } }), stamp, new TeamCipher(key));
    const opened = openPublication(pub, new TeamCipher(key));
    expect(opened.ok && opened.config.settings).toEqual({ 'proxy.maxAttempts': 3 });
  });

  it('has a content hash that follows a changed secret or setting but not the stamp', () => {
    const base = contentHash(source());
    expect(contentHash(source())).toBe(base);
    expect(contentHash(source({ secretOf: (c) => (c.id === 'a' ? 'sk-rotated' : null) }))).not.toBe(base);
    expect(contentHash(source({ settings: { 'proxy.maxAttempts': 4 } }))).not.toBe(base);
    // A machine setting is not the team's business.
    expect(contentHash(source({ settings: { 'proxy.maxAttempts': 3, 'proxy.port': 1 } }))).toBe(base);
  });
});
