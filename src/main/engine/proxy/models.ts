// GET /v1/models: the models the proxy can route, in OpenAI's list shape, or Anthropic's when the
// client sends anthropic-version (Claude Code does).
import type { IncomingHttpHeaders } from 'node:http';
import type { ModelsView } from '../../../shared/model';
import type { ConnectionRecord } from '../store/connectionsRepo';

export function modelsView(connections: readonly ConnectionRecord[]): ModelsView {
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
  };
}

export function modelsResponse(connections: readonly ConnectionRecord[], headers: IncomingHttpHeaders, createdAt: number) {
  const view = modelsView(connections);
  const created = Math.floor(createdAt / 1000);
  if (headers['anthropic-version']) {
    const data = view.models.map((m) => ({
      type: 'model',
      id: m.id,
      display_name: m.id,
      created_at: new Date(createdAt).toISOString(),
    }));
    return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
  }
  return {
    object: 'list',
    data: view.models.map((m) => ({ id: m.id, object: 'model', created, owned_by: m.provider })),
  };
}
