import { describe, expect, it } from 'vitest';
import { resolveTargets } from '../../../src/main/engine/routing/resolve';
import { latencyPenalty, LatencyTracker } from '../../../src/main/engine/routing/latencyTracker';
import { TargetSelector } from '../../../src/main/engine/routing/selector';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import { connectionRecord } from '../../support/builders';

function conn(p: Partial<ConnectionRecord> & Pick<ConnectionRecord, 'provider' | 'protocol'>): ConnectionRecord {
  return connectionRecord({ kind: p.protocol === 'anthropic' ? 'anthropic' : 'openai', baseUrl: 'http://127.0.0.1:1', ...p });
}

describe('model resolution', () => {
  const claude = conn({ provider: 'anthropic', protocol: 'anthropic' });
  const glm = conn({ provider: 'glm', protocol: 'anthropic', models: ['glm-4.6'], passthroughModels: false });
  const openai = conn({ provider: 'openai', protocol: 'openai' });
  const deepseek = conn({ provider: 'deepseek', protocol: 'openai', models: ['deepseek-chat'], passthroughModels: false });
  const all = [claude, glm, openai, deepseek];

  it('sends provider/model to that provider with the prefix stripped', () => {
    const r = resolveTargets(all, 'glm/glm-4.6', 'anthropic-messages');
    expect(r.targets.map((t) => [t.conn.id, t.model, t.requestedModel])).toEqual([[glm.id, 'glm-4.6', 'glm/glm-4.6']]);
  });

  it('sends a bare model only to the connections that list it when any does', () => {
    expect(resolveTargets(all, 'deepseek-chat', 'openai-chat').targets.map((t) => t.conn.id)).toEqual([deepseek.id]);
  });

  it('sends an unlisted bare model to the connections that accept any model, on the same protocol', () => {
    expect(resolveTargets(all, 'claude-sonnet-4-5', 'anthropic-messages').targets.map((t) => t.conn.id)).toEqual([claude.id]);
    expect(resolveTargets(all, 'gpt-5', 'openai-chat').targets.map((t) => t.conn.id)).toEqual([openai.id]);
  });

  it('treats an unknown prefix as part of the model name', () => {
    const r = resolveTargets(all, 'meta-llama/llama-3', 'openai-chat');
    expect(r.targets.map((t) => [t.conn.id, t.model])).toEqual([[openai.id, 'meta-llama/llama-3']]);
  });

  it('explains why nothing matched', () => {
    expect(resolveTargets([deepseek], 'gpt-5', 'openai-chat').hint).toContain('none of the OpenAI protocol accepts any model');
    expect(resolveTargets([deepseek], 'gpt-5', 'openai-chat').hint).toContain('To fix it: list "gpt-5" on a connection (Connections page)');
    expect(resolveTargets([claude], 'gpt-5', 'openai-chat').hint).toContain('no OpenAI-protocol connection');
    expect(resolveTargets([claude], 'gpt-5', 'openai-chat').hint).toContain('provider/model');
    expect(resolveTargets([glm, deepseek], 'glm/glm-5', 'openai-chat').hint).toContain('no glm connection serves "glm-5"');
  });

  it('names the third protocol right: Gemini, or "another protocol" when two others are configured', () => {
    const gemini = conn({ provider: 'gemini', kind: 'gemini', protocol: 'gemini' });
    const only = resolveTargets([gemini], 'claude-sonnet-4-5', 'anthropic-messages').hint!;
    expect(only).toContain('no Anthropic-protocol connection is configured, and no Gemini-protocol connection lists "claude-sonnet-4-5"');
    expect(only).not.toContain('OpenAI');
    const two = resolveTargets([claude, gemini], 'gpt-5', 'openai-chat').hint!;
    expect(two).toContain('no OpenAI-protocol connection is configured, and no connection of another protocol lists "gpt-5"');
    const native = resolveTargets([deepseek, gemini], 'gpt-5', 'openai-chat').hint!;
    expect(native).toContain('none of the OpenAI protocol accepts any model (a connection of the Gemini protocol serves only the models it lists)');
    // A Gemini client's request, with no Gemini connection.
    expect(resolveTargets([claude], 'gemini-2.5-pro', 'gemini').hint).toContain('no Gemini-protocol connection is configured, and no Anthropic-protocol connection lists "gemini-2.5-pro"');
  });

  it('keeps disabled connections out and says so', () => {
    const off = conn({ provider: 'openai', protocol: 'openai', enabled: false });
    const r = resolveTargets([off], 'gpt-5', 'openai-chat');
    expect(r.targets).toEqual([]);
    expect(r.disabled.map((c) => c.id)).toEqual([off.id]);
    expect(r.hint).toBe(`the only connections that serve it are disabled ("${off.name}"); enable one on the Connections page.`);
    // Beside an enabled connection of the other protocol, the other fixes are named too.
    const compat = conn({ provider: 'compat', kind: 'openai-compatible', protocol: 'anthropic', models: ['m1'], enabled: true });
    expect(resolveTargets([off, compat], 'gpt-5', 'openai-chat').hint).toMatch(/disabled .*; enable one on the Connections page\. Or: list "gpt-5" .* e\.g\. "compat\/m1"/);
  });
});

