// Builders for the combo strategy tests: candidates over fake connections, and rank signals with
// a fixed time, a seeded Random and per-test overrides for load, latency, quota and prices.
import { seededRandom } from '../../../src/main/engine/random';
import type { Candidate, RankSignals, RotationState } from '../../../src/main/engine/routing/combos/strategies';
import type { LatencyStats } from '../../../src/main/engine/routing/latencyTracker';
import type { QuotaReading } from '../../../src/main/engine/routing/combos/quotaSignals';
import { connectionRecord } from '../../support/builders';

export const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);

/** One candidate per spec, entry = index unless given. */
export function candidates(specs: { model: string; conn?: string; entry?: number; weight?: number }[]): Candidate[] {
  return specs.map((s, i) => {
    const conn = connectionRecord({ id: s.conn ?? `conn-${i}`, name: s.conn ?? `Conn ${i}` });
    const entry = s.entry ?? i;
    return {
      target: { conn, model: s.model, requestedModel: 'pool', combo: { id: 'combo-1', name: 'pool', index: entry, key: `p/${s.model}#` } },
      entry,
      weight: s.weight ?? 1,
      key: `p/${s.model}#`,
    };
  });
}

const noLatency: LatencyStats = { samples: 0, meanTtfbMs: null, errorRate: 0 };

export function signals(over: Partial<RankSignals> & { seed?: number } = {}): RankSignals {
  const { seed, ...rest } = over;
  return {
    now: NOW,
    random: seededRandom(seed ?? 42),
    load: () => 0,
    capacity: () => null,
    latency: () => noLatency,
    latencyWeight: 0,
    quota: () => null,
    price: () => null,
    contextWindow: () => null,
    tokens: { input: 1_000, output: 1_000 },
    promptKey: 'conversation-1',
    lastGood: null,
    autoWeights: { health: 3, latency: 2, errorRate: 2, headroom: 2, cost: 1 },
    resetWindowMs: 15 * 60_000,
    ...rest,
  };
}

export const fresh = (): RotationState => ({ turn: 0, deck: [] });

export const models = (order: Candidate[]) => order.map((c) => c.target.model);

export const reading = (r: Partial<QuotaReading>): QuotaReading => ({
  fraction: null,
  requestsRemaining: null,
  tokensRemaining: null,
  resetAt: null,
  observedAt: NOW,
  ...r,
});
