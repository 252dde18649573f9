// Model resolution: which connections may serve a requested model on an inbound protocol.
//   "provider/model"  -> that provider's connections, upstream model "model"
//   "model"           -> connections that list it; if none lists it, passthrough connections
import type { WireProtocol } from '../../../shared/model';
import type { ConnectionRecord } from '../store/connectionsRepo';
import type { Target } from './target';

export interface Resolution {
  targets: Target[];
  /** Connections that would serve the model but are disabled. */
  disabled: ConnectionRecord[];
  /** Why nothing matched, for the error message. */
  hint: string | null;
}

const serves = (c: ConnectionRecord, model: string) => c.passthroughModels || c.models.includes(model);

export function resolveTargets(
  connections: readonly ConnectionRecord[],
  requestedModel: string,
  protocol: WireProtocol,
): Resolution {
  const slash = requestedModel.indexOf('/');
  if (slash > 0) {
    const provider = requestedModel.slice(0, slash);
    const model = requestedModel.slice(slash + 1);
    if (model && connections.some((c) => c.provider === provider)) {
      const matching = connections.filter((c) => c.provider === provider && c.protocol === protocol && serves(c, model));
      return split(matching, model, requestedModel, () =>
        connections.some((c) => c.provider === provider && c.protocol !== protocol)
          ? `provider "${provider}" speaks the ${protocol === 'anthropic' ? 'OpenAI' : 'Anthropic'} protocol; call its endpoint instead`
          : `no ${provider} connection serves "${model}"`,
      );
    }
  }
  const sameProtocol = connections.filter((c) => c.protocol === protocol);
  const explicit = sameProtocol.filter((c) => c.models.includes(requestedModel));
  const pool = explicit.length > 0 ? explicit : sameProtocol.filter((c) => c.passthroughModels);
  return split(pool, requestedModel, requestedModel, () => {
    if (sameProtocol.length === 0) {
      return `no ${protocol === 'anthropic' ? 'Anthropic' : 'OpenAI'}-protocol connection is configured`;
    }
    const elsewhere = connections.some((c) => c.protocol !== protocol && c.models.includes(requestedModel));
    return elsewhere
      ? `"${requestedModel}" is served only over the ${protocol === 'anthropic' ? 'OpenAI' : 'Anthropic'} protocol`
      : `no connection lists "${requestedModel}" and none accepts any model`;
  });
}

function split(pool: ConnectionRecord[], model: string, requestedModel: string, why: () => string): Resolution {
  const targets: Target[] = [];
  const disabled: ConnectionRecord[] = [];
  for (const c of pool) {
    if (c.enabled) targets.push({ conn: c, model, requestedModel });
    else disabled.push(c);
  }
  return {
    targets,
    disabled,
    hint: targets.length ? null : disabled.length ? 'every connection that serves it is disabled' : why(),
  };
}
