// The combo router: targets expanded to connections (with why some cannot be used), ranked by the
// combo's strategy, rotation carried from one request to the next, lkgp fed by served targets.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/main/engine/random';
import type { ComboRegistry } from '../../../src/main/engine/routing/combos/comboRegistry';
import { ComboRouter, estimateTokens, promptKeyOf, type ComboRouterDeps } from '../../../src/main/engine/routing/combos/comboRouter';
import { ModelCatalog } from '../../../src/main/engine/routing/combos/modelCatalog';
import { QuotaSignals } from '../../../src/main/engine/routing/combos/quotaSignals';
import { LatencyTracker } from '../../../src/main/engine/routing/latencyTracker';
import { TargetSelector } from '../../../src/main/engine/routing/selector';
import type { ComboRecord } from '../../../src/main/engine/store/combosRepo';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import type { ComboStrategy, ComboTarget } from '../../../src/shared/model';
import { connectionRecord } from '../../support/builders';

function setup(
  targets: Partial<ComboTarget>[],
  conns: ConnectionRecord[],
  strategy: ComboStrategy = 'priority',
  accountQuota?: ComboRouterDeps['accountQuota'],
) {
  const combo: ComboRecord = {
    id: 'k1',
    name: 'pool',
    strategy,
    targets: targets.map((t) => ({ provider: 'p', model: 'm', connectionId: null, weight: 1, ...t })),
    options: {},
    createdAt: 0,
    updatedAt: 0,
  };
  const registry = {
    resolve: (model: string) => (model === 'pool' ? { combo, via: 'name' as const, pattern: null } : null),
    onChange: () => () => {},
    get: (id: string) => (id === combo.id ? combo : undefined),
    list: () => [combo],
  } as unknown as ComboRegistry;
  const latency = new LatencyTracker();
  const random = seededRandom(1);
  const router = new ComboRouter({
    combos: registry,
    connections: () => conns,
    connection: (id) => conns.find((c) => c.id === id),
    selector: new TargetSelector({ random, latency, load: () => 0, now: () => 0 }),
    routing: () => ({ name: 'fill-first', latencyWeight: 0 }),
    autoWeights: () => ({}),
    random,
    latency,
    load: () => 0,
    quota: new QuotaSignals(),
    ...(accountQuota ? { accountQuota } : {}),
    catalog: new ModelCatalog(),
    clock: { now: () => 0, monotonic: () => 0, setTimer: () => () => {} },
  });
  const plan = () => router.plan('anthropic', 'pool', { json: {}, bodyBytes: 400 })!;
  return { router, plan, combo };
}

const anth = (over: Partial<ConnectionRecord>) => connectionRecord({ protocol: 'anthropic', kind: 'anthropic-compatible', passthroughModels: false, ...over });

