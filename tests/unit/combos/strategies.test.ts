// Every combo strategy's order, from fixed signals: a fixed time, a seeded Random, and per-test
// loads, latencies, quotas, prices and context windows. Random strategies are checked by what
// must hold for every draw (a permutation, weights respected over many draws with one seed).
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/main/engine/random';
import { STRATEGIES, type Candidate, type RotationState } from '../../../src/main/engine/routing/combos/strategies';
import { healthScore } from '../../../src/main/engine/routing/combos/strategies/auto';
import { memoryKey } from '../../../src/main/engine/routing/combos/strategies/types';
import { candidates, fresh, models, NOW, reading, signals } from './support';

const abc = () => candidates([{ model: 'a' }, { model: 'b' }, { model: 'c' }]);

/** Runs a rotating strategy n times, threading its state; returns the lead model of each run. */
function leads(name: keyof typeof STRATEGIES, cands: Candidate[], n: number, seed = 7): string[] {
  let state: RotationState = fresh();
  const s = signals({ random: seededRandom(seed) });
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = STRATEGIES[name](cands, s, state);
    state = r.state ?? state;
    out.push(r.order[0]!.target.model);
  }
  return out;
}

const isPermutation = (order: Candidate[], of: Candidate[]) => order.length === of.length && new Set(order).size === of.length && of.every((c) => order.includes(c));

describe('priority', () => {
  it('keeps the combo order', () => {
    expect(models(STRATEGIES.priority(abc(), signals(), fresh()).order)).toEqual(['a', 'b', 'c']);
  });
});

describe('weighted', () => {
  it('leads with each target in proportion to its weight', () => {
    const cands = candidates([
      { model: 'a', weight: 6 },
      { model: 'b', weight: 3 },
      { model: 'c', weight: 1 },
    ]);
    const s = signals({ random: seededRandom(1) });
    const count: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 3_000; i++) count[STRATEGIES.weighted(cands, s, fresh()).order[0]!.target.model]!++;
    expect(count.a / 3_000).toBeGreaterThan(0.55);
    expect(count.a / 3_000).toBeLessThan(0.65);
    expect(count.b / 3_000).toBeGreaterThan(0.25);
    expect(count.b / 3_000).toBeLessThan(0.35);
    expect(count.c / 3_000).toBeGreaterThan(0.07);
    expect(count.c / 3_000).toBeLessThan(0.13);
  });

  it('keeps the connections of one target together and lists every candidate once', () => {
    const cands = candidates([
      { model: 'a', conn: 'a1', entry: 0 },
      { model: 'a', conn: 'a2', entry: 0 },
      { model: 'b', conn: 'b1', entry: 1 },
    ]);
    for (let seed = 0; seed < 20; seed++) {
      const order = STRATEGIES.weighted(cands, signals({ seed }), fresh()).order;
      expect(isPermutation(order, cands)).toBe(true);
      const ids = order.map((c) => c.target.conn.id).join(',');
      expect(['a1,a2,b1', 'b1,a1,a2']).toContain(ids);
    }
  });
});

describe('round-robin', () => {
  it('starts one target further each request and wraps around', () => {
    expect(leads('round-robin', abc(), 5)).toEqual(['a', 'b', 'c', 'a', 'b']);
    const second = STRATEGIES['round-robin'](abc(), signals(), { turn: 1, deck: [] });
    expect(models(second.order)).toEqual(['b', 'c', 'a']);
    expect(second.state!.turn).toBe(2);
  });
});

describe('fill-first', () => {
  it('uses the first target until it is full, then spills to the next', () => {
    const cands = abc();
    const cap = { 'conn-0': 2 } as Record<string, number>;
    const load = { 'conn-0': 1 } as Record<string, number>;
    const s = signals({ capacity: (id) => cap[id] ?? null, load: (id) => load[id] ?? 0 });
    expect(models(STRATEGIES['fill-first'](cands, s, fresh()).order)).toEqual(['a', 'b', 'c']);
    load['conn-0'] = 2;
    expect(models(STRATEGIES['fill-first'](cands, s, fresh()).order)).toEqual(['b', 'c', 'a']);
  });

  it('treats a target that reported no quota left as full', () => {
    const s = signals({ quota: (id) => (id === 'conn-0' ? reading({ fraction: 0 }) : null) });
    expect(models(STRATEGIES['fill-first'](abc(), s, fresh()).order)).toEqual(['b', 'c', 'a']);
  });
});

