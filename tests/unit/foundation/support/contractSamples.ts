// Valid sample inputs for every contract method, used by the drift tests to call each method
// through each implementation (IPC, preload, HTTP router, HTTP bridge) and check that the handler
// of the same name receives the same parsed input. Methods without a hand-written sample get one
// generated from their zod schema (required fields only); the drift test checks every sample parses.
import type { z } from 'zod';
import { contract, METHOD_NAMES, type Handlers, type MethodName } from '../../../../src/shared/contract';

/** Hand-written samples that exercise optional fields, path params, bodies and query strings. */
const HAND_WRITTEN: Partial<Record<MethodName, Record<string, unknown>>> = {
  patchSettings: { patch: { requestQueue: { maxWaitMs: 5_000 }, 'routing.strategy': 'fill-first' } },
  patchResilience: { patch: { 'requestQueue.maxQueueDepth': 10 } },
  resetResilience: { provider: 'glm' },
  listCooldowns: { provider: 'anthropic' },
  clearCooldowns: { connectionIds: ['c-1', 'c-2'] },
  clearModelCooldown: { provider: 'glm', connection: 'c-1', model: 'glm-4.6' },
  getConnection: { id: 'conn 1/ü' },
  createConnection: {
    name: 'Claude A',
    kind: 'anthropic',
    baseUrl: 'http://127.0.0.1:9/anthropic',
    secret: 'sk-ant-sample-secret-value',
    priority: 2,
    models: ['claude-x'],
  },
  replaceConnection: { id: 'c-1', patch: { name: 'Renamed', priority: 3 } },
  updateConnection: { id: 'c-1', patch: { enabled: false } },
  deleteConnection: { id: 'c-1' },
  testConnection: { id: 'c-1' },
  setRateLimitProtection: { connectionId: 'c-1', enabled: true },
  createClientKey: { name: 'Codex' },
  updateClientKey: { id: 'k-1', patch: { scopes: ['lease:exclusive'], allowedConnections: ['c-1', 'c-2'] } },
  forgetSession: { id: 'pin-1' },
  releaseLease: { id: 'lease-1' },
  revealClientKey: { id: 'k-1' },
  applyAgentConfig: { agent: 'codex', keyId: 'k-1', model: 'glm-4.6' },
  restoreAgentConfig: { agent: 'opencode' },
  revokeClientKey: { id: 'k-1' },
  listLogs: { limit: 25, errorsOnly: true, connectionId: 'c-1' },
  getLog: { id: 'req_abc' },
  testErrorRule: { provider: 'agentrouter', status: 403, body: '{"error":{"message":"用户额度不足"}}' },
  probeEgressIp: { id: 'c-1' },
  markNotificationsRead: { ids: ['n-1'] },
  getStateTimeline: { from: 1_000, to: 2_000 },
};

type Def = { type: string; [k: string]: unknown };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** A minimal valid value for a schema: required fields only, the first option of unions. */
function generate(schema: z.ZodType): unknown {
  const d = defOf(schema);
  switch (d.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(d.shape as Record<string, z.ZodType>)) {
        if (defOf(v).type === 'optional') continue;
        out[k] = generate(v);
      }
      return out;
    }
    case 'string':
      return 'sample';
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'enum':
      return Object.values(d.entries as Record<string, unknown>)[0];
    case 'literal':
      return (d.values as unknown[])[0];
    case 'array':
      return [generate(d.element as z.ZodType)];
    case 'record':
      return {};
    case 'union':
      return generate((d.options as z.ZodType[])[0]!);
    case 'nullable':
    case 'default':
    case 'readonly':
      return generate(d.innerType as z.ZodType);
    case 'pipe':
      return generate(d.in as z.ZodType);
    default:
      return 'sample';
  }
}

export function sampleInput(name: MethodName): Record<string, unknown> {
  const hand = HAND_WRITTEN[name];
  if (hand) return structuredClone(hand);
  return generate(contract[name].input as z.ZodType) as Record<string, unknown>;
}

export interface RecordedCall {
  name: MethodName;
  input: unknown;
}

/** Handlers that record which method ran with which (already parsed) input. */
export function recordingHandlers(): { handlers: Handlers; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const name of METHOD_NAMES) {
    handlers[name] = async (input: unknown) => {
      calls.push({ name, input });
      return { answeredBy: name };
    };
  }
  return { handlers: handlers as unknown as Handlers, calls };
}
