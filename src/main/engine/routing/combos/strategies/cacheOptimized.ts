// cache-optimized: rendezvous (highest-random-weight) hashing of the prompt's stable prefix over
// the combo targets, so every turn of one conversation leads with the same target and keeps
// hitting its provider's prompt cache, while different conversations spread evenly. When a target
// leaves or joins, only the conversations that hashed to it move. Fallbacks follow in hash order.
import { groups, hash32, stableBy } from './rank';
import type { Strategy } from './types';

export const cacheOptimized: Strategy = (cands, s) => ({
  order: stableBy(groups(cands), (g) => -hash32(`${s.promptKey}\u0000${g[0]!.key}`)).flat(),
});