describe('p2c', () => {
  it('of the two drawn, the less loaded leads; the rest follow in combo order', () => {
    const cands = candidates([{ model: 'a' }, { model: 'b' }, { model: 'c' }, { model: 'd' }]);
    const load: Record<string, number> = { 'conn-0': 5, 'conn-1': 0, 'conn-2': 3, 'conn-3': 1 };
    for (let seed = 0; seed < 30; seed++) {
      const random = seededRandom(seed);
      const probe = seededRandom(seed);
      const i = Math.floor(probe.next() * 4);
      let j = Math.floor(probe.next() * 3);
      if (j >= i) j++;
      const order = STRATEGIES.p2c(cands, signals({ random, load: (id) => load[id]! }), fresh()).order;
      const pair = [cands[i]!, cands[j]!].sort((x, y) => load[x.target.conn.id]! - load[y.target.conn.id]!);
      expect(order.slice(0, 2)).toEqual(pair);
      expect(order.slice(2)).toEqual(cands.filter((c) => !pair.includes(c)));
    }
  });

  it('with a latency weight, the slower of two equally loaded candidates goes second', () => {
    const cands = candidates([{ model: 'slow' }, { model: 'fast' }]);
    const stats = (id: string) => ({ samples: 5, meanTtfbMs: id === 'conn-0' ? 2_000 : 500, errorRate: 0 });
    for (let seed = 0; seed < 10; seed++) {
      expect(models(STRATEGIES.p2c(cands, signals({ seed, latency: stats, latencyWeight: 10 }), fresh()).order)).toEqual(['fast', 'slow']);
    }
  });
});

describe('random', () => {
  it('is a permutation every time (no repeats within a request) and any target can lead', () => {
    const cands = abc();
    const lead = new Set<string>();
    for (let seed = 0; seed < 50; seed++) {
      const order = STRATEGIES.random(cands, signals({ seed }), fresh()).order;
      expect(isPermutation(order, cands)).toBe(true);
      lead.add(order[0]!.target.model);
    }
    expect(lead).toEqual(new Set(['a', 'b', 'c']));
  });
});

describe('strict-random', () => {
  it('every target leads exactly once per cycle of n requests', () => {
    const got = leads('strict-random', abc(), 9, 3);
    for (let cycle = 0; cycle < 3; cycle++) expect(new Set(got.slice(cycle * 3, cycle * 3 + 3))).toEqual(new Set(['a', 'b', 'c']));
  });

  it('skips deck cards of targets that are not candidates now', () => {
    const r = STRATEGIES['strict-random'](candidates([{ model: 'b', entry: 1 }]), signals(), { turn: 0, deck: [0, 1] });
    expect(models(r.order)).toEqual(['b']);
    expect(r.state!.deck).toEqual([]);
  });
});

describe('least-used', () => {
  it('fewest requests in flight first, ties in combo order', () => {
    const load: Record<string, number> = { 'conn-0': 2, 'conn-1': 0, 'conn-2': 2 };
    expect(models(STRATEGIES['least-used'](abc(), signals({ load: (id) => load[id]! }), fresh()).order)).toEqual(['b', 'a', 'c']);
  });
});

describe('lkgp', () => {
  it('the last target that served goes first, then the combo order', () => {
    const cands = abc();
    expect(models(STRATEGIES.lkgp(cands, signals({ lastGood: memoryKey(cands[2]!) }), fresh()).order)).toEqual(['c', 'a', 'b']);
  });

  it('is the combo order before any success, or when the remembered target is not a candidate', () => {
    expect(models(STRATEGIES.lkgp(abc(), signals(), fresh()).order)).toEqual(['a', 'b', 'c']);
    expect(models(STRATEGIES.lkgp(abc(), signals({ lastGood: 'gone@conn-9' }), fresh()).order)).toEqual(['a', 'b', 'c']);
  });
});

