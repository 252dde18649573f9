// least-used: the candidate with the fewest requests in flight (or waiting for a slot) first; ties
// keep the combo's order.
import { stableBy } from './rank';
import type { Strategy } from './types';

export const leastUsed: Strategy = (cands, s) => ({ order: stableBy(cands, (c) => s.load(c.target.conn.id)) });
