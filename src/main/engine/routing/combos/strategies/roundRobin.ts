// round-robin: each request starts one combo target further down the list, wrapping around; the
// others follow in list order from there.
import { groups } from './rank';
import type { Strategy } from './types';

export const roundRobin: Strategy = (cands, _s, state) => {
  const g = groups(cands);
  const shift = g.length ? state.turn % g.length : 0;
  const order = [...g.slice(shift), ...g.slice(0, shift)].flat();
  return { order, state: { ...state, turn: (state.turn + 1) % 1_000_000_000 } };
};
