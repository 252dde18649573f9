// A connection's team id (team/identity.ts): the same credential for the same endpoint is the same
// account on every workstation, whatever its local id and name; nothing of the credential shows.
import { describe, expect, it } from 'vitest';
import { TeamIdentity } from '../../../src/main/engine/team/identity';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';

function registry(conns: (Partial<ConnectionRecord> & { secret?: string | null })[]) {
  const recs = conns.map((c, i) => ({
    id: c.id ?? `local-${i}`,
    name: c.name ?? `conn ${i}`,
    kind: c.kind ?? 'openai-compatible',
    provider: c.provider ?? 'openai',
    baseUrl: c.baseUrl ?? 'https://api.openai.com/v1',
    providerSpecificData: c.providerSpecificData ?? {},
    secret: c.secret === undefined ? 'sk-the-key' : c.secret,
  })) as unknown as (ConnectionRecord & { secret: string | null })[];
  return {
    all: () => recs,
    get: (id: string) => recs.find((r) => r.id === id),
    secretOf: (c: ConnectionRecord) => (c as ConnectionRecord & { secret: string | null }).secret,
    onChange: () => () => {},
  };
}

describe('TeamIdentity', () => {
  it('gives the same id to the same key on two workstations, whatever their local ids and names', () => {
    const a = new TeamIdentity(registry([{ id: 'a1', name: 'OpenAI work' }]), 'acme');
    const b = new TeamIdentity(registry([{ id: 'b7', name: 'openai' }]), 'acme');
    const ida = a.ofId('a1');
    expect(ida).toMatch(/^c_[A-Za-z0-9_-]{22}$/);
    expect(b.ofId('b7')).toBe(ida);
    expect(b.localIds(ida!)).toEqual(['b7']);
    expect(ida).not.toContain('sk-the-key');
  });

  it('tells apart another key, another endpoint, another provider and another team', () => {
    const base = new TeamIdentity(registry([{}]), 'acme').ofId('local-0');
    expect(new TeamIdentity(registry([{ secret: 'sk-other' }]), 'acme').ofId('local-0')).not.toBe(base);
    expect(new TeamIdentity(registry([{ baseUrl: 'https://proxy.example/v1' }]), 'acme').ofId('local-0')).not.toBe(base);
    expect(new TeamIdentity(registry([{ provider: 'azure' }]), 'acme').ofId('local-0')).not.toBe(base);
    expect(new TeamIdentity(registry([{}]), 'other-team').ofId('local-0')).not.toBe(base);
  });

  it('keeps a keyless server on this machine local, and shares a keyless remote one', () => {
    const ids = new TeamIdentity(
      registry([
        { id: 'ollama', secret: null, baseUrl: 'http://127.0.0.1:11434/v1' },
        { id: 'lan', secret: null, baseUrl: 'http://gpu-box.lan:8000/v1' },
      ]),
      'acme',
    );
    expect(ids.ofId('ollama')).toBeNull();
    expect(ids.ofId('lan')).toMatch(/^c_/);
  });

  it('names a Claude subscription by its organisation (its tokens rotate), and keeps it local until that is known', () => {
    const known = new TeamIdentity(registry([{ id: 'c', kind: 'claude-subscription', provider: 'claude', secret: '{"accessToken":"x"}', providerSpecificData: { organizationUUID: 'org-1' } }]), 'acme');
    const rotated = new TeamIdentity(registry([{ id: 'd', kind: 'claude-subscription', provider: 'claude', secret: '{"accessToken":"y"}', providerSpecificData: { organizationUUID: 'org-1' } }]), 'acme');
    expect(known.ofId('c')).toBe(rotated.ofId('d'));
    expect(new TeamIdentity(registry([{ id: 'e', kind: 'claude-subscription', provider: 'claude' }]), 'acme').ofId('e')).toBeNull();
  });
});
