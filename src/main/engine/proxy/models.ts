// GET /v1/models: the models the proxy can route, in OpenAI's list shape, or Anthropic's when the
// client sends anthropic-version (Claude Code does). Combos are listed by name, like models:
// that is how a client asks for them. Gemini clients get Google's list shape (GET /v1beta/models).
import type { IncomingHttpHeaders } from 'node:http';
import type { ModelsView } from '../../../shared/model';
import type { ComboRecord } from '../store/combosRepo';
import type { ConnectionRecord } from '../store/connectionsRepo';

export const COMBO_OWNER = 'switchyard-combo';

export function modelsView(connections: readonly ConnectionRecord[], combos: readonly ComboRecord[] = []): ModelsView {
  const byId = new Map<string, { id: string; provider: string; connectionIds: string[] }>();
  const add = (id: string, provider: string, connId: string) => {
    const cur = byId.get(id);
    if (cur) {
      if (!cur.connectionIds.includes(connId)) cur.connectionIds.push(connId);
    } else byId.set(id, { id, provider, connectionIds: [connId] });
  };
  for (const c of connections) {
    if (!c.enabled) continue;
    for (const m of c.models) {
      add(m, c.provider, c.id);
      add(`${c.provider}/${m}`, c.provider, c.id);
    }
  }
  return {
    models: [...byId.values()].sort((a, b) => a.id.localeCompare(b.id)),
    passthroughConnections: connections
      .filter((c) => c.enabled && c.passthroughModels)
      .map((c) => ({ id: c.id, provider: c.provider, protocol: c.protocol })),
    combos: combos.map((c) => ({ name: c.name, strategy: c.strategy, targets: c.targets.length })),
  };
}

export function modelsResponse(
  connections: readonly ConnectionRecord[],
  headers: IncomingHttpHeaders,
  createdAt: number,
  combos: readonly ComboRecord[] = [],
) {
  const view = modelsView(connections, combos);
  const created = Math.floor(createdAt / 1000);
  // A combo named like a model it routes shadows that model: list the name once, as the combo.
  const comboNames = new Set(combos.map((c) => c.name));
  const listed = [
    ...combos.map((c) => ({ id: c.name, provider: COMBO_OWNER })),
    ...view.models.filter((m) => !comboNames.has(m.id)),
  ];
  if (headers['anthropic-version']) {
    const data = listed.map((m) => ({
      type: 'model',
      id: m.id,
      display_name: m.id,
      created_at: new Date(createdAt).toISOString(),
    }));
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
  }
  return {
    object: 'list',
    data: listed.map((m) => ({ id: m.id, object: 'model', created, owned_by: m.provider })),
  };
}

/** One model in Google's list shape. */
function geminiModel(id: string) {
  return {
    name: `models/${id}`,
    baseModelId: id,
    version: '001',
    displayName: id,
    description: 'Routed by Switchyard',
    supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
  };
}

/**
 * GET /v1beta/models in Google's shape (`{ models: [{ name: 'models/…', … }] }`), or one model
 * (GET /v1beta/models/{id}); null when no connection or combo serves that id.
 */
export function geminiModelsResponse(connections: readonly ConnectionRecord[], combos: readonly ComboRecord[], one: string | null) {
  const view = modelsView(connections, combos);
  const ids = [...new Set([...combos.map((c) => c.name), ...view.models.map((m) => m.id)])];
  if (one === null) return { models: ids.map(geminiModel) };
  const id = one.replace(/^models\//, '');
  return ids.includes(id) ? geminiModel(id) : null;
}
