// reset-window: candidates whose quota resets within the combo's window (options.resetWindowMs,
// default 15 minutes) and still have some left go first, soonest reset first: their remaining
// quota is lost at the reset, so it is spent before anything else. The rest keep the combo's
// order, with candidates that reported no quota left at the end.
import { stableBy } from './rank';
import type { Strategy } from './types';

export const resetWindow: Strategy = (cands, s) => ({
  order: stableBy(cands, (c) => {
    const q = s.quota(c.target.conn.id, c.target.model);
    if (q?.fraction === 0) return 3e15;
    if (q?.resetAt != null && q.resetAt - s.now <= s.resetWindowMs) return q.resetAt;
    return 2e15;
  }),
});
