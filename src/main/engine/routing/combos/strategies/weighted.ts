// weighted: a random order in which each combo target leads with probability weight / total
// weight; the rest follow in the same weighted way, so failover also respects the weights.
import { groups, weightedOrder } from './rank';
import type { Strategy } from './types';

export const weighted: Strategy = (cands, s) => ({
  order: weightedOrder(groups(cands), (g) => g[0]!.weight, s.random).flat(),
});
