// reset-aware (R-OTH-02): the candidate whose quota resets soonest first, so quota that is about
// to be refilled anyway gets used; candidates without a known reset follow, and candidates that
// reported no quota left come last (soonest reset first among them).
import { stableBy } from './rank';
import type { Strategy } from './types';

export const resetAware: Strategy = (cands, s) => ({
  order: stableBy(cands, (c) => {
    const q = s.quota(c.target.conn.id, c.target.model);
    const exhausted = q?.fraction === 0;
    const reset = q?.resetAt ?? null;
    // Three bands: usable with a known reset, unknown reset, exhausted; then by reset time.
    const band = exhausted ? 2 : reset === null ? 1 : 0;
    return band * 1e15 + (reset ?? 0);
  }),
});
