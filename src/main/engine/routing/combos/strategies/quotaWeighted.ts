// quota-weighted: a weighted random order where each candidate's chance to lead is its combo
// weight times the share of quota it has left, so load spreads in proportion to headroom instead
// of always hitting the fullest. A candidate with no quota left comes last.
import { headroomOf } from './headroom';
import { weightedOrder } from './rank';
import type { Strategy } from './types';

export const quotaWeighted: Strategy = (cands, s) => ({
  order: weightedOrder(cands, (c) => c.weight * headroomOf(c, s), s.random),
});
