// Ranking helpers shared by the strategies: grouping candidates by combo target, stable sorts,
// seeded shuffles and weighted draws, and a string hash for rendezvous hashing.
import type { Random } from '../../../random';
import type { Candidate } from './types';

/** Candidates grouped by combo target, in the order the targets first appear. */
export function groups(cands: readonly Candidate[]): Candidate[][] {
  const byEntry = new Map<number, Candidate[]>();
  for (const c of cands) {
    let g = byEntry.get(c.entry);
    if (!g) byEntry.set(c.entry, (g = []));
    g.push(c);
  }
  return [...byEntry.values()];
}

/** Sorts by `score` ascending; equal scores keep their order (the combo's order). */
export function stableBy<T>(items: readonly T[], score: (x: T) => number): T[] {
  return items
    .map((x, i) => ({ x, i, s: score(x) }))
    .sort((a, b) => (a.s === b.s ? a.i - b.i : a.s < b.s ? -1 : 1))
    .map((e) => e.x);
}

/** Fisher-Yates with the injected Random. */
export function shuffle<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * A random order in which each item leads with probability weight / total, and so on down the
 * list (Efraimidis-Spirakis: sort by u^(1/w)). Items of weight 0 come last, in their order.
 */
export function weightedOrder<T>(items: readonly T[], weight: (x: T) => number, random: Random): T[] {
  const keyed = items.map((x, i) => {
    const w = weight(x);
    const u = random.next();
    return { x, i, k: w > 0 ? Math.pow(u, 1 / w) : -1 };
  });
  return keyed.sort((a, b) => (b.k === a.k ? a.i - b.i : b.k - a.k)).map((e) => e.x);
}

/** 32-bit FNV-1a, for rendezvous hashing (fast, well spread, stable across runs). */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final avalanche so that similar keys spread over the whole range.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
