// Routes a request that names a combo: the combo's targets expanded to connections (a pinned
// target is that one connection; an unpinned one is every enabled connection of its provider that
// serves the model, in the routing selector's order), then ranked by the combo's strategy from
// signals read once for this request. Targets that cannot be used at all (no connection, a
// disabled connection, another wire protocol, a model the connection does not serve) are returned
// beside the order so the request log can say why.
import type { SkipReason, WireProtocol } from '../../../../shared/model';
import type { AutoWeights } from '../../../../shared/settings';
import type { Clock } from '../../clock';
import type { AttemptInterceptor } from '../../proxy/attempt';
import type { Random } from '../../random';
import type { ConnectionRecord } from '../../store/connectionsRepo';
import type { LatencyTracker } from '../latencyTracker';
import type { SelectionStrategy, TargetSelector } from '../selector';
import type { Target, TargetCombo } from '../target';
import { targetKey, type ComboMatch, type ComboRegistry } from './comboRegistry';
import type { ModelCatalog } from './modelCatalog';
import type { QuotaReading, QuotaSignals } from './quotaSignals';
import { STRATEGIES, type Candidate, type RankSignals, type RotationState } from './strategies';
import { memoryKey } from './strategies/types';

/** reset-window's default: a reset within 15 minutes puts a target first. */
export const DEFAULT_RESET_WINDOW_MS = 15 * 60_000;
/** Output tokens assumed when the request does not say (cost and context estimates). */
export const DEFAULT_OUTPUT_TOKENS = 1_024;
const DEFAULT_AUTO_WEIGHTS: Required<AutoWeights> = { health: 3, latency: 2, errorRate: 2, headroom: 2, cost: 1 };

export interface UnusableTarget {
  index: number;
  provider: string;
  model: string;
  conn: ConnectionRecord | null;
  reason: SkipReason;
  detail: string;
}

export interface ComboRoute {
  match: ComboMatch;
  /** The strategy's order over the usable targets. */
  order: Target[];
  unusable: UnusableTarget[];
}

export interface ComboRouterDeps {
  combos: ComboRegistry;
  connections(): readonly ConnectionRecord[];
  connection(id: string): ConnectionRecord | undefined;
  selector: TargetSelector;
  routing(): { name: SelectionStrategy; latencyWeight: number };
  autoWeights(): AutoWeights;
  random: Random;
  latency: LatencyTracker;
  load(connectionId: string): number;
  quota: QuotaSignals;
  /**
   * An account's own quota windows where the account reports them (Claude subscriptions' 5-hour
   * and 7-day windows); they win over rate-limit headers, which describe one request class only.
   */
  accountQuota?: (connectionId: string, now: number) => QuotaReading | null;
  catalog: ModelCatalog;
  clock: Clock;
}

/** What the strategies read from the request body. */
export interface RequestShape {
  json: Record<string, unknown>;
  bodyBytes: number;
}

const serves = (c: ConnectionRecord, model: string) => c.passthroughModels || c.models.includes(model);

/** The strictest concurrency cap a connection declares, if any. */
const capacityOf = (c: ConnectionRecord | undefined): number | null => {
  if (!c) return null;
  const caps = [c.rateLimitOverrides.maxConcurrent, c.maxConcurrent].filter((x): x is number => typeof x === 'number' && x > 0);
  return caps.length ? Math.min(...caps) : null;
};

/** Tokens of a request, estimated without parsing it again: about four bytes per prompt token. */
export function estimateTokens(r: RequestShape): { input: number; output: number } {
  const j = r.json;
  const out = [j.max_tokens, j.max_completion_tokens, j.max_output_tokens].find((v): v is number => typeof v === 'number' && v > 0);
  return { input: Math.ceil(r.bodyBytes / 4), output: out ?? DEFAULT_OUTPUT_TOKENS };
}

/** The stable head of a conversation (system prompt and first message) that a prompt cache keys on. */
export function promptKeyOf(json: Record<string, unknown>): string {
  const list = Array.isArray(json.messages) ? json.messages : Array.isArray(json.input) ? json.input : [];
  const head = [json.system ?? json.instructions ?? null, list[0] ?? (typeof json.input === 'string' ? json.input : null)];
  return JSON.stringify(head).slice(0, 8_192);
}

export class ComboRouter {
  private readonly rotation = new Map<string, RotationState>();
  private readonly lastGood = new Map<string, string>();

  constructor(private readonly d: ComboRouterDeps) {
    d.combos.onChange(() => {
      for (const id of [...this.rotation.keys()]) if (!d.combos.get(id)) this.rotation.delete(id);
      for (const id of [...this.lastGood.keys()]) if (!d.combos.get(id)) this.lastGood.delete(id);
    });
  }

  get catalog(): ModelCatalog {
    return this.d.catalog;
  }

  /** Every combo, for GET /v1/models. */
  combos() {
    return this.d.combos.list();
  }

