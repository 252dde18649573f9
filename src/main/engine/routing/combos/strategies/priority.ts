// priority: the targets in the order the combo lists them (within a target, its connections by
// their own priority and the routing selection setting).
import type { Strategy } from './types';

export const priority: Strategy = (cands) => ({ order: [...cands] });
