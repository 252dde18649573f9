// random: a uniformly random order of the combo targets for each request. The order is a
// permutation, so failover never tries a target twice within one request.
import { groups, shuffle } from './rank';
import type { Strategy } from './types';

export const random: Strategy = (cands, s) => ({ order: shuffle(groups(cands), s.random).flat() });