describe('model resolution across protocols', () => {
  const claude = conn({ provider: 'anthropic', protocol: 'anthropic' });
  const deepseek = conn({ provider: 'deepseek', kind: 'openai-compatible', protocol: 'openai', servesResponses: false });
  const router = conn({ provider: 'router', kind: 'openai-compatible', protocol: 'openai', models: ['claude-sonnet-4-5'], passthroughModels: false, servesResponses: false });
  const openai = conn({ provider: 'openai', protocol: 'openai', servesResponses: true });
  const ids = (r: ReturnType<typeof resolveTargets>) => r.targets.map((t) => t.conn.id);

  it('reaches a connection of the other protocol that lists the bare model, after the native ones of its priority', () => {
    const r = resolveTargets([router, claude], 'claude-sonnet-4-5', 'anthropic-messages');
    expect(ids(r)).toEqual([claude.id, router.id]);
    expect(r.targets.map((t) => [t.upstream, t.translated])).toEqual([
      ['anthropic-messages', false],
      ['openai-chat', true],
    ]);
  });

  it('puts a translated target of a better priority first', () => {
    const best = { ...router, id: 'best', priority: 0 };
    expect(ids(resolveTargets([best, claude], 'claude-sonnet-4-5', 'anthropic-messages'))).toEqual(['best', claude.id]);
  });

  it('never sends a bare model to a connection of the other protocol that only accepts any model', () => {
    expect(ids(resolveTargets([deepseek], 'claude-sonnet-4-5', 'anthropic-messages'))).toEqual([]);
    expect(ids(resolveTargets([claude, deepseek], 'claude-sonnet-4-5', 'anthropic-messages'))).toEqual([claude.id]);
    expect(ids(resolveTargets([claude], 'gpt-5', 'openai-chat'))).toEqual([]);
  });

  it('sends provider/model to that provider whatever its protocol', () => {
    const r = resolveTargets([claude, deepseek], 'deepseek/deepseek-chat', 'anthropic-messages');
    expect(r.targets.map((t) => [t.conn.id, t.model, t.upstream])).toEqual([[deepseek.id, 'deepseek-chat', 'openai-chat']]);
    expect(resolveTargets([claude, deepseek], 'anthropic/claude-opus-4-1', 'openai-responses').targets.map((t) => t.upstream)).toEqual(['anthropic-messages']);
  });

  it('sends Responses natively where the connection serves /responses and through Chat where it does not, native first', () => {
    const r = resolveTargets([deepseek, openai], 'gpt-5', 'openai-responses');
    expect(r.targets.map((t) => [t.conn.id, t.upstream, t.translated])).toEqual([
      [openai.id, 'openai-responses', false],
      [deepseek.id, 'openai-chat', true],
    ]);
    // A Chat request is native on both.
    expect(resolveTargets([deepseek, openai], 'gpt-5', 'openai-chat').targets.every((t) => !t.translated)).toBe(true);
  });

  it('keeps native targets ahead of translated ones of the same priority while rotating each group', () => {
    const c2 = conn({ provider: 'anthropic', protocol: 'anthropic' });
    const r2 = { ...router, id: 'router-2' };
    const targets = resolveTargets([router, r2, claude, c2], 'claude-sonnet-4-5', 'anthropic-messages').targets;
    const s = new TargetSelector({ random: { next: () => 0 }, latency: new LatencyTracker(), load: () => 0, now: () => 0 });
    const first = s.order('k', targets, 'round-robin').map((t) => t.conn.id);
    const second = s.order('k', targets, 'round-robin').map((t) => t.conn.id);
    expect(first).toEqual([claude.id, c2.id, router.id, 'router-2']);
    expect(second).toEqual([c2.id, claude.id, 'router-2', router.id]);
  });
});

