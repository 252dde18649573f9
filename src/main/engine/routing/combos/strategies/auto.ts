// auto: one score per candidate from five signals, each 0..1, weighted by the combos.autoWeights
// setting: health (1 / (1 + backoff level), halved after an error in the last 5 minutes),
// latency (fastest mean time to first byte / own), error rate (1 - share of failed attempts),
// headroom (share of rate-limit budget left) and cost (cheapest request cost / own). Unknown
// latency, error rate and cost score 0.5, unknown headroom 1. Highest score first.
import type { ConnectionRecord } from '../../../store/connectionsRepo';
import { requestCost } from './costOptimized';
import { headroomOf } from './headroom';
import { stableBy } from './rank';
import type { Candidate, RankSignals, Strategy } from './types';

const RECENT_ERROR_MS = 5 * 60_000;

export function healthScore(conn: ConnectionRecord, now: number): number {
  const h = conn.health;
  const recent = h.lastErrorAt !== null && now - h.lastErrorAt < RECENT_ERROR_MS;
  return (1 / (1 + Math.max(0, h.backoffLevel))) * (recent ? 0.5 : 1);
}

export function autoScores(cands: readonly Candidate[], s: RankSignals): Map<Candidate, number> {
  const stats = new Map(cands.map((c) => [c, s.latency(c.target.conn.id)]));
  const costs = new Map(cands.map((c) => [c, requestCost(c, s)]));
  let fastest = Infinity;
  for (const st of stats.values()) if (st.meanTtfbMs !== null) fastest = Math.min(fastest, Math.max(1, st.meanTtfbMs));
  let cheapest = Infinity;
  for (const v of costs.values()) if (v !== null) cheapest = Math.min(cheapest, v);
  const w = s.autoWeights;
  const out = new Map<Candidate, number>();
  for (const c of cands) {
    const st = stats.get(c)!;
    const cost = costs.get(c)!;
    const latency = st.meanTtfbMs !== null ? fastest / Math.max(1, st.meanTtfbMs) : 0.5;
    const errors = st.samples > 0 ? 1 - st.errorRate : 0.5;
    const price = cost === null ? 0.5 : cost <= 0 ? 1 : cheapest / cost;
    out.set(
      c,
      w.health * healthScore(c.target.conn, s.now) + w.latency * latency + w.errorRate * errors + w.headroom * headroomOf(c, s) + w.cost * price,
    );
  }
  return out;
}

export const auto: Strategy = (cands, s) => {
  const scores = autoScores(cands, s);
  return { order: stableBy(cands, (c) => -scores.get(c)!) };
};
