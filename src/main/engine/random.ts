// The Random port: selection and jitter draw from it, so tests can make them deterministic.
import { randomBytes } from 'node:crypto';

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
}

export const systemRandom: Random = { next: () => Math.random() };

export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

/** Deterministic generator (mulberry32) for tests and reproducible benches. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return {
    next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}
