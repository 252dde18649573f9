// Combos and model mappings in memory, written through to SQLite: the proxy reads them on the hot
// path (no database read per request), the management API writes them here. Every write is
// validated against the connections first (a 400 naming the field, nothing written), so a stored
// combo always named real providers and connections when it was saved; a connection removed later
// shows up as a target without a connection when the combo is planned.
import { randomUUID } from 'node:crypto';
import type { ComboCreateInput, ComboTargetInput, ComboUpdateInput, ModelMappingInput } from '../../../../shared/contract';
import type {
  ComboOptions,
  ComboStrategy,
  ComboTarget,
  ComboView,
  ComboWriteResult,
  CombosSnapshot,
  ModelMappingView,
  WireProtocol,
} from '../../../../shared/model';
import { protocolName, WIRE_PROTOCOL_NAMES } from '../../../../shared/wireProtocols';
import type { Clock } from '../../clock';
import type { ConnectionRegistry } from '../../connections/registry';
import { badInput, notFound } from '../../errors';
import type { ComboRecord, CombosRepo, ModelMappingRecord } from '../../store/combosRepo';
import type { ModelCatalog } from './modelCatalog';
import { bestMatch, compilePattern, type CompiledPattern } from './modelPattern';

export interface MappingEntry {
  rec: ModelMappingRecord;
  compiled: CompiledPattern;
}

/** How a requested model found its combo. */
export interface ComboMatch {
  combo: ComboRecord;
  via: 'name' | 'prefix' | 'mapping';
  pattern: string | null;
}

const COMBO_PREFIX = 'combo/';

/** The key that makes two targets "the same target" (and lkgp / hashing identities stable). */
export const targetKey = (t: ComboTarget) => `${t.provider}/${t.model}#${t.connectionId ?? ''}`;

