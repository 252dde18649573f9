// Every combo strategy by name.
import type { ComboStrategy } from '../../../../../shared/model';
import { auto } from './auto';
import { cacheOptimized } from './cacheOptimized';
import { contextOptimized } from './contextOptimized';
import { costOptimized } from './costOptimized';
import { fillFirst } from './fillFirst';
import { headroom } from './headroom';
import { leastUsed } from './leastUsed';
import { lkgp } from './lkgp';
import { p2c } from './p2c';
import { priority } from './priority';
import { quotaWeighted } from './quotaWeighted';
import { random } from './random';
import { resetAware } from './resetAware';
import { resetWindow } from './resetWindow';
import { roundRobin } from './roundRobin';
import { strictRandom } from './strictRandom';
import type { Strategy } from './types';
import { weighted } from './weighted';

export const STRATEGIES: Record<ComboStrategy, Strategy> = {
  priority,
  weighted,
  'round-robin': roundRobin,
  'fill-first': fillFirst,
  p2c,
  random,
  'strict-random': strictRandom,
  'least-used': leastUsed,
  lkgp,
  'cost-optimized': costOptimized,
  headroom,
  'quota-weighted': quotaWeighted,
  'reset-aware': resetAware,
  'reset-window': resetWindow,
  'context-optimized': contextOptimized,
  'cache-optimized': cacheOptimized,
  auto,
};

export type { Candidate, RankSignals, Ranked, RotationState, Strategy } from './types';