describe('ComboRouter', () => {
  it('is not involved for a model that names no combo', () => {
    const { router } = setup([{ provider: 'p', model: 'm' }], []);
    expect(router.plan('anthropic', 'claude-x', { json: {}, bodyBytes: 0 })).toBeNull();
  });

  it('expands targets to connections and says why the others cannot be used', () => {
    const a = anth({ id: 'a', name: 'A', provider: 'alpha', models: ['x'] });
    const off = anth({ id: 'off', name: 'Off', provider: 'alpha', models: ['x'], enabled: false });
    const other = anth({ id: 'o', name: 'O', provider: 'alpha', models: ['y'] });
    const oa = connectionRecord({ id: 'g', name: 'G', provider: 'gamma', protocol: 'openai', models: ['z'] });
    const b = anth({ id: 'b', name: 'B', provider: 'beta', models: ['y'] });
    const { plan } = setup(
      [
        { provider: 'alpha', model: 'x' },
        { provider: 'gamma', model: 'z' },
        { provider: 'beta', model: 'y', connectionId: 'b' },
        { provider: 'beta', model: 'y', connectionId: 'gone' },
        { provider: 'delta', model: 'w' },
      ],
      [a, off, other, oa, b],
    );
    const p = plan();
    // The OpenAI-protocol target is usable: translation carries an Anthropic request to it.
    expect(p.order.map((t) => [t.combo!.index, t.conn.id, t.model])).toEqual([
      [0, 'a', 'x'],
      [1, 'g', 'z'],
      [2, 'b', 'y'],
    ]);
    expect(p.unusable.map((u) => [u.index, u.conn?.id ?? null, u.reason])).toEqual([
      [0, 'off', 'disabled'],
      [0, 'o', 'model_not_served'],
      [3, null, 'no_connection'],
      [4, null, 'no_connection'],
    ]);
  });

  it('headroom reads an account\'s own usage windows where it reports them (Claude subscriptions)', () => {
    const a = anth({ id: 'a', provider: 'alpha', models: ['x'] });
    const b = anth({ id: 'b', provider: 'beta', models: ['x'] });
    const windows = { a: 0.1, b: 0.8 } as Record<string, number>;
    const { plan } = setup(
      [{ provider: 'alpha', model: 'x' }, { provider: 'beta', model: 'x' }],
      [a, b],
      'headroom',
      (id) => ({ fraction: windows[id]!, requestsRemaining: null, tokensRemaining: null, resetAt: null, observedAt: 0 }),
    );
    // Alpha is listed first but has 10 % of its binding window left; Beta 80 %.
    expect(plan().order.map((t) => t.conn.id)).toEqual(['b', 'a']);
  });

  it('a pinned connection is used for its model even when it does not list it', () => {
    const a = anth({ id: 'a', provider: 'alpha', models: [] });
    const { plan } = setup([{ provider: 'alpha', model: 'special', connectionId: 'a' }], [a]);
    expect(plan().order.map((t) => [t.conn.id, t.model])).toEqual([['a', 'special']]);
  });

  it('carries the rotation from one request to the next (round-robin)', () => {
    const conns = ['x', 'y', 'z'].map((m, i) => anth({ id: `c${i}`, provider: `p${i}`, models: [m] }));
    const { plan } = setup(
      ['x', 'y', 'z'].map((m, i) => ({ provider: `p${i}`, model: m })),
      conns,
      'round-robin',
    );
    expect([plan(), plan(), plan(), plan()].map((p) => p.order[0]!.model)).toEqual(['x', 'y', 'z', 'x']);
  });

  it('lkgp puts the target that last served first', async () => {
    const conns = ['x', 'y'].map((m, i) => anth({ id: `c${i}`, provider: `p${i}`, models: [m] }));
    const { plan, router } = setup(
      [
        { provider: 'p0', model: 'x' },
        { provider: 'p1', model: 'y' },
      ],
      conns,
      'lkgp',
    );
    expect(plan().order[0]!.model).toBe('x');
    const served = plan().order[1]!;
    const dispatch = router.interceptor()(async () => ({ kind: 'ready', response: {} as never }));
    await dispatch({ target: served } as never);
    expect(plan().order.map((t) => t.model)).toEqual(['y', 'x']);
  });

  it('estimates tokens from the body size and the requested output', () => {
    expect(estimateTokens({ json: { max_tokens: 500 }, bodyBytes: 4_001 })).toEqual({ input: 1_001, output: 500 });
    expect(estimateTokens({ json: { max_completion_tokens: 7 }, bodyBytes: 8 })).toEqual({ input: 2, output: 7 });
    expect(estimateTokens({ json: {}, bodyBytes: 0 })).toEqual({ input: 0, output: 1_024 });
  });

  it('keys the prompt cache on the system prompt and the first message only', () => {
    const first = { system: 'You are Claude Code', messages: [{ role: 'user', content: 'fix the bug' }] };
    const later = { ...first, messages: [...first.messages, { role: 'assistant', content: 'done' }, { role: 'user', content: 'thanks' }] };
    expect(promptKeyOf(later)).toBe(promptKeyOf(first));
    expect(promptKeyOf({ ...first, system: 'other' })).not.toBe(promptKeyOf(first));
  });
});
