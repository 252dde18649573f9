// Words for the combo strategies: a label and one sentence each, shown where a combo is edited
// and on its card, so the order a combo takes is never a mystery.
import type { ComboStrategy } from '../../shared/model';

export interface StrategyInfo {
  label: string;
  /** What the strategy does, in one sentence. */
  explain: string;
  /** Whether target weights matter. */
  usesWeights?: boolean;
}

export const STRATEGY_INFO: Record<ComboStrategy, StrategyInfo> = {
  priority: { label: 'Priority', explain: 'Always tries the targets in the order listed; the next one only when the one before fails or is cooling down.' },
  weighted: {
    label: 'Weighted',
    explain: 'Picks the first target at random in proportion to its weight (3 vs 1 = three quarters of the traffic); failover follows the weights too.',
    usesWeights: true,
  },
  'round-robin': { label: 'Round-robin', explain: 'Each request starts one target further down the list, so the targets take turns.' },
  'fill-first': {
    label: 'Fill first',
    explain: 'Sends everything to the first target until it is full (its concurrency cap is reached or its provider reports no quota left), then spills to the next.',
  },
  p2c: { label: 'Power of two choices', explain: 'Draws two targets at random and sends to the less busy one (and, with a latency weight, the faster).' },
  random: { label: 'Random', explain: 'A fresh random order for every request; a request never tries the same target twice.' },
  'strict-random': { label: 'Strict random', explain: 'Shuffles the targets like a deck: over each round of requests every target goes first exactly once.' },
  'least-used': { label: 'Least used', explain: 'Sends to the target with the fewest requests in flight right now.' },
  lkgp: { label: 'Last known good', explain: 'Starts with the target that served the last request successfully, then the listed order.' },
  'cost-optimized': {
    label: 'Cheapest first',
    explain: 'Starts with the target whose model is cheapest for this request (prompt and output tokens times the price table; unpriced models last).',
  },
  headroom: {
    label: 'Most headroom',
    explain: 'Starts with the target that has the largest share of its rate limit left, as its provider reported in the response headers.',
  },
  'quota-weighted': {
    label: 'Quota-weighted',
    explain: 'Random, but in proportion to each target’s remaining rate limit, so load spreads by headroom.',
    usesWeights: true,
  },
  'reset-aware': { label: 'Reset-aware', explain: 'Starts with the target whose quota resets soonest, so quota about to refill anyway gets used first.' },
  'reset-window': {
    label: 'Reset window',
    explain: 'Targets whose quota resets within the window (15 minutes unless set) go first, to spend quota that would be lost at the reset.',
  },
  'context-optimized': {
    label: 'Smallest window that fits',
    explain: 'Starts with the model with the smallest context window that still fits the request, keeping large-window models free.',
  },
  'cache-optimized': {
    label: 'Prompt-cache friendly',
    explain: 'Hashes the start of the conversation so every turn of it goes to the same target and keeps hitting that provider’s prompt cache.',
  },
  auto: {
    label: 'Auto',
    explain: 'Scores each target on health, latency, error rate, rate-limit headroom and cost (weights in Resilience settings → Combos) and starts with the best.',
  },
};