describe('cost-optimized', () => {
  it('cheapest request first by input and output price; unpriced models last', () => {
    const prices: Record<string, { input: number; output: number }> = { a: { input: 3, output: 15 }, c: { input: 0.25, output: 1.25 } };
    const s = signals({ price: (m) => prices[m] ?? null });
    expect(models(STRATEGIES['cost-optimized'](abc(), s, fresh()).order)).toEqual(['c', 'a', 'b']);
  });

  it('weighs output tokens by the output price', () => {
    const prices: Record<string, { input: number; output: number }> = { a: { input: 1, output: 100 }, b: { input: 10, output: 1 } };
    const longOutput = signals({ price: (m) => prices[m] ?? null, tokens: { input: 100, output: 10_000 } });
    const longPrompt = signals({ price: (m) => prices[m] ?? null, tokens: { input: 100_000, output: 10 } });
    const ab = candidates([{ model: 'a' }, { model: 'b' }]);
    expect(models(STRATEGIES['cost-optimized'](ab, longOutput, fresh()).order)).toEqual(['b', 'a']);
    expect(models(STRATEGIES['cost-optimized'](ab, longPrompt, fresh()).order)).toEqual(['a', 'b']);
  });
});

describe('headroom', () => {
  it('largest share of quota left first; unmeasured counts as full; exhausted last', () => {
    const q: Record<string, number> = { 'conn-0': 0.2, 'conn-1': 0.9, 'conn-2': 0 };
    const cands = candidates([{ model: 'a' }, { model: 'b' }, { model: 'c' }, { model: 'd' }]);
    const s = signals({ quota: (id) => (id in q ? reading({ fraction: q[id]! }) : null) });
    expect(models(STRATEGIES.headroom(cands, s, fresh()).order)).toEqual(['d', 'b', 'a', 'c']);
  });
});

describe('quota-weighted', () => {
  it('leads in proportion to headroom and never leads with an exhausted target', () => {
    const q: Record<string, number> = { 'conn-0': 0.75, 'conn-1': 0.25, 'conn-2': 0 };
    const s = signals({ random: seededRandom(5), quota: (id) => reading({ fraction: q[id]! }) });
    const count: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 2_000; i++) {
      const order = STRATEGIES['quota-weighted'](abc(), s, fresh()).order;
      count[order[0]!.target.model]!++;
      expect(order[2]!.target.model).toBe('c');
    }
    expect(count.c).toBe(0);
    expect(count.a / 2_000).toBeGreaterThan(0.7);
    expect(count.a / 2_000).toBeLessThan(0.8);
  });
});

describe('reset-aware', () => {
  it('soonest reset first, unknown resets next, exhausted last (R-OTH-02)', () => {
    const q: Record<string, ReturnType<typeof reading>> = {
      'conn-0': reading({ fraction: 0.5, resetAt: NOW + 60_000 }),
      'conn-1': reading({ fraction: 0.5, resetAt: NOW + 5_000 }),
      'conn-2': reading({ fraction: 0, resetAt: NOW + 1_000 }),
    };
    const cands = candidates([{ model: 'a' }, { model: 'b' }, { model: 'c' }, { model: 'd' }]);
    const s = signals({ quota: (id) => q[id] ?? null });
    expect(models(STRATEGIES['reset-aware'](cands, s, fresh()).order)).toEqual(['b', 'a', 'd', 'c']);
  });
});

describe('reset-window', () => {
  it('targets whose quota resets within the window go first; the rest keep the combo order', () => {
    const q: Record<string, ReturnType<typeof reading>> = {
      'conn-1': reading({ fraction: 0.6, resetAt: NOW + 20 * 60_000 }), // outside a 15 min window
      'conn-2': reading({ fraction: 0.3, resetAt: NOW + 10 * 60_000 }),
      'conn-3': reading({ fraction: 0.1, resetAt: NOW + 2 * 60_000 }),
    };
    const cands = candidates([{ model: 'a' }, { model: 'b' }, { model: 'c' }, { model: 'd' }]);
    const s = signals({ quota: (id) => q[id] ?? null });
    expect(models(STRATEGIES['reset-window'](cands, s, fresh()).order)).toEqual(['d', 'c', 'a', 'b']);
    const wide = signals({ quota: (id) => q[id] ?? null, resetWindowMs: 30 * 60_000 });
    expect(models(STRATEGIES['reset-window'](cands, wide, fresh()).order)).toEqual(['d', 'c', 'b', 'a']);
  });
});

describe('context-optimized', () => {
  it('the smallest window that fits first; unknown next; too small last, largest first', () => {
    const w: Record<string, number> = { huge: 1_000_000, mid: 128_000, small: 16_000, tiny: 8_000 };
    const cands = candidates([{ model: 'huge' }, { model: 'tiny' }, { model: 'mystery' }, { model: 'mid' }, { model: 'small' }]);
    const s = signals({ contextWindow: (m) => w[m] ?? null, tokens: { input: 20_000, output: 4_000 } });
    expect(models(STRATEGIES['context-optimized'](cands, s, fresh()).order)).toEqual(['mid', 'huge', 'mystery', 'small', 'tiny']);
  });
});

