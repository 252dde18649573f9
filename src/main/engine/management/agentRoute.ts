// "Route this agent's model ids to …" (the Connect your agent page): every model id matching a
// pattern such as `claude-*` goes to one chosen connection and model. It is written as what the
// Combos page would write by hand: a one-target combo named after the pattern and a mapping from
// the pattern to it. Doing it again for the same pattern re-points that combo (and the mapping),
// so a second click never piles up combos; a combo the user made under the same name is left
// alone and the new one gets a free name.
import type { AgentRouteInput } from '../../../shared/contract';
import type { AgentRouteResult } from '../../../shared/model';
import type { ConnectionRegistry } from '../connections/registry';
import { badInput } from '../errors';
import type { ComboRegistry } from '../routing/combos/comboRegistry';

/** `claude-*` → `claude-route`: the pattern's literal part, then `-route`. */
function baseName(pattern: string): string {
  const stem = pattern
    .replace(/[*?]/g, '')
    .replace(/[^A-Za-z0-9._:@+-]/g, '-')
    .replace(/^[^A-Za-z0-9]+|[-._]+$/g, '');
  return `${stem || 'agent'}-route`;
}

export function routeAgentModels(combos: ComboRegistry, registry: Pick<ConnectionRegistry, 'get'>, input: AgentRouteInput): AgentRouteResult {
  const pattern = input.pattern.trim();
  const model = input.model.trim();
  const conn = registry.get(input.connectionId);
  if (!conn) throw badInput('connectionId', `no connection has the id "${input.connectionId}"`);
  const mapping = combos.mappingViews().find((m) => m.pattern.toLowerCase() === pattern.toLowerCase()) ?? null;
  const base = baseName(pattern);
  const ours = mapping ? combos.get(mapping.comboId) : undefined;
  const targets = [{ connectionId: conn.id, model }];
  let written;
  if (ours && ours.name.startsWith(base)) {
    written = combos.update(ours.id, { targets }, false);
  } else {
    let name = base;
    for (let n = 2; combos.get(name); n++) name = `${base}-${n}`;
    written = combos.create({ name, strategy: 'priority', targets });
  }
  const input2 = { pattern, combo: written.combo.id };
  const m = mapping ? combos.updateMapping(mapping.id, input2) : combos.createMapping(input2);
  return { combo: written.combo, mapping: m, warnings: written.warnings };
}
