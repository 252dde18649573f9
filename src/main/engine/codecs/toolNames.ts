// Namespaced Responses tools (`{"type":"namespace","name":"multi_agent_v1","tools":[…]}`, which
// Codex CLI sends by default) offered to a Chat or Anthropic target as plain function tools. Each
// inner tool gets a flat name the target accepts (^[a-zA-Z0-9_-]{1,64}$, which both Chat and
// Anthropic take), unique among the request's tools, and the same for the same tools list on every
// turn: `<namespace>__<tool>` (Codex's own flat spelling) when that fits, else a cut name with a
// hash of the pair. The request reader offers the flat names and reads a replayed call
// (`function_call` with `namespace`) back to them; the answer writers turn a call of a flat name
// into the `name` + `namespace` pair, because Codex routes a call by that pair. Both sides build
// the map from the inbound request's `tools`, so nothing needs to travel between them.

export interface NamespacedTool {
  namespace: string;
  name: string;
}

export interface ToolNameMap {
  /** Flat name offered to the target → the namespace and tool it stands for. */
  readonly byFlat: ReadonlyMap<string, NamespacedTool>;
  /** The flat name of a (namespace, tool) pair. */
  flatName(namespace: string, name: string): string;
}

const MAX = 64;
const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

const pairKey = (namespace: string, name: string) => `${namespace}\u0000${name}`;

/** FNV-1a, 32 bits, as 8 hex digits: a short stable suffix (not a security measure). */
function hash8(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

function preferred(namespace: string, name: string): string {
  const joined = `${namespace.replace(/_+$/, '')}__${name.replace(/^_+/, '')}`;
  return joined.replace(/[^a-zA-Z0-9_-]/g, '_');
}

function unique(namespace: string, name: string, taken: Set<string>): string {
  const first = preferred(namespace, name);
  if (VALID.test(first) && !taken.has(first)) return first;
  const suffix = `_${hash8(pairKey(namespace, name))}`;
  const stem = first.slice(0, MAX - suffix.length - 3);
  let candidate = `${stem}${suffix}`;
  for (let n = 2; taken.has(candidate); n++) candidate = `${stem}${suffix}${n}`;
  return candidate;
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The flat names for a Responses request's `tools`, or null when it has no namespace with function tools. */
export function toolNameMap(tools: unknown): ToolNameMap | null {
  if (!Array.isArray(tools) || !tools.some((t) => isObj(t) && t.type === 'namespace')) return null;
  const taken = new Set<string>();
  for (const t of tools) if (isObj(t) && t.type === 'function' && typeof t.name === 'string') taken.add(t.name);
  const byFlat = new Map<string, NamespacedTool>();
  const byPair = new Map<string, string>();
  for (const t of tools) {
    if (!isObj(t) || t.type !== 'namespace' || typeof t.name !== 'string' || !Array.isArray(t.tools)) continue;
    for (const inner of t.tools) {
      if (!isObj(inner) || inner.type !== 'function' || typeof inner.name !== 'string') continue;
      const key = pairKey(t.name, inner.name);
      if (byPair.has(key)) continue;
      const flat = unique(t.name, inner.name, taken);
      taken.add(flat);
      byFlat.set(flat, { namespace: t.name, name: inner.name });
      byPair.set(key, flat);
    }
  }
  if (byFlat.size === 0) return null;
  return {
    byFlat,
    // A pair the current tools do not list (a call from an earlier turn's tools) gets its preferred spelling.
    flatName: (namespace, name) => byPair.get(pairKey(namespace, name)) ?? preferred(namespace, name).slice(0, MAX),
  };
}

/** The flat name of a namespaced call: the one the map offered, else Codex's flat spelling cut to fit. */
export function flatToolName(map: ToolNameMap | null, namespace: string, name: string): string {
  return map ? map.flatName(namespace, name) : preferred(namespace, name).slice(0, MAX);
}

/** The `name` (and `namespace`, when the flat name stands for a namespaced tool) of a Responses function call. */
export function responsesCallName(map: ToolNameMap | null, flat: string): { name: string; namespace?: string } {
  const ns = map?.byFlat.get(flat);
  return ns ? { name: ns.name, namespace: ns.namespace } : { name: flat };
}