describe('cache-optimized', () => {
  it('one conversation always leads with the same target; conversations spread over all targets', () => {
    const cands = candidates([{ model: 'a' }, { model: 'b' }, { model: 'c' }, { model: 'd' }]);
    const leadFor = (key: string) => STRATEGIES['cache-optimized'](cands, signals({ promptKey: key }), fresh()).order[0]!.target.model;
    expect(leadFor('conversation-1')).toBe(leadFor('conversation-1'));
    const spread: Record<string, number> = {};
    for (let i = 0; i < 400; i++) {
      const m = leadFor(`conversation-${i}`);
      spread[m] = (spread[m] ?? 0) + 1;
    }
    expect(Object.keys(spread).sort()).toEqual(['a', 'b', 'c', 'd']);
    for (const n of Object.values(spread)) expect(n).toBeGreaterThan(60);
  });

  it('removing a target moves only the conversations that led with it', () => {
    const all = candidates([{ model: 'a' }, { model: 'b' }, { model: 'c' }]);
    const without = all.filter((c) => c.target.model !== 'b');
    for (let i = 0; i < 100; i++) {
      const key = `conv-${i}`;
      const before = STRATEGIES['cache-optimized'](all, signals({ promptKey: key }), fresh()).order;
      const after = STRATEGIES['cache-optimized'](without, signals({ promptKey: key }), fresh()).order;
      if (before[0]!.target.model !== 'b') expect(after[0]).toBe(before[0]);
      else expect(after[0]).toBe(before[1]);
    }
  });
});

describe('auto', () => {
  it('prefers the faster, healthier, cheaper candidate; the weights decide the trade-off', () => {
    const cands = candidates([{ model: 'slow-cheap' }, { model: 'fast-dear' }]);
    const latency = (id: string) => ({ samples: 10, meanTtfbMs: id === 'conn-0' ? 4_000 : 400, errorRate: 0 });
    const prices: Record<string, { input: number; output: number }> = { 'slow-cheap': { input: 0.1, output: 0.1 }, 'fast-dear': { input: 10, output: 10 } };
    const base = { latency, price: (m: string) => prices[m] ?? null };
    expect(models(STRATEGIES.auto(cands, signals(base), fresh()).order)).toEqual(['fast-dear', 'slow-cheap']);
    const costFirst = signals({ ...base, autoWeights: { health: 0, latency: 1, errorRate: 0, headroom: 0, cost: 10 } });
    expect(models(STRATEGIES.auto(cands, costFirst, fresh()).order)).toEqual(['slow-cheap', 'fast-dear']);
  });

  it('a recently failing, backed-off connection scores lower on health', () => {
    const cands = candidates([{ model: 'a' }, { model: 'b' }]);
    cands[0]!.target.conn.health.backoffLevel = 3;
    cands[0]!.target.conn.health.lastErrorAt = NOW - 60_000;
    expect(healthScore(cands[0]!.target.conn, NOW)).toBeCloseTo(0.125);
    expect(healthScore(cands[1]!.target.conn, NOW)).toBe(1);
    expect(models(STRATEGIES.auto(cands, signals(), fresh()).order)).toEqual(['b', 'a']);
  });

  it('an error rate counts against a candidate', () => {
    const cands = candidates([{ model: 'flaky' }, { model: 'steady' }]);
    const latency = (id: string) => ({ samples: 10, meanTtfbMs: 500, errorRate: id === 'conn-0' ? 0.5 : 0 });
    expect(models(STRATEGIES.auto(cands, signals({ latency }), fresh()).order)).toEqual(['steady', 'flaky']);
  });
});

describe('every strategy', () => {
  it.each(Object.keys(STRATEGIES) as (keyof typeof STRATEGIES)[])('%s returns each candidate exactly once', (name) => {
    const cands = candidates([
      { model: 'a', conn: 'a1', entry: 0 },
      { model: 'a', conn: 'a2', entry: 0 },
      { model: 'b', entry: 1 },
      { model: 'c', entry: 2 },
    ]);
    for (let seed = 0; seed < 10; seed++) expect(isPermutation(STRATEGIES[name](cands, signals({ seed }), fresh()).order, cands)).toBe(true);
  });
});
