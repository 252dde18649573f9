// Account selection order. Best priority first; within one priority the strategy decides who
// goes first: round-robin (turns), fill-first (always the first), or power of two choices (the
// less busy of two random candidates, biased by the latency signal when its weight is above 0).
// The pipeline walks the order and skips excluded targets, so failover continues down the list.
import type { Random } from '../random';
import { latencyPenalty, type LatencyTracker } from './latencyTracker';
import type { Target } from './target';

const MAX_ROTATIONS = 1_000;

export type SelectionStrategy = 'round-robin' | 'fill-first' | 'p2c';

export interface SelectorSignals {
  random: Random;
  latency: LatencyTracker;
  /** Requests in flight or waiting on a connection (the p2c load signal). */
  load(connectionId: string): number;
  now(): number;
}

export class TargetSelector {
  private readonly counters = new Map<string, number>();

  constructor(private readonly signals: SelectorSignals) {}

  /** The targets in the order to try them. `key` keeps a separate rotation per model. */
  order(key: string, targets: Target[], strategy: SelectionStrategy, latencyWeight = 0): Target[] {
    if (targets.length <= 1 || strategy === 'fill-first') return targets;
    const out: Target[] = [];
    let turn = 0;
    if (strategy === 'round-robin') {
      turn = this.counters.get(key) ?? 0;
      // Keys are model names a client chose; keep the map bounded.
      if (this.counters.size >= MAX_ROTATIONS && !this.counters.has(key)) this.counters.clear();
      this.counters.set(key, turn + 1);
    }
    for (let i = 0; i < targets.length; ) {
      let j = i;
      // A group is one priority, split into native then translated targets (resolve.ts).
      const p = targets[i]!.conn.priority;
      const tr = targets[i]!.translated === true;
      while (j < targets.length && targets[j]!.conn.priority === p && (targets[j]!.translated === true) === tr) j++;
      const group = targets.slice(i, j);
      if (strategy === 'round-robin') {
        const shift = turn % group.length;
        for (let k = 0; k < group.length; k++) out.push(group[(k + shift) % group.length]!);
      } else {
        out.push(...this.powerOfTwo(group, latencyWeight));
      }
      i = j;
    }
    return out;
  }

  /** Two random candidates; the one with the lower score goes first, the other second. */
  private powerOfTwo(group: Target[], weight: number): Target[] {
    if (group.length === 1) return group;
    const { random } = this.signals;
    const a = Math.floor(random.next() * group.length);
    let b = Math.floor(random.next() * (group.length - 1));
    if (b >= a) b++;
    const x = group[a]!;
    const y = group[b]!;
    const now = this.signals.now();
    const sx = this.signals.latency.stats(x.conn.id, now);
    const sy = this.signals.latency.stats(y.conn.id, now);
    const scoreX = this.signals.load(x.conn.id) + latencyPenalty(sx, sy, weight);
    const scoreY = this.signals.load(y.conn.id) + latencyPenalty(sy, sx, weight);
    const [first, second] = scoreY < scoreX ? [y, x] : [x, y];
    return [first, second, ...group.filter((t) => t !== x && t !== y)];
  }
}
