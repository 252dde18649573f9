import { describe, expect, it } from 'vitest';
import { resolveTargets } from '../../../src/main/engine/routing/resolve';
import { TargetSelector } from '../../../src/main/engine/routing/selector';
import { emptyHealth, type ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';

let seq = 0;
function conn(p: Partial<ConnectionRecord> & Pick<ConnectionRecord, 'provider' | 'protocol'>): ConnectionRecord {
  seq++;
  return {
    id: `c${seq}`,
    name: `C${seq}`,
    kind: p.protocol === 'anthropic' ? 'anthropic' : 'openai',
    authClass: 'apikey',
    baseUrl: 'http://127.0.0.1:1',
    priority: 1,
    enabled: true,
    models: [],
    passthroughModels: true,
    maxConcurrent: null,
    rateLimitOverrides: {},
    rateLimitProtection: false,
    disableCooling: false,
    providerSpecificData: {},
    timeouts: {},
    secretEnc: null,
    secretMasked: null,
    health: emptyHealth(),
    createdAt: seq,
    updatedAt: seq,
    ...p,
  };
}

describe('model resolution', () => {
  const claude = conn({ provider: 'anthropic', protocol: 'anthropic' });
  const glm = conn({ provider: 'glm', protocol: 'anthropic', models: ['glm-4.6'], passthroughModels: false });
  const openai = conn({ provider: 'openai', protocol: 'openai' });
  const deepseek = conn({ provider: 'deepseek', protocol: 'openai', models: ['deepseek-chat'], passthroughModels: false });
  const all = [claude, glm, openai, deepseek];

  it('sends provider/model to that provider with the prefix stripped', () => {
    const r = resolveTargets(all, 'glm/glm-4.6', 'anthropic');
    expect(r.targets.map((t) => [t.conn.id, t.model, t.requestedModel])).toEqual([[glm.id, 'glm-4.6', 'glm/glm-4.6']]);
  });

  it('sends a bare model only to the connections that list it when any does', () => {
    expect(resolveTargets(all, 'deepseek-chat', 'openai').targets.map((t) => t.conn.id)).toEqual([deepseek.id]);
  });

  it('sends an unlisted bare model to the connections that accept any model, on the same protocol', () => {
    expect(resolveTargets(all, 'claude-sonnet-4-5', 'anthropic').targets.map((t) => t.conn.id)).toEqual([claude.id]);
    expect(resolveTargets(all, 'gpt-5', 'openai').targets.map((t) => t.conn.id)).toEqual([openai.id]);
  });

  it('treats an unknown prefix as part of the model name', () => {
    const r = resolveTargets(all, 'meta-llama/llama-3', 'openai');
    expect(r.targets.map((t) => [t.conn.id, t.model])).toEqual([[openai.id, 'meta-llama/llama-3']]);
  });

  it('explains why nothing matched', () => {
    expect(resolveTargets([deepseek], 'gpt-5', 'openai').hint).toContain('none accepts any model');
    expect(resolveTargets([claude], 'gpt-5', 'openai').hint).toContain('no OpenAI-protocol connection');
    expect(resolveTargets([glm, deepseek], 'glm/glm-4.6', 'openai').hint).toContain('Anthropic protocol');
  });

  it('keeps disabled connections out and says so', () => {
    const off = conn({ provider: 'openai', protocol: 'openai', enabled: false });
    const r = resolveTargets([off], 'gpt-5', 'openai');
    expect(r.targets).toEqual([]);
    expect(r.disabled.map((c) => c.id)).toEqual([off.id]);
    expect(r.hint).toContain('disabled');
  });
});

describe('selection order', () => {
  const t = (priority: number) => ({ conn: conn({ provider: 'p', protocol: 'openai', priority }), model: 'm', requestedModel: 'm' });

  it('tries the best priority first and rotates within it', () => {
    const [a, b, c] = [t(1), t(1), t(2)];
    const s = new TargetSelector();
    const first = s.order('k', [a, b, c], true).map((x) => x.conn.id);
    const second = s.order('k', [a, b, c], true).map((x) => x.conn.id);
    expect(first).toEqual([a.conn.id, b.conn.id, c.conn.id]);
    expect(second).toEqual([b.conn.id, a.conn.id, c.conn.id]);
  });

  it('always starts from the first target in fill-first mode', () => {
    const [a, b] = [t(1), t(1)];
    const s = new TargetSelector();
    s.order('k', [a, b], false);
    expect(s.order('k', [a, b], false).map((x) => x.conn.id)).toEqual([a.conn.id, b.conn.id]);
  });

  it('keeps separate rotations per model', () => {
    const [a, b] = [t(1), t(1)];
    const s = new TargetSelector();
    s.order('x', [a, b], true);
    expect(s.order('y', [a, b], true)[0]!.conn.id).toBe(a.conn.id);
  });
});