export class ComboRegistry {
  private byId = new Map<string, ComboRecord>();
  /** Lower-cased name -> combo: names are unique regardless of case. */
  private byName = new Map<string, ComboRecord>();
  private mappings: MappingEntry[] = [];
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly repo: CombosRepo,
    private readonly connections: ConnectionRegistry,
    private readonly catalog: ModelCatalog,
    private readonly clock: Clock,
  ) {
    for (const c of repo.combos()) this.put(c);
    this.mappings = repo.mappings().map((rec) => ({ rec, compiled: compilePattern(rec.pattern) }));
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of [...this.listeners]) fn();
  }

  /** Reads every combo and mapping from the store again (team mode wrote the team's copy there). */
  reload(): void {
    this.byId.clear();
    this.byName.clear();
    for (const c of this.repo.combos()) this.put(c);
    this.mappings = this.repo.mappings().map((rec) => ({ rec, compiled: compilePattern(rec.pattern) }));
    this.changed();
  }

  private put(c: ComboRecord): void {
    this.byId.set(c.id, c);
    this.byName.set(c.name.toLowerCase(), c);
  }

  get size(): number {
    return this.byId.size;
  }

  list(): ComboRecord[] {
    // Oldest first; the Map keeps creation order for combos created in the same millisecond.
    return [...this.byId.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  /** By id, or by name (any case). */
  get(idOrName: string): ComboRecord | undefined {
    return this.byId.get(idOrName) ?? this.byName.get(idOrName.toLowerCase());
  }

  require(idOrName: string): ComboRecord {
    const c = this.get(idOrName);
    if (!c) throw notFound('combo', idOrName);
    return c;
  }

  /**
   * The combo a requested model routes to: its exact name, then `combo/<name>`, then the most
   * specific mapping pattern that matches. Null: not a combo (provider/model or a bare model).
   */
  resolve(model: string): ComboMatch | null {
    if (this.byId.size === 0) return null;
    const lower = model.toLowerCase();
    const named = this.byName.get(lower);
    if (named) return { combo: named, via: 'name', pattern: null };
    if (lower.startsWith(COMBO_PREFIX)) {
      const c = this.byName.get(lower.slice(COMBO_PREFIX.length));
      if (c) return { combo: c, via: 'prefix', pattern: null };
    }
    const m = this.mappings.length ? bestMatch(this.mappings, model) : null;
    if (m) {
      const c = this.byId.get(m.rec.comboId);
      if (c) return { combo: c, via: 'mapping', pattern: m.rec.pattern };
    }
    return null;
  }

  // ---- combos ----------------------------------------------------------------------------------

  create(input: ComboCreateInput): ComboWriteResult {
    const name = input.name.trim();
    this.checkName(name, null);
    const targets = this.checkTargets(input.targets);
    const now = this.clock.now();
    const rec: ComboRecord = {
      id: randomUUID(),
      name,
      strategy: (input.strategy ?? 'priority') as ComboStrategy,
      targets,
      options: { ...(input.options ?? {}) },
      createdAt: now,
      updatedAt: now,
    };
    this.repo.saveCombo(rec);
    this.put(rec);
    this.changed();
    return { combo: this.view(rec), warnings: this.warnings(rec) };
  }

  /** PUT (`replace`: name and targets required, omitted strategy and options reset) or PATCH. */
  update(idOrName: string, patch: ComboUpdateInput, replace: boolean): ComboWriteResult {
    const cur = this.require(idOrName);
    if (replace && patch.name === undefined) throw badInput('name', 'name is required');
    if (replace && patch.targets === undefined) throw badInput('targets', 'targets is required');
    const name = patch.name !== undefined ? patch.name.trim() : cur.name;
    if (name !== cur.name) this.checkName(name, cur.id);
    const targets = patch.targets !== undefined ? this.checkTargets(patch.targets) : cur.targets;
    const next: ComboRecord = {
      ...cur,
      name,
      strategy: (patch.strategy ?? (replace ? 'priority' : cur.strategy)) as ComboStrategy,
      targets,
      options: patch.options !== undefined ? { ...patch.options } : replace ? {} : cur.options,
      updatedAt: this.clock.now(),
    };
    this.repo.saveCombo(next);
    this.byName.delete(cur.name.toLowerCase());
    this.put(next);
    this.changed();
    return { combo: this.view(next), warnings: this.warnings(next) };
  }

  /** Deletes a combo and its mappings; returns how many mappings went with it. */
  delete(idOrName: string): number {
    const cur = this.require(idOrName);
    const removed = this.repo.deleteCombo(cur.id);
    this.byId.delete(cur.id);
    this.byName.delete(cur.name.toLowerCase());
    this.mappings = this.mappings.filter((m) => m.rec.comboId !== cur.id);
    this.changed();
    return removed;
  }

  private checkName(name: string, selfId: string | null): void {
    const clash = this.byName.get(name.toLowerCase());
    if (clash && clash.id !== selfId) throw badInput('name', `a combo named "${clash.name}" already exists`);
  }

  /** Resolves and checks targets: each names a known provider or an existing connection, once. */
  private checkTargets(input: readonly ComboTargetInput[]): ComboTarget[] {
    const providers = new Set(this.connections.all().map((c) => c.provider));
    const seen = new Map<string, number>();
    return input.map((t, i) => {
      let provider = t.provider?.trim() ?? null;
      const connectionId = t.connectionId ?? null;
      if (connectionId !== null) {
        const conn = this.connections.get(connectionId);
        if (!conn) throw badInput(`targets.${i}.connectionId`, `targets.${i}.connectionId: no connection has the id "${connectionId}"`);
        if (provider !== null && provider !== conn.provider) {
          throw badInput(`targets.${i}.provider`, `targets.${i}.provider: connection "${conn.name}" belongs to provider "${conn.provider}", not "${provider}"`);
        }
        provider = conn.provider;
      } else if (provider === null) {
        throw badInput(`targets.${i}.provider`, `targets.${i}.provider: give a provider (or pin a connectionId)`);
      } else if (!providers.has(provider)) {
        const known = [...providers].sort();
        throw badInput(
          `targets.${i}.provider`,
          `targets.${i}.provider: no connection of provider "${provider}" exists${known.length ? ` (known: ${known.join(', ')})` : '; add a connection first'}`,
        );
      }
      const target: ComboTarget = { provider, model: t.model.trim(), connectionId, weight: t.weight ?? 1 };
      const key = targetKey(target);
      const dup = seen.get(key);
      if (dup !== undefined) throw badInput(`targets.${i}`, `targets.${i}: the same target as targets.${dup} (${target.provider}/${target.model})`);
      seen.set(key, i);
      return target;
    });
  }

  /** What the writer should know: the name shadows a model id; the targets mix protocols. */
  private warnings(c: ComboRecord): string[] {
    const out: string[] = [];
    const conns = this.connections.all();
    const lower = c.name.toLowerCase();
    const slash = c.name.indexOf('/');
    const listed = conns.some((x) => x.models.some((m) => m.toLowerCase() === lower));
    const providerModel = slash > 0 && conns.some((x) => x.provider === c.name.slice(0, slash));
    if (listed || providerModel || this.catalog.contextWindow(c.name) !== null || this.catalog.price(c.name) !== null) {
      out.push(
        `"${c.name}" is also a model id: requests for it now go to this combo instead of straight to the model (this is how to add fallback for one model).`,
      );
    }
    const protocols = new Set<WireProtocol>();
    for (const t of c.targets) {
      const conn = t.connectionId ? this.connections.get(t.connectionId) : conns.find((x) => x.provider === t.provider);
      if (conn) protocols.add(conn.protocol);
    }
    if (protocols.size > 1) {
      // Named in a fixed order: "both the Anthropic and the OpenAI protocol", "the Anthropic, the OpenAI and the Gemini protocol".
      const names = (Object.keys(WIRE_PROTOCOL_NAMES) as WireProtocol[]).filter((p) => protocols.has(p)).map((p) => `the ${protocolName(p)}`);
      const spoken = names.length === 2 ? `both ${names[0]} and ${names[1]}` : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
      out.push(
        `The targets speak ${spoken} protocol: requests reach the other protocol's targets through translation, which carries text, images, tools and thinking; a field a target cannot express makes that target skipped for the request.`,
      );
    }
    return out;
  }

  view(c: ComboRecord): ComboView {
    return {
      id: c.id,
      name: c.name,
      strategy: c.strategy,
      targets: c.targets.map((t) => ({ ...t })),
      options: { ...c.options } as ComboOptions,
      createdAt: c.createdAt,
      updatedAt: c.updatedAt,
    };
  }

  // ---- mappings --------------------------------------------------------------------------------

  mappingViews(): ModelMappingView[] {
    return this.mappings.map((m) => this.mappingView(m.rec));
  }

  private mappingView(m: ModelMappingRecord): ModelMappingView {
    return {
      id: m.id,
      pattern: m.pattern,
      comboId: m.comboId,
      comboName: this.byId.get(m.comboId)?.name ?? m.comboId,
      createdAt: m.createdAt,
      updatedAt: m.updatedAt,
    };
  }

  createMapping(input: ModelMappingInput): ModelMappingView {
    const { pattern, combo } = this.checkMapping(input, null);
    const now = this.clock.now();
    const rec: ModelMappingRecord = { id: randomUUID(), pattern, comboId: combo.id, createdAt: now, updatedAt: now };
    this.repo.saveMapping(rec);
    this.mappings = [...this.mappings, { rec, compiled: compilePattern(pattern) }];
    this.changed();
    return this.mappingView(rec);
  }

  updateMapping(id: string, input: ModelMappingInput): ModelMappingView {
    const cur = this.mappings.find((m) => m.rec.id === id);
    if (!cur) throw notFound('model mapping', id);
    const { pattern, combo } = this.checkMapping(input, id);
    const rec: ModelMappingRecord = { ...cur.rec, pattern, comboId: combo.id, updatedAt: this.clock.now() };
    this.repo.saveMapping(rec);
    this.mappings = this.mappings.map((m) => (m.rec.id === id ? { rec, compiled: compilePattern(pattern) } : m));
    this.changed();
    return this.mappingView(rec);
  }

  deleteMapping(id: string): boolean {
    if (!this.mappings.some((m) => m.rec.id === id)) return false;
    this.repo.deleteMapping(id);
    this.mappings = this.mappings.filter((m) => m.rec.id !== id);
    this.changed();
    return true;
  }

  private checkMapping(input: ModelMappingInput, selfId: string | null): { pattern: string; combo: ComboRecord } {
    const pattern = input.pattern.trim();
    const clash = this.mappings.find((m) => m.rec.pattern.toLowerCase() === pattern.toLowerCase());
    if (clash && clash.rec.id !== selfId) throw badInput('pattern', `pattern "${clash.rec.pattern}" is already mapped`);
    const combo = this.get(input.combo.trim());
    if (!combo) throw badInput('combo', `no combo is named (or has the id) "${input.combo}"`);
    return { pattern, combo };
  }

  snapshot(): CombosSnapshot {
    return { combos: this.list().map((c) => this.view(c)), mappings: this.mappingViews() };
  }
}
