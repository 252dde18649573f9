// headroom: the candidate with the largest share of its rate-limit budget left first (the tighter
// of requests and tokens, from the provider's rate-limit headers). A target never measured counts
// as full; one that reported nothing left goes last. Ties keep the combo's order.
import { stableBy } from './rank';
import type { Candidate, RankSignals, Strategy } from './types';

/** Share of quota left, 0..1; 1 when nothing is known. */
export const headroomOf = (c: Candidate, s: RankSignals) => s.quota(c.target.conn.id, c.target.model)?.fraction ?? 1;

export const headroom: Strategy = (cands, s) => ({ order: stableBy(cands, (c) => -headroomOf(c, s)) });
