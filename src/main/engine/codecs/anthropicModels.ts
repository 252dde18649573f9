// What an Anthropic target model accepts, read from its id (Anthropic's migration guide): Claude
// 4.6 and later think adaptively (`thinking: {type:'adaptive'}` + `output_config.effort`; a
// `budget_tokens` is refused from 4.7 on), Claude 4.7 and later refuse sampling parameters
// (temperature, top_p), and each family has its own output ceiling. Ids that are not Claude's (an
// Anthropic-compatible gateway serving another model) get the long-standing behaviour:
// budget-style thinking, sampling accepted, 8192 tokens by default.

export interface AnthropicModelTraits {
  thinking: 'adaptive' | 'budget';
  sampling: boolean;
  /** max_tokens when the inbound request gives none (Anthropic requires one). */
  defaultMaxTokens: number;
}

/** Claude version as major + minor/10 (claude-3-5-sonnet → 3.5, claude-sonnet-4-6 → 4.6), or null. */
export function claudeVersion(model: string): number | null {
  const m = model.toLowerCase();
  if (/\bfable\b|claude-fable/.test(m)) return 5;
  let r = /claude-(\d+)-(\d)-(?:opus|sonnet|haiku)/.exec(m);
  if (r) return Number(r[1]) + Number(r[2]) / 10;
  r = /claude-(\d+)-(?:opus|sonnet|haiku)/.exec(m);
  if (r) return Number(r[1]);
  r = /claude-(?:opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(m);
  if (r) return Number(r[1]) + (r[2] ? Number(r[2]) / 10 : 0);
  return null;
}

export function anthropicModelTraits(model: string): AnthropicModelTraits {
  const v = claudeVersion(model);
  if (v === null) return { thinking: 'budget', sampling: true, defaultMaxTokens: 8192 };
  return {
    thinking: v >= 4.6 ? 'adaptive' : 'budget',
    sampling: v < 4.7,
    defaultMaxTokens: v < 3.5 ? 4096 : v < 3.7 ? 8192 : 32000,
  };
}
