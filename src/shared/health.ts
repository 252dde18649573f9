// The one health model (issue 22): what a user should see about each connection and each
// (connection, model), derived from every layer that can hold it (breaker, window gate, key-level
// breaker hold, cooldown, outlier ejection, model lockout, queue pause, terminal state, disabled).
// The engine builds the conditions (src/main/engine/health/healthModel.ts) and derives the state
// with `deriveConnection` below; the renderer re-derives with the same function when a condition
// lifts by time before the next push (`healthAt`), so every page shows the same state and counts.
// Pure: no I/O, no clock.

/** What a connection reads as, most severe first (see HEALTH_PRECEDENCE). */
export type HealthState =
  | 'terminal'
  | 'disabled'
  | 'breaker_open'
  | 'ejected'
  | 'cooling'
  | 'paused'
  | 'probing'
  | 'degraded'
  | 'limited'
  | 'healthy';

/** Which layer a condition comes from. */
export type ConditionKind =
  /** banned / expired / credits exhausted: needs new credentials or a top-up. */
  | 'terminal'
  /** Switched off by the user. */
  | 'disabled'
  /** The provider's breaker is open provider-wide and this connection's failures opened it. */
  | 'breaker_open'
  /** The optional window gate skips the whole provider. */
  | 'provider_skipped'
  /** A key-level opening holds this key briefly after its own failure. */
  | 'key_hold'
  /** Outlier ejection: kept failing while another key of the provider worked. */
  | 'ejected'
  /** Connection cooldown. */
  | 'cooling'
  /** The request queue of the whole connection is paused on the upstream's Retry-After. */
  | 'paused'
  /** The breaker lets one probe through: it serves, carefully (holds nothing). */
  | 'probing'
  /** The breaker counts recent provider failures, or this connection failed several times in a row (holds nothing). */
  | 'degraded'
  /** One model (or its quota family) is locked on this connection. */
  | 'locked'
  /** One model's queue is paused on the upstream's Retry-After. */
  | 'model_paused';

/** What clears a condition before its time: the Cooldown manager, a breaker reset, the user (credentials, Enabled), or nothing. */
export type ClearedBy = 'clear' | 'reset' | 'person' | null;

export interface HealthCondition {
  kind: ConditionKind;
  /** null: the whole connection; otherwise the model (or quota family) it holds. */
  model: string | null;
  /** It keeps the target out of routing; false for a state that still serves (probing, degraded). */
  holds: boolean;
  /** Plain words for the user. */
  reason: string;
  /** The machine cause behind it (rate_limit_exceeded, server_error, ...), for the technical name. */
  cause: string | null;
  /** It begins at this time (a breaker's probe phase starts at its half-open time); null: now. */
  from: number | null;
  /** When it lifts by itself. null: when a person acts (holds true) or on the next success (holds false). */
  until: number | null;
  clearedBy: ClearedBy;
}

export interface ModelHealth {
  model: string;
  state: 'locked' | 'paused';
  reason: string;
  /** When every hold on this model lifts. */
  liftsAt: number | null;
}

export interface ConnectionHealthItem {
  connectionId: string;
  name: string;
  provider: string;
  state: HealthState;
  /** The badge text without a countdown: "Healthy", "Partly available · 1 model locked", "Breaker open". */
  label: string;
  /** The deciding condition's reason (null when healthy). */
  reason: string | null;
  /** When the connection is back in full: the latest end of what holds it. null: needs a person, or nothing to wait for. */
  liftsAt: number | null;
  /** Only a person can bring it back (terminal, disabled, or a hold without an end). */
  needsPerson: boolean;
  models: ModelHealth[];
  /** Every condition in force or scheduled (from in the future), most severe first. */
  conditions: HealthCondition[];
}

export interface HealthCounts {
  healthy: number;
  /** Serving with a restriction: degraded, probing, some models held. */
  limited: number;
  /** Out of routing for now; comes back by itself. */
  out: number;
  /** Needs a person: terminal states. */
  needsAttention: number;
  disabled: number;
  total: number;
}

export interface HealthSnapshot {
  /** Engine time the snapshot was computed at. */
  now: number;
  connections: ConnectionHealthItem[];
  counts: HealthCounts;
}

/** Precedence: the first state whose condition is in force decides. */
export const HEALTH_PRECEDENCE: readonly HealthState[] = [
  'terminal',
  'disabled',
  'breaker_open',
  'ejected',
  'cooling',
  'paused',
  'probing',
  'degraded',
  'limited',
  'healthy',
];

const STATE_OF: Record<ConditionKind, HealthState> = {
  terminal: 'terminal',
  disabled: 'disabled',
  breaker_open: 'breaker_open',
  provider_skipped: 'breaker_open',
  key_hold: 'breaker_open',
  ejected: 'ejected',
  cooling: 'cooling',
  paused: 'paused',
  probing: 'probing',
  degraded: 'degraded',
  locked: 'limited',
  model_paused: 'limited',
};

export const HEALTH_LABELS: Record<HealthState, string> = {
  terminal: 'Needs attention',
  disabled: 'Disabled',
  breaker_open: 'Breaker open',
  ejected: 'Ejected',
  cooling: 'Cooling down',
  paused: 'Queue paused',
  probing: 'Probing',
  degraded: 'Degraded',
  limited: 'Partly available',
  healthy: 'Healthy',
};

/** Which count a state goes into. */
export const HEALTH_GROUP: Record<HealthState, 'healthy' | 'limited' | 'out' | 'needsAttention' | 'disabled'> = {
  terminal: 'needsAttention',
  disabled: 'disabled',
  breaker_open: 'out',
  ejected: 'out',
  cooling: 'out',
  paused: 'out',
  probing: 'limited',
  degraded: 'limited',
  limited: 'limited',
  healthy: 'healthy',
};

