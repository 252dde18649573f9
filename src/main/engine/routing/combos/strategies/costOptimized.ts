// cost-optimized: the cheapest target for this request first, by the model price table: estimated
// prompt tokens times the input price plus the requested output tokens times the output price.
// Models without a price come after every priced one, in the combo's order.
import { PER_TOKEN } from '../modelCatalog';
import { stableBy } from './rank';
import type { Candidate, RankSignals, Strategy } from './types';

/** Estimated USD cost of this request on a candidate's model; null when the model has no price. */
export function requestCost(c: Candidate, s: RankSignals): number | null {
  const p = s.price(c.target.model);
  if (!p) return null;
  return (s.tokens.input * p.input + s.tokens.output * p.output) * PER_TOKEN;
}

export const costOptimized: Strategy = (cands, s) => ({
  order: stableBy(cands, (c) => requestCost(c, s) ?? Infinity),
});
