// Quota families (SPEC glossary, R-ML-02): the models that share one quota on a connection, so a
// quota or authorisation failure on one of them locks all of them. Codex serves every gpt-5*
// model (spark included) from one quota; for every other provider a model is its own family.

const CODEX_FAMILY = 'gpt-5*';

/** The family key of a model on a provider's connection (the model itself when it has none). */
export function quotaFamilyOf(provider: string, model: string): string {
  if (provider === 'codex' && model.toLowerCase().startsWith('gpt-5')) return CODEX_FAMILY;
  return model;
}
