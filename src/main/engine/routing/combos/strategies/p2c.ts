// p2c (power of two choices): two random candidates; the less busy one (requests in flight or
// waiting, plus the latency and error-rate bias of p2cLatency.weight) goes first, the other second,
// the rest follow in the combo's order.
import { latencyPenalty } from '../../latencyTracker';
import type { Strategy } from './types';

export const p2c: Strategy = (cands, s) => {
  if (cands.length < 2) return { order: [...cands] };
  const a = Math.floor(s.random.next() * cands.length);
  let b = Math.floor(s.random.next() * (cands.length - 1));
  if (b >= a) b++;
  const x = cands[a]!;
  const y = cands[b]!;
  const lx = s.latency(x.target.conn.id);
  const ly = s.latency(y.target.conn.id);
  const scoreX = s.load(x.target.conn.id) + latencyPenalty(lx, ly, s.latencyWeight);
  const scoreY = s.load(y.target.conn.id) + latencyPenalty(ly, lx, s.latencyWeight);
  const [first, second] = scoreY < scoreX ? [y, x] : [x, y];
  return { order: [first, second, ...cands.filter((c) => c !== x && c !== y)] };
};