describe('selection order', () => {
  const t = (priority: number) => ({ conn: conn({ provider: 'p', protocol: 'openai', priority }), model: 'm', requestedModel: 'm' });
  const selector = (o: { random?: number[]; load?: Record<string, number>; latency?: LatencyTracker; now?: number } = {}) => {
    const seq = [...(o.random ?? [])];
    return new TargetSelector({
      random: { next: () => seq.shift() ?? 0 },
      latency: o.latency ?? new LatencyTracker(),
      load: (id) => o.load?.[id] ?? 0,
      now: () => o.now ?? 0,
    });
  };

  it('tries the best priority first and rotates within it', () => {
    const [a, b, c] = [t(1), t(1), t(2)];
    const s = selector();
    const first = s.order('k', [a, b, c], 'round-robin').map((x) => x.conn.id);
    const second = s.order('k', [a, b, c], 'round-robin').map((x) => x.conn.id);
    expect(first).toEqual([a.conn.id, b.conn.id, c.conn.id]);
    expect(second).toEqual([b.conn.id, a.conn.id, c.conn.id]);
  });

  it('always starts from the first target in fill-first mode', () => {
    const [a, b] = [t(1), t(1)];
    const s = selector();
    s.order('k', [a, b], 'fill-first');
    expect(s.order('k', [a, b], 'fill-first').map((x) => x.conn.id)).toEqual([a.conn.id, b.conn.id]);
  });

  it('keeps separate rotations per model', () => {
    const [a, b] = [t(1), t(1)];
    const s = selector();
    s.order('x', [a, b], 'round-robin');
    expect(s.order('y', [a, b], 'round-robin')[0]!.conn.id).toBe(a.conn.id);
  });

  it('p2c puts the less busy of two random candidates first, the other second, then the rest', () => {
    const [a, b, c, d] = [t(1), t(1), t(1), t(2)];
    // random picks index 0 (a), then index 1 of the remaining two (c).
    const s = selector({ random: [0, 0.6], load: { [a.conn.id]: 3, [c.conn.id]: 1 } });
    expect(s.order('k', [a, b, c, d], 'p2c').map((x) => x.conn.id)).toEqual([c.conn.id, a.conn.id, b.conn.id, d.conn.id]);
  });

  it('p2c with a latency weight prefers the faster connection once both have three samples', () => {
    const [fast, slow] = [t(1), t(1)];
    const latency = new LatencyTracker();
    const s = () => selector({ random: [0, 0], latency });
    for (let i = 0; i < 2; i++) {
      latency.record(fast.conn.id, 0, 100, true);
      latency.record(slow.conn.id, 0, 400, true);
    }
    // Two samples each: no bias yet, the first candidate drawn (slow) stays first.
    expect(s().order('k', [slow, fast], 'p2c', 20)[0]!.conn.id).toBe(slow.conn.id);
    latency.record(fast.conn.id, 0, 100, true);
    latency.record(slow.conn.id, 0, 400, true);
    expect(s().order('k', [slow, fast], 'p2c', 20)[0]!.conn.id).toBe(fast.conn.id);
    // Weight 0 turns the signal off.
    expect(s().order('k', [slow, fast], 'p2c', 0)[0]!.conn.id).toBe(slow.conn.id);
  });
});

describe('latency signal', () => {
  it('keeps the last 20 samples within 15 minutes', () => {
    const l = new LatencyTracker();
    for (let i = 0; i < 25; i++) l.record('c', i, 10, i % 5 !== 0);
    expect(l.stats('c', 30)).toMatchObject({ samples: 20 });
    expect(l.stats('c', 16 * 60_000).samples).toBe(0);
  });

  it('penalises latency up to half the weight at twice as slow, and errors up to the other half', () => {
    const fast = { samples: 5, meanTtfbMs: 100, errorRate: 0 };
    expect(latencyPenalty({ samples: 5, meanTtfbMs: 150, errorRate: 0 }, fast, 10)).toBeCloseTo(2.5);
    expect(latencyPenalty({ samples: 5, meanTtfbMs: 900, errorRate: 0 }, fast, 10)).toBeCloseTo(5);
    expect(latencyPenalty({ samples: 5, meanTtfbMs: 100, errorRate: 0.5 }, fast, 10)).toBeCloseTo(2.5);
    expect(latencyPenalty(fast, { samples: 2, meanTtfbMs: 900, errorRate: 0 }, 10)).toBe(0);
  });
});
