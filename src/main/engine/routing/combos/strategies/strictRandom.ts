// strict-random: a shuffled deck of the combo targets; each request takes the next card as its
// first target, so over a cycle of n requests every target leads exactly once, in random order.
// The fallbacks after it are in random order too. An empty deck is reshuffled.
import { groups, shuffle } from './rank';
import type { Strategy } from './types';

export const strictRandom: Strategy = (cands, s, state) => {
  const g = groups(cands);
  if (g.length === 0) return { order: [] };
  const present = new Set(g.map((x) => x[0]!.entry));
  let deck = state.deck.filter((e) => present.has(e));
  if (deck.length === 0) deck = shuffle([...present], s.random);
  const lead = deck[0]!;
  const first = g.find((x) => x[0]!.entry === lead)!;
  const rest = shuffle(
    g.filter((x) => x !== first),
    s.random,
  );
  return { order: [first, ...rest].flat(), state: { ...state, deck: deck.slice(1) } };
};
