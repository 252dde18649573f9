// context-optimized: the smallest context window that fits the request (estimated prompt tokens
// plus the requested output) first, so large-window models stay free for the prompts that need
// them; models with an unknown window follow; windows too small come last, largest first.
import { stableBy } from './rank';
import type { Strategy } from './types';

export const contextOptimized: Strategy = (cands, s) => {
  const need = s.tokens.input + s.tokens.output;
  return {
    order: stableBy(cands, (c) => {
      const w = s.contextWindow(c.target.model);
      if (w === null) return 2e15;
      return w >= need ? w : 3e15 - w;
    }),
  };
};
