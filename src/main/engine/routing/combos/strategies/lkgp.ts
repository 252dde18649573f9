// lkgp (last known good provider): the target (and connection) that last served this combo goes
// first, the rest in the combo's order. Before any success, it is the combo's order.
import { memoryKey, type Strategy } from './types';

export const lkgp: Strategy = (cands, s) => {
  const good = s.lastGood === null ? undefined : cands.find((c) => memoryKey(c) === s.lastGood);
  return { order: good ? [good, ...cands.filter((c) => c !== good)] : [...cands] };
};
