// fill-first: the combo's order, but a target that is full moves behind the others: its connection
// has as many requests in flight as its concurrency cap, or its provider reported no quota left.
// So the first target takes everything it can hold, and only the overflow spills down the list.
import { stableBy } from './rank';
import type { Candidate, RankSignals, Strategy } from './types';

export function isFull(c: Candidate, s: RankSignals): boolean {
  const cap = s.capacity(c.target.conn.id);
  if (cap !== null && s.load(c.target.conn.id) >= cap) return true;
  return s.quota(c.target.conn.id, c.target.model)?.fraction === 0;
}

export const fillFirst: Strategy = (cands, s) => ({ order: stableBy(cands, (c) => (isFull(c, s) ? 1 : 0)) });
