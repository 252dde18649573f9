// Model resolution: which connections may serve a requested model for an inbound API shape.
//   "provider/model"  -> that provider's connections that serve "model" (listed, or any model),
//                        whatever protocol they speak; upstream model "model"
//   "model"           -> connections of the inbound protocol that list it, or, if none lists it,
//                        those of the inbound protocol that accept any model; plus connections of
//                        the other protocol that list it explicitly (reached through translation)
// A connection of the other protocol that accepts any model does not serve a bare model: a model
// id belongs to its vendor's family (a Claude Code request for `claude-sonnet-4-5` is not for a
// DeepSeek key), so it is reached by listing the model or by `provider/model`. At equal priority,
// native targets come before translated ones; the selector keeps that split (selector.ts).
import { protocolName } from '../../../shared/wireProtocols';
import type { ConnectionRecord } from '../store/connectionsRepo';
import type { ApiShape } from '../streams/shape';
import type { Target } from './target';
import { upstreamShapeFor, wireOfShape } from './upstreamShape';

export interface Resolution {
  targets: Target[];
  /** Connections that would serve the model but are disabled. */
  disabled: ConnectionRecord[];
  /** Why nothing matched, for the error message. */
  hint: string | null;
}

const serves = (c: ConnectionRecord, model: string) => c.passthroughModels || c.models.includes(model);

export function resolveTargets(connections: readonly ConnectionRecord[], requestedModel: string, inbound: ApiShape): Resolution {
  const wire = wireOfShape(inbound);
  const slash = requestedModel.indexOf('/');
  if (slash > 0) {
    const provider = requestedModel.slice(0, slash);
    const model = requestedModel.slice(slash + 1);
    if (model && connections.some((c) => c.provider === provider)) {
      const matching = connections.filter((c) => c.provider === provider && serves(c, model));
      return split(matching, model, requestedModel, inbound, () => `no ${provider} connection serves "${model}"`);
    }
  }
  const native = connections.filter((c) => c.protocol === wire);
  const explicit = native.filter((c) => c.models.includes(requestedModel));
  const nativePool = new Set(explicit.length > 0 ? explicit : native.filter((c) => c.passthroughModels));
  // Registry order (priority, then age) is kept; split() moves translated targets after native ones.
  const pool = connections.filter((c) => nativePool.has(c) || (c.protocol !== wire && c.models.includes(requestedModel)));
  return split(pool, requestedModel, requestedModel, inbound, () => {
    if (connections.length === 0) return 'no connection is configured; add one on the Connections page';
    // With one other protocol it is named; with two or more, "another protocol" covers them.
    const others = [...new Set(connections.filter((c) => c.protocol !== wire).map((c) => c.protocol))];
    const other = others.length === 1 ? `${protocolName(others[0]!)}-protocol connection` : 'connection of another protocol';
    const otherOne = others.length === 1 ? `a connection of the ${protocolName(others[0]!)} protocol` : 'a connection of another protocol';
    const why =
      native.length === 0
        ? `no ${protocolName(wire)}-protocol connection is configured, and no ${other} lists "${requestedModel}"`
        : `no connection lists "${requestedModel}" and none of the ${protocolName(wire)} protocol accepts any model (${otherOne} serves only the models it lists)`;
    return `${why}. ${fixes(connections, requestedModel, 'To fix it')}`;
  }, () => fixes(connections, requestedModel, 'Or'));
}

/**
 * What to do when a bare model reaches no enabled connection: the three ways in, each named with
 * where to do it, and an example `provider/model` from a connection that is enabled.
 */
function fixes(connections: readonly ConnectionRecord[], requestedModel: string, lead: string): string {
  const on = connections.filter((c) => c.enabled);
  if (on.length === 0) return 'Enable a connection on the Connections page.';
  const example = on.find((c) => c.models.length > 0) ?? on[0]!;
  const exampleModel = `${example.provider}/${example.models[0] ?? '<model>'}`;
  const family = /^[A-Za-z]+/.exec(requestedModel)?.[0]?.toLowerCase();
  const pattern = family ? `${family}-*` : requestedModel;
  return (
    `${lead}: list "${requestedModel}" on a connection (Connections page); or ask for "provider/model", e.g. "${exampleModel}"; ` +
    `or route this agent's model ids to a connection ("Route model ids" on the Connect your agent page, which adds a mapping such as ${pattern} → ${exampleModel})`
  );
}

/** Only disabled connections serve the model: say which, and the other ways in (never only the disabled one). */
function disabledHint(disabled: readonly ConnectionRecord[], fix: string): string {
  const names = disabled.map((c) => `"${c.name}"`).join(', ');
  const enable = `the only connections that serve it are disabled (${names}); enable one on the Connections page`;
  return fix.startsWith('Enable') ? `${enable}.` : `${enable}. ${fix}`;
}

function split(pool: ConnectionRecord[], model: string, requestedModel: string, inbound: ApiShape, why: () => string, fix: () => string = () => ''): Resolution {
  const targets: Target[] = [];
  const disabled: ConnectionRecord[] = [];
  for (const c of pool) {
    if (!c.enabled) {
      disabled.push(c);
      continue;
    }
    const upstream = upstreamShapeFor(c, inbound);
    targets.push({ conn: c, model, requestedModel, upstream, translated: upstream !== inbound });
  }
  // Stable: within one priority, native targets first, each group in registry order.
  targets.sort((a, b) => a.conn.priority - b.conn.priority || Number(a.translated) - Number(b.translated));
  return {
    targets,
    disabled,
    hint: targets.length ? null : disabled.length ? disabledHint(disabled, fix()) : why(),
  };
}
