// On a follower, what came from the team is read-only (issue 26): an edit of a connection, combo,
// model mapping or setting the team manages is refused with a plain message naming who publishes
// it, and what to do instead. Everything else (this instance's own additions, tests, clearing a
// cooldown, client keys) goes through. Wraps the management handlers, so IPC and HTTP answer alike.
import type { Handlers } from '../../../shared/contract';
import { validatePatch } from '../../../shared/settings';
import type { ConnectionRegistry } from '../connections/registry';
import { ApiError } from '../errors';
import type { ComboRegistry } from '../routing/combos/comboRegistry';
import type { ManagedKind } from '../team/configShare';

export interface TeamGuardDeps {
  ownerOf(kind: ManagedKind, id: string): string | null;
  registry: Pick<ConnectionRegistry, 'get'>;
  combos: Pick<ComboRegistry, 'get' | 'mappingViews'>;
}

const managed = (what: string, owner: string) =>
  new ApiError(
    409,
    'managed_by_team',
    `${what} is managed by the team (published by ${owner}). Change it on ${owner}'s Switchyard, or stop following the team on the Team page.`,
  );

export function guardTeamManaged(h: Handlers, d: TeamGuardDeps): Handlers {
  const connection = (id: string) => {
    const owner = d.ownerOf('connection', id);
    if (owner) throw managed(`The connection "${d.registry.get(id)?.name ?? id}"`, owner);
  };
  const combo = (idOrName: string) => {
    const c = d.combos.get(idOrName);
    const owner = c ? d.ownerOf('combo', c.id) : null;
    if (owner) throw managed(`The combo "${c!.name}"`, owner);
  };
  const mapping = (id: string) => {
    const owner = d.ownerOf('mapping', id);
    if (!owner) return;
    const m = d.combos.mappingViews().find((x) => x.id === id);
    throw managed(`The model mapping "${m?.pattern ?? id}"`, owner);
  };
  const settings = (patch: unknown) => {
    const v = validatePatch(patch);
    // An invalid patch is the settings service's to refuse, with its own words.
    if (!v.ok) return;
    const held = v.entries.map((e) => ({ key: e.key, owner: d.ownerOf('setting', e.key) })).filter((x) => x.owner !== null);
    if (held.length === 0) return;
    const what = held.length === 1 ? 'This setting' : 'These settings';
    throw managed(what, held[0]!.owner!);
  };
  return {
    ...h,
    replaceConnection: async (input) => (connection(input.id), h.replaceConnection(input)),
    updateConnection: async (input) => (connection(input.id), h.updateConnection(input)),
    deleteConnection: async (input) => (connection(input.id), h.deleteConnection(input)),
    setRateLimitProtection: async (input) => (connection(input.connectionId), h.setRateLimitProtection(input)),
    replaceCombo: async (input) => (combo(input.id), h.replaceCombo(input)),
    updateCombo: async (input) => (combo(input.id), h.updateCombo(input)),
    deleteCombo: async (input) => (combo(input.id), h.deleteCombo(input)),
    updateModelMapping: async (input) => (mapping(input.id), h.updateModelMapping(input)),
    deleteModelMapping: async (input) => (mapping(input.id), h.deleteModelMapping(input)),
    routeAgentModels: async (input) => {
      // Routing a pattern again re-points its mapping and combo: refused when the team owns either.
      const m = d.combos.mappingViews().find((x) => x.pattern.toLowerCase() === input.pattern.trim().toLowerCase());
      if (m) {
        mapping(m.id);
        combo(m.comboId);
      }
      return h.routeAgentModels(input);
    },
    patchSettings: async (input) => (settings(input.patch), h.patchSettings(input)),
    patchResilience: async (input) => (settings(input.patch), h.patchResilience(input)),
  };
}
