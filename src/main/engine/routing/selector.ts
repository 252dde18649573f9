// Account selection order: best priority first; within one priority, round-robin (or fill-first).
// The pipeline walks the order and skips excluded targets, so failover continues down the list.
import type { Target } from './target';

export class TargetSelector {
  private readonly counters = new Map<string, number>();

  /** Returns the targets in the order to try them. Advances the round-robin counter for `key`. */
  order(key: string, targets: Target[], roundRobin: boolean): Target[] {
    if (targets.length <= 1 || !roundRobin) return targets;
    const n = this.counters.get(key) ?? 0;
    this.counters.set(key, n + 1);
    const out: Target[] = [];
    let i = 0;
    while (i < targets.length) {
      let j = i;
      const p = targets[i]!.conn.priority;
      while (j < targets.length && targets[j]!.conn.priority === p) j++;
      const size = j - i;
      const shift = n % size;
      for (let k = 0; k < size; k++) out.push(targets[i + ((k + shift) % size)]!);
      i = j;
    }
    return out;
  }
}