  /** The combo route for this model, or null when the model does not name a combo. */
  plan(wire: WireProtocol, model: string, request: RequestShape): ComboRoute | null {
    const match = this.d.combos.resolve(model);
    if (!match) return null;
    const { combo } = match;
    const routing = this.d.routing();
    const candidates: Candidate[] = [];
    const unusable: UnusableTarget[] = [];
    const all = this.d.connections();
    combo.targets.forEach((t, index) => {
      const key = targetKey(t);
      const tc: TargetCombo = { id: combo.id, name: combo.name, index, key };
      const skip = (conn: ConnectionRecord | null, reason: SkipReason, detail: string) =>
        unusable.push({ index, provider: t.provider, model: t.model, conn, reason, detail });
      const why = (c: ConnectionRecord, pinned: boolean): [SkipReason, string] | null => {
        if (!c.enabled) return ['disabled', `${c.name} is disabled`];
        if (!pinned && !serves(c, t.model)) return ['model_not_served', `${c.name} does not list ${t.model}`];
        return null;
      };
      const make = (conn: ConnectionRecord): Target => ({
        conn,
        model: t.model,
        requestedModel: model,
        combo: tc,
        ...(combo.options.targetTimeoutMs !== undefined ? { headersTimeoutMs: combo.options.targetTimeoutMs } : {}),
      });
      if (t.connectionId !== null) {
        const conn = this.d.connection(t.connectionId);
        if (!conn) return skip(null, 'no_connection', `the pinned connection ${t.connectionId} no longer exists`);
        const w = why(conn, true);
        if (w) return skip(conn, w[0], w[1]);
        candidates.push({ target: make(conn), entry: index, weight: t.weight, key });
        return;
      }
      const pool = all.filter((c) => c.provider === t.provider);
      if (pool.length === 0) return skip(null, 'no_connection', `no ${t.provider} connection is configured`);
      const usable: Target[] = [];
      for (const c of pool) {
        const w = why(c, false);
        if (w) skip(c, w[0], w[1]);
        else usable.push(make(c));
      }
      for (const target of this.d.selector.order(`${wire}|combo:${combo.id}#${index}`, usable, routing.name, routing.latencyWeight)) {
        candidates.push({ target, entry: index, weight: t.weight, key });
      }
    });
    const state = this.rotation.get(combo.id) ?? { turn: 0, deck: [] };
    const ranked = candidates.length ? STRATEGIES[combo.strategy](candidates, this.signals(combo.id, combo.options.resetWindowMs, routing.latencyWeight, request), state) : { order: [] };
    if (ranked.state) this.rotation.set(combo.id, ranked.state);
    return { match, order: ranked.order.map((c) => c.target), unusable };
  }

  private signals(comboId: string, resetWindowMs: number | undefined, latencyWeight: number, request: RequestShape): RankSignals {
    return new RequestSignals(this.d, this.d.clock.now(), latencyWeight, request, this.lastGood.get(comboId) ?? null, resetWindowMs ?? DEFAULT_RESET_WINDOW_MS);
  }

  /** Remembers which target served a combo (lkgp). */
  noteServed(target: Target): void {
    if (!target.combo) return;
    this.lastGood.set(target.combo.id, memoryKey({ key: target.combo.key, target } as Candidate));
  }

  /** The attempt interceptor that feeds lkgp: a target whose response is ready served its combo. */
  interceptor(): AttemptInterceptor {
    return (next) => {
      const noted = async (ctx: Parameters<typeof next>[0]) => {
        const outcome = await next(ctx);
        if (outcome.kind === 'ready') this.noteServed(ctx.target);
        return outcome;
      };
      // Only combo targets have anything to remember: others go straight through.
      return (ctx) => (ctx.target.combo ? noted(ctx) : next(ctx));
    };
  }
}

/**
 * The signals one request is ranked on. A class, not a literal: its methods live on the prototype,
 * and what only some strategies read (token estimate, prompt key, auto weights) is computed on
 * first read, so a priority combo pays for none of it.
 */
class RequestSignals implements RankSignals {
  readonly random: Random;
  private tokensMemo: { input: number; output: number } | null = null;
  private promptKeyMemo: string | null = null;
  private weightsMemo: Required<AutoWeights> | null = null;

  constructor(
    private readonly d: ComboRouterDeps,
    readonly now: number,
    readonly latencyWeight: number,
    private readonly request: RequestShape,
    readonly lastGood: string | null,
    readonly resetWindowMs: number,
  ) {
    this.random = d.random;
  }

  load(id: string): number {
    return this.d.load(id);
  }
  capacity(id: string): number | null {
    return capacityOf(this.d.connection(id));
  }
  latency(id: string) {
    return this.d.latency.stats(id, this.now);
  }
  quota(id: string, model: string): QuotaReading | null {
    return this.d.accountQuota?.(id, this.now) ?? this.d.quota.reading(id, model, this.now);
  }
  price(model: string) {
    return this.d.catalog.price(model);
  }
  contextWindow(model: string): number | null {
    return this.d.catalog.contextWindow(model);
  }
  get tokens(): { input: number; output: number } {
    return (this.tokensMemo ??= estimateTokens(this.request));
  }
  get promptKey(): string {
    return (this.promptKeyMemo ??= promptKeyOf(this.request.json));
  }
  get autoWeights(): Required<AutoWeights> {
    return (this.weightsMemo ??= { ...DEFAULT_AUTO_WEIGHTS, ...this.d.autoWeights() });
  }
}