const rank = (k: ConditionKind) => HEALTH_PRECEDENCE.indexOf(STATE_OF[k]);

/** In force at `now`: begun, and not lifted by time. */
export const conditionActive = (c: HealthCondition, now: number): boolean =>
  (c.from === null || c.from <= now) && (c.until === null || c.until > now);

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The latest end of a set of holds; null if any has no end. */
function latestEnd(cs: readonly HealthCondition[]): number | null {
  let end = -Infinity;
  for (const c of cs) {
    if (c.until === null) return null;
    if (c.until > end) end = c.until;
  }
  return end === -Infinity ? null : end;
}

/**
 * The state of one connection from its conditions at `now`. Conditions past their end are
 * dropped; scheduled ones (from in the future) are kept for a later re-derivation.
 */
export function deriveConnection(
  base: { connectionId: string; name: string; provider: string },
  conditions: readonly HealthCondition[],
  now: number,
): ConnectionHealthItem {
  const kept = conditions.filter((c) => c.until === null || c.until > now).sort((a, b) => rank(a.kind) - rank(b.kind));
  const active = kept.filter((c) => conditionActive(c, now));
  const conn = active.filter((c) => c.model === null);
  const byModel = new Map<string, HealthCondition[]>();
  for (const c of active) {
    if (c.model === null || !c.holds) continue;
    let l = byModel.get(c.model);
    if (l === undefined) byModel.set(c.model, (l = []));
    l.push(c);
  }
  const models: ModelHealth[] = [...byModel]
    .map(([model, cs]) => ({
      model,
      state: cs.some((c) => c.kind === 'locked') ? ('locked' as const) : ('paused' as const),
      reason: cs[0]!.reason,
      liftsAt: latestEnd(cs),
    }))
    .sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));

  const top = conn[0];
  let state: HealthState = top !== undefined ? STATE_OF[top.kind] : models.length > 0 ? 'limited' : 'healthy';
  if (state === 'healthy' && models.length > 0) state = 'limited';
  const group = HEALTH_GROUP[state];

  let liftsAt: number | null = null;
  let needsPerson = false;
  if (group === 'needsAttention' || group === 'disabled') needsPerson = true;
  else if (group === 'out') {
    liftsAt = latestEnd(conn.filter((c) => c.holds));
    needsPerson = liftsAt === null;
  } else if (state === 'limited') {
    liftsAt = latestEnd(models.map((m) => ({ until: m.liftsAt }) as HealthCondition));
  }

  const lockedN = models.filter((m) => m.state === 'locked').length;
  const pausedN = models.length - lockedN;
  const modelWords = [lockedN ? plural(lockedN, 'model locked', 'models locked') : null, pausedN ? plural(pausedN, 'model paused', 'models paused') : null]
    .filter((x) => x !== null)
    .join(', ');
  const label =
    modelWords && (group === 'limited' || group === 'healthy') ? `${HEALTH_LABELS[state]} · ${modelWords}` : HEALTH_LABELS[state];
  const reason = top?.reason ?? (models.length > 0 ? models.map((m) => `${m.model}: ${m.reason}`).join('; ') : null);

  return { ...base, state, label, reason, liftsAt, needsPerson, models, conditions: kept };
}

export function countHealth(items: readonly Pick<ConnectionHealthItem, 'state'>[]): HealthCounts {
  const out: HealthCounts = { healthy: 0, limited: 0, out: 0, needsAttention: 0, disabled: 0, total: items.length };
  for (const i of items) out[HEALTH_GROUP[i.state]]++;
  return out;
}

/** Does anything in this snapshot change between its time and `now` (a hold ended, a scheduled one began)? */
function changesBy(s: HealthSnapshot, now: number): boolean {
  for (const c of s.connections) {
    for (const x of c.conditions) {
      if (x.until !== null && x.until <= now) return true;
      if (x.from !== null && x.from > s.now && x.from <= now) return true;
    }
  }
  return false;
}

/**
 * The snapshot as of `now` (lazily, like the engine: a hold past its end is gone, a breaker past
 * its half-open time is probing). Returns the same object when nothing changed.
 */
export function healthAt(s: HealthSnapshot, now: number): HealthSnapshot {
  if (now <= s.now || !changesBy(s, now)) return s;
  const connections = s.connections.map((c) =>
    deriveConnection({ connectionId: c.connectionId, name: c.name, provider: c.provider }, c.conditions, now),
  );
  return { now, connections, counts: countHealth(connections) };
}

/** The conditions that still hold a target after a clear: the connection's own holds, and the model's. */
export function remainingHolds(item: ConnectionHealthItem | undefined, now: number, model?: string): HealthCondition[] {
  if (item === undefined) return [];
  return item.conditions.filter(
    (c) => c.holds && conditionActive(c, now) && (c.model === null || (model !== undefined && c.model === model)),
  );
}

/** One held target left after a clear, as the clearing actions report it. */
export interface RemainingHold {
  connectionId: string;
  connectionName: string;
  model: string | null;
  kind: ConditionKind;
  reason: string;
  /** When it lifts by itself; null: a person must act. */
  until: number | null;
  clearedBy: ClearedBy;
}

export function toRemaining(item: ConnectionHealthItem, cs: readonly HealthCondition[]): RemainingHold[] {
  return cs.map((c) => ({
    connectionId: item.connectionId,
    connectionName: item.name,
    model: c.model,
    kind: c.kind,
    reason: c.reason,
    until: c.until,
    clearedBy: c.clearedBy,
  }));
}
