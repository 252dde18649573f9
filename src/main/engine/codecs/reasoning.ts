// Reasoning effort ↔ Anthropic thinking budget, one documented table. Claude Code's own budgets
// ("think" 4000, "think hard" 10000, "ultrathink" 31999) land on low / medium / high.
import type { Effort } from './ir';

/** Thinking budget for an effort on a budget-style Anthropic model (then capped below max_tokens). */
export const EFFORT_BUDGET: Record<Exclude<Effort, 'none'>, number> = {
  minimal: 1024,
  low: 4096,
  medium: 10240,
  high: 24576,
  xhigh: 32768,
  max: 49152,
};

/** Anthropic's minimum budget_tokens. */
export const MIN_THINKING_BUDGET = 1024;

/** An effort for a thinking budget: ≤ 4096 low, ≤ 16384 medium, above that high. */
export function effortForBudget(budget: number): Effort {
  if (budget <= 4096) return 'low';
  if (budget <= 16384) return 'medium';
  return 'high';
}

const EFFORTS = new Set<Effort>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
export const isEffort = (v: unknown): v is Effort => typeof v === 'string' && EFFORTS.has(v as Effort);

/** Anthropic output_config.effort accepts low | medium | high | xhigh | max. */
export function anthropicEffort(e: Effort): 'low' | 'medium' | 'high' | 'xhigh' | 'max' | null {
  if (e === 'none') return null;
  if (e === 'minimal') return 'low';
  return e;
}
