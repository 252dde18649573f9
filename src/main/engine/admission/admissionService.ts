// Admission control behind the AdmissionPort: for each upstream attempt, the rate-limit queue of a
// protected connection (SPEC §5), then the fail-open shared-quota serialisation (§4.3), then the
// strict concurrency gates (§4.1, §4.2), then dispatch with the execution budget running. A request
// that needs to wait for nothing takes none of the timers or the pacer: it is admitted
// synchronously. Every state change is announced through onChange (the engine coalesces pushes).
// In team mode (issue 26) a connection's caps and its queue's spacing and pauses hold for the whole
// team: see teamGate.ts, teamPacer.ts and teamPauses.ts; with team mode off none of it is made.
import type { AdmissionView, RequestWait } from '../../../shared/model';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { AttemptVerdict, ResiliencePort, UpstreamFailure } from '../resilience/port';
import type { Target } from '../routing/target';
import type { ResolvedSettings } from '../settings/resolve';
import type { SettingKey, SettingValues } from '../../../shared/settings';
import type { ConnectionRecord } from '../store/connectionsRepo';
import type { Team } from '../team';
import {
  executionTimeout,
  queueFull,
  queueTimeout,
  semaphoreQueueFull,
  semaphoreTimeout,
} from './admissionErrors';
import { concurrencyBudgets, configuredSpacingMs, queueBudgetsFor, type QueueBudgets } from './budgets';
import { CompositeGate, type GateStage } from './compositeGate';
import { accountKey, capOf, gateStagesFor, modelCapOf, quotaShareCapOf } from './concurrencyCaps';
import { decideDeclaredWait } from './declaredWait';
import { ExecutionBudgets } from './executionBudget';
import { limiterKeyOf, limiterScopeOf, type LimiterScope } from './limiterScope';
import { checkLimiterPause } from './limiterPause';
import { bottleneckPacer, type PacerFactory } from './pacer';
import { NEVER_ABORTED, type AdmissionLease, type AdmissionPort } from './port';
import { protectionOf } from './protection';
import { checkQueueAdmission } from './queueAdmission';
import { QuotaShareGate } from './quotaShareGate';
import { RequestQueue } from './requestQueue';
import { TeamGate, type TeamSlot } from './teamGate';
import { BottleneckLimiters, MAX_SLOT_EXPIRATION_MS, type ClusterLimiters } from './teamLimiters';
import { teamPacerFactory } from './teamPacer';
import { TeamPauses, type PauseKey } from './teamPauses';

export interface AdmissionDeps {
  clock: Clock;
  settings: {
    readonly snapshot: Pick<ResolvedSettings, 'values' | 'sources'>;
    readonly values: SettingValues;
    onChange(fn: (changed: SettingKey[]) => void): () => void;
  };
  registry: {
    all(): readonly ConnectionRecord[];
    get(id: string): ConnectionRecord | undefined;
    onChange(fn: (kind: 'config' | 'health', ids: string[]) => void): () => void;
  };
  /** Read at call time, so the resilience implementation may be swapped or wrapped. */
  resilience: Pick<ResiliencePort, 'lockModel'>;
  log?: Logger;
  /** How queued dispatches are paced (Bottleneck by default). */
  pacer?: PacerFactory;
  /** Team mode (issue 26): what is shared with other instances (absent, or off: one process). */
  team?: Pick<Team, 'enabled' | 'link' | 'prefix' | 'instanceId' | 'table'>;
  /** Team mode: a connection's id in the team (null: not shared), and the local connections of one. */
  teamIds?: { of(conn: ConnectionRecord): string | null; localIds(teamId: string): readonly string[] };
  /** Team mode: the clustered limiters (default: Bottleneck on the team link); tests pass their own. */
  teamLimiters?: ClusterLimiters;
}

/** Team mode's parts, made only when the team is on. */
interface TeamParts {
  prefix: string;
  instanceId: string;
  ids: NonNullable<AdmissionDeps['teamIds']>;
  limiters: ClusterLimiters;
  gate: TeamGate;
  pauses: TeamPauses;
}

/** A held team slot stays counted at least this long without its holder, however short the execution budget. */
const MIN_SLOT_EXPIRATION_MS = 60_000;

interface ModelCounters {
  queued: number;
  inFlight: number;
}

interface ConnState {
  id: string;
  /** Requests of this connection not yet dispatched (in the queue or at a gate). */
  queued: number;
  inFlight: number;
  models: Map<string, ModelCounters>;
  /** Rate-limit queues: '' = the connection's own, otherwise one per model (model-scoped limiter). */
  queues: Map<string, RequestQueue>;
  /** Endpoint and credentials; a change ends any pause the old ones earned. */
  identity: string;
}

interface Plan {
  target: Target;
  conn: ConnectionRecord;
  st: ConnState;
  mc: ModelCounters;
  t0: number;
  /** The rate-limit queue and its budgets, when the connection is protected. */
  queue: RequestQueue | null;
  budgets: QueueBudgets | null;
  /** End of the queue-wait budget (Infinity when unprotected). */
  deadline: number;
  stages: readonly GateStage[];
  quotaShareCap: number | null;
  /** Team mode: the team's slots this request takes after its local ones (null: none, or Redis is not connected). */
  teamSlots: TeamSlot[] | null;
}

const noop = () => {};
const identityOf = (c: ConnectionRecord) => `${c.baseUrl}|${c.authClass}|${c.secretMasked ?? ''}`;

export class AdmissionService implements AdmissionPort {
  private readonly conns = new Map<string, ConnState>();
  private readonly gate: CompositeGate;
  private readonly quotaShare: QuotaShareGate;
  private readonly execution: ExecutionBudgets;
  private readonly listeners = new Set<() => void>();
  private readonly pauseListeners = new Set<() => void>();
  private readonly scopes = new WeakMap<ConnectionRecord, LimiterScope>();
  private readonly budgets = new WeakMap<ConnectionRecord, { snap: object; budgets: QueueBudgets }>();
  private readonly pacer: PacerFactory;
  private readonly offs: (() => void)[] = [];
  private readonly team: TeamParts | null;
  private closed = false;

  constructor(private readonly d: AdmissionDeps) {
    this.gate = new CompositeGate(d.clock);
    this.quotaShare = new QuotaShareGate(d.clock);
    this.execution = new ExecutionBudgets(d.clock);
    this.pacer = d.pacer ?? bottleneckPacer;
    this.team = this.teamParts();
    this.offs.push(d.registry.onChange((kind, ids) => kind === 'config' && this.onConnectionsChanged(ids)));
    this.offs.push(d.settings.onChange((changed) => this.onSettingsChanged(changed)));
  }

  // ---- the port ---------------------------------------------------------------------------------

  acquire(target: Target, signal: AbortSignal): Promise<AdmissionLease> {
    if (this.closed) return Promise.reject(new Error('admission is closed'));
    if (signal.aborted) return Promise.reject(signal.reason);
    let plan: Plan | null = null;
    try {
      plan = this.plan(target);
      const lease = this.withoutWaiting(plan);
      if (lease) return Promise.resolve(lease);
      return this.acquireAfterWaiting(plan, signal);
    } catch (err) {
      if (plan) this.pruneModel(plan.st, target.model);
      return Promise.reject(err);
    }
  }

  acquireNow(target: Target, signal: AbortSignal): AdmissionLease | null {
    if (this.closed || signal.aborted) return null;
    try {
      return this.withoutWaiting(this.plan(target));
    } catch {
      // A refusal (or any error) is acquire()'s to give, with its reason and its clean-up.
      return null;
    }
  }

  observe(target: Target, failure: UpstreamFailure | null, verdict: AttemptVerdict | null): void {
    if (this.closed || !failure || !verdict?.hint) return;
    const conn = target.conn;
    if (!protectionOf(conn, this.autoEnable()).protected) return;
    const budgets = this.budgetsOf(conn);
    const scope = this.scopeOf(conn);
    // A 429 the resilience layer scoped to one model (nothing said the account is spent) holds
    // only that model's waiters, even in a connection-wide queue: other models keep dispatching.
    const modelOnly = scope === 'connection' && verdict.scope === 'model';
    const decision = decideDeclaredWait(failure.status, verdict.hint, budgets.maxWaitMs, modelOnly ? 'model' : scope);
    const now = this.d.clock.now();
    if (decision.kind === 'pause') {
      const st = this.state(conn);
      const key = limiterKeyOf(scope, target.model);
      const queue = this.queueOf(st, key, budgets.minTimeMs);
      const model = modelOnly ? target.model : undefined;
      queue.pause(now + decision.ms, model);
      this.publishPause(conn, key, model ?? null, queue.pauseEnd(now, model));
      this.pausesChanged();
      this.d.log?.info('admission.paused', {
        connectionId: conn.id,
        model: scope === 'model' || modelOnly ? target.model : null,
        ms: decision.ms,
        why: decision.why,
        source: verdict.hint.source,
      });
    } else if (decision.kind === 'lock_model') {
      try {
        this.d.resilience.lockModel(target, decision.ms, 'long_retry_delay', now);
      } catch (err) {
        this.d.log?.warn('admission.lockModelFailed', { connectionId: conn.id, model: target.model, err });
      }
      this.d.log?.info('admission.modelLocked', { connectionId: conn.id, model: target.model, ms: decision.ms });
    }
  }

  load(connectionId: string): number {
    const st = this.conns.get(connectionId);
    return st ? st.inFlight + st.queued : 0;
  }

  resume(connectionIds: string[]): string[] {
    const lifted: string[] = [];
    for (const id of connectionIds) {
      const st = this.conns.get(id);
      if (!st) continue;
      let any = false;
      for (const [key, q] of st.queues) {
        const held = this.pauseKeysOf(id, key, q);
        if (q.clearPause()) any = true;
        for (const k of held) this.team?.pauses.lift(k);
      }
      if (any) lifted.push(id);
    }
    if (lifted.length) {
      this.changed();
      this.pausesChanged();
    }
    return lifted;
  }

  resumeModel(connectionId: string, model: string): boolean {
    const st = this.conns.get(connectionId);
    if (!st) return false;
    const own = st.queues.get(model);
    let lifted = own !== undefined && own.clearPause();
    const shared = st.queues.get('');
    if (shared !== undefined && shared.clearModelPause(model)) lifted = true;
    if (lifted) {
      const teamId = this.teamIdOf(connectionId);
      if (teamId !== null) {
        if (own !== undefined) this.team?.pauses.lift({ teamId, queue: model, model: null });
        if (shared !== undefined) this.team?.pauses.lift({ teamId, queue: '', model });
      }
      this.changed();
      this.pausesChanged();
    }
    return lifted;
  }

  onPauseChange(fn: () => void): () => void {
    this.pauseListeners.add(fn);
    return () => this.pauseListeners.delete(fn);
  }

  private pausesChanged(): void {
    for (const fn of this.pauseListeners) {
      try {
        fn();
      } catch {
        // a failing listener never breaks admission
      }
    }
  }

  views(): AdmissionView[] {
    const now = this.d.clock.now();
    const autoEnable = this.autoEnable();
    const quotaShareOn = this.d.settings.values['quotaShareConcurrencyLimit.enabled'];
    return this.d.registry.all().map((c) => {
      const st = this.conns.get(c.id);
      const protection = protectionOf(c, autoEnable);
      const scope = this.scopeOf(c);
      if (st) this.pruneQueues(st, now);
      const names = new Set<string>();
      for (const m of Object.keys(c.rateLimitOverrides?.modelConcurrency ?? {})) if (modelCapOf(c, m) !== null) names.add(m);
      for (const [m, mc] of st?.models ?? []) if (mc.inFlight > 0 || mc.queued > 0) names.add(m);
      if (scope === 'model') for (const m of st?.queues.keys() ?? []) if (m !== '') names.add(m);
      const shared = scope === 'connection' ? st?.queues.get('') : undefined;
      for (const m of shared?.pausedModels(now) ?? []) names.add(m);
      const caps = [capOf(c.rateLimitOverrides?.maxConcurrent), quotaShareCapOf(c, quotaShareOn)].filter(
        (v): v is number => v !== null,
      );
      return {
        connectionId: c.id,
        protected: protection.protected,
        protectionSource: protection.source,
        protectionMode: c.protectionMode,
        queued: st?.queued ?? 0,
        inFlight: st?.inFlight ?? 0,
        pausedUntil: scope === 'connection' ? (st?.queues.get('')?.pauseEnd(now) ?? null) : null,
        maxConcurrent: caps.length ? Math.min(...caps) : null,
        models: [...names].sort().map((model) => ({
          model,
          inFlight: st?.models.get(model)?.inFlight ?? 0,
          queued: st?.models.get(model)?.queued ?? 0,
          cap: modelCapOf(c, model),
          pausedUntil:
            scope === 'model' ? (st?.queues.get(model)?.pauseEnd(now) ?? null) : (shared?.pausedModels(now).includes(model) ? shared.pauseEnd(now, model) : null),
        })),
      };
    });
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.offs.forEach((off) => off());
    const stopping = new Error('the engine is stopping');
    this.gate.close(stopping);
    this.quotaShare.close(stopping);
    this.team?.gate.close(stopping);
    this.execution.close();
    await Promise.all([...this.conns.values()].flatMap((st) => [...st.queues.values()].map((q) => q.close())));
    await this.team?.limiters.close();
  }

  // ---- admission steps --------------------------------------------------------------------------

  private plan(target: Target): Plan {
    const conn = target.conn;
    const st = this.state(conn);
    const t0 = this.d.clock.monotonic();
    const protection = protectionOf(conn, this.autoEnable());
    let queue: RequestQueue | null = null;
    let budgets: QueueBudgets | null = null;
    let deadline = Infinity;
    if (protection.protected) {
      budgets = this.budgetsOf(conn);
      queue = this.queueOf(st, limiterKeyOf(this.scopeOf(conn), target.model), budgets.minTimeMs);
      deadline = this.d.clock.now() + budgets.maxWaitMs;
    }
    const stages = gateStagesFor(conn, target.model);
    const quotaShareCap = quotaShareCapOf(conn, this.d.settings.values['quotaShareConcurrencyLimit.enabled']);
    return {
      target,
      conn,
      st,
      mc: this.modelCounters(st, target.model),
      t0,
      queue,
      budgets,
      deadline,
      stages,
      quotaShareCap,
      teamSlots: this.team && (stages.length > 0 || quotaShareCap !== null) ? this.teamSlotsOf(conn, target.model, stages, quotaShareCap) : null,
    };
  }

  /**
   * The queue's refusals (full, or paused past the request's deadline) throw; the lease when every
   * slot is free now and nothing is queued ahead or to be claimed from the team; null when it must wait.
   */
  private withoutWaiting(plan: Plan): AdmissionLease | null {
    const { target } = plan;
    const now = this.d.clock.now();
    if (plan.queue && plan.budgets) {
      const admission = checkQueueAdmission(plan.st.queued, plan.budgets.maxQueueDepth);
      if (!admission.admit) {
        const left = plan.queue.pauseEnd(now, target.model);
        throw queueFull(plan.conn.name, admission.waiting, left === null ? null : left - now);
      }
      const pause = checkLimiterPause(plan.queue.pauseEnd(now, target.model), now, plan.deadline);
      if (!pause.wait) throw queueTimeout(plan.conn.name, plan.budgets.maxWaitMs, pause.pauseLeftMs);
    }
    if ((!plan.queue || plan.queue.isIdle(now, target.model)) && plan.teamSlots === null) return this.dispatchNow(plan);
    return null;
  }

  /** The synchronous path: every slot is free now, so dispatch without waiting. Null if one is not. */
  private dispatchNow(plan: Plan): AdmissionLease | null {
    let quotaRelease = noop;
    if (plan.quotaShareCap !== null) {
      const r = this.quotaShare.tryAcquire(plan.conn.id, plan.quotaShareCap);
      if (!r) return null;
      quotaRelease = r;
    }
    let gateRelease = noop;
    if (plan.stages.length > 0) {
      const r = this.gate.tryAcquire(plan.stages);
      if (!r) {
        quotaRelease();
        return null;
      }
      gateRelease = r;
    }
    return this.dispatch(plan, gateRelease, quotaRelease, null, false);
  }

  private async acquireAfterWaiting(plan: Plan, signal: AbortSignal): Promise<AdmissionLease> {
    const { st, mc, conn } = plan;
    st.queued++;
    mc.queued++;
    this.changed();
    let waiting = true;
    const stopWaiting = () => {
      if (!waiting) return;
      waiting = false;
      st.queued--;
      mc.queued--;
      this.changed();
    };
    let quotaRelease = noop;
    let gateRelease = noop;
    // Why this request waits, phase by phase (only the phases it waited in): the request log's reasons.
    const waits: RequestWait[] = [];
    const clock = this.d.clock;
    try {
      if (plan.queue && plan.budgets && !plan.queue.isIdle(clock.now(), plan.target.model)) {
        const maxWaitMs = plan.budgets.maxWaitMs;
        const now = clock.now();
        const pauseEnd = plan.queue.pauseEnd(now, plan.target.model);
        const t = clock.monotonic();
        await plan.queue.enter(plan.deadline, signal, (left) => queueTimeout(conn.name, maxWaitMs, left), plan.target.model);
        waits.push(
          pauseEnd !== null
            ? { reason: 'queue_paused', ms: Math.round(clock.monotonic() - t), until: pauseEnd }
            : { reason: plan.budgets.minTimeMs > 0 ? 'queue_spacing' : 'queue_busy', ms: Math.round(clock.monotonic() - t) },
        );
      }
      const { waitTimeoutMs, maxWaiting } = concurrencyBudgets(this.d.settings.snapshot);
      const gateDeadline = this.d.clock.now() + waitTimeoutMs;
      const deadline = Math.min(gateDeadline, plan.deadline);
      if (plan.quotaShareCap !== null) {
        const full = this.quotaShare.full(conn.id, plan.quotaShareCap);
        const t = clock.monotonic();
        const grant = await this.quotaShare.acquire(conn.id, plan.quotaShareCap, { deadline, maxWaiting, signal });
        quotaRelease = grant.release;
        if (full) waits.push({ reason: 'concurrency_cap', ms: Math.round(clock.monotonic() - t), cap: 'shared' });
        if (grant.failedOpen) this.d.log?.debug('admission.quotaShareFailedOpen', { connectionId: conn.id });
      }
      if (plan.stages.length > 0) {
        const blocked = this.gate.blocked(plan.stages);
        const t = clock.monotonic();
        const out = await this.gate.acquire(plan.stages, { deadline, maxWaiting, signal });
        if (out.kind === 'timeout') {
          throw plan.budgets && plan.deadline <= gateDeadline
            ? queueTimeout(conn.name, plan.budgets.maxWaitMs, null)
            : semaphoreTimeout(conn.name, out.stage.label, waitTimeoutMs);
        }
        if (out.kind === 'full') throw semaphoreQueueFull(conn.name, out.stage.label, out.waiting);
        if (out.kind !== 'granted') throw new Error('the concurrency gate closed');
        gateRelease = out.release;
        if (blocked) waits.push({ reason: 'concurrency_cap', ms: Math.round(clock.monotonic() - t), cap: blocked.kind === 'model' ? 'model' : 'connection' });
      }
      if (plan.teamSlots !== null && this.team) {
        // The team's slots, after the local ones (which keep their single-process rules), within the same deadline.
        const t = clock.monotonic();
        const out = await this.team.gate.acquire(plan.teamSlots, { deadline, signal, expirationMs: this.slotExpirationMs(conn) });
        if (out.kind === 'timeout') {
          throw plan.budgets && plan.deadline <= gateDeadline
            ? queueTimeout(conn.name, plan.budgets.maxWaitMs, null)
            : semaphoreTimeout(conn.name, out.slot.label, waitTimeoutMs);
        }
        const local = gateRelease;
        gateRelease = () => {
          out.release();
          local();
        };
        if (out.waitedFor !== null) {
          const cap = out.waitedFor === 'model' ? 'model' : out.waitedFor === 'shared' ? 'shared' : 'connection';
          waits.push({ reason: 'concurrency_cap', ms: Math.round(clock.monotonic() - t), cap });
        }
        if (out.local) this.d.log?.debug('admission.teamSlotsSkipped', { connectionId: conn.id });
      }
      // A slot that frees in the same instant the budget ends (timers run late under load) must
      // not let a request dispatch after its queue budget: it stays a queue timeout.
      if (plan.budgets && this.d.clock.now() > plan.deadline) {
        gateRelease();
        throw queueTimeout(conn.name, plan.budgets.maxWaitMs, null);
      }
      stopWaiting();
      return this.dispatch(plan, gateRelease, quotaRelease, waits.length ? waits : null);
    } catch (err) {
      gateRelease();
      quotaRelease();
      throw err;
    } finally {
      stopWaiting();
      this.pruneModel(st, plan.target.model);
    }
  }

  /** `queued`: the request went through the waiting path; one admitted at once spent no time in a queue (0). */
  private dispatch(plan: Plan, gateRelease: () => void, quotaRelease: () => void, waits: readonly RequestWait[] | null = null, queued = true): AdmissionLease {
    const { st, mc, conn, budgets } = plan;
    st.inFlight++;
    mc.inFlight++;
    let signal = NEVER_ABORTED;
    let cancelExecution: (() => void) | null = null;
    if (budgets) {
      const ms = budgets.executionMs;
      const budget = this.execution.start(ms, conn.id, () => executionTimeout(conn.name, ms));
      cancelExecution = budget.stop;
      signal = budget.signal;
    }
    this.changed();
    let released = false;
    return {
      queuedMs: queued ? this.d.clock.monotonic() - plan.t0 : 0,
      signal,
      waits,
      release: () => {
        if (released) return;
        released = true;
        cancelExecution?.();
        gateRelease();
        quotaRelease();
        st.inFlight--;
        mc.inFlight--;
        this.pruneModel(st, plan.target.model);
        this.changed();
      },
    };
  }

  // ---- state ------------------------------------------------------------------------------------

  private autoEnable(): boolean {
    return this.d.settings.values['requestQueue.autoEnableApiKeyProviders'];
  }

  /** Budgets per connection record and settings snapshot (both are replaced, never mutated, on change). */
  private budgetsOf(conn: ConnectionRecord): QueueBudgets {
    const snap = this.d.settings.snapshot;
    const hit = this.budgets.get(conn);
    if (hit && hit.snap === snap) return hit.budgets;
    const budgets = queueBudgetsFor(snap, conn);
    this.budgets.set(conn, { snap, budgets });
    return budgets;
  }

  private scopeOf(conn: ConnectionRecord): LimiterScope {
    let s = this.scopes.get(conn);
    if (!s) this.scopes.set(conn, (s = limiterScopeOf(conn)));
    return s;
  }

  private state(conn: ConnectionRecord): ConnState {
    let st = this.conns.get(conn.id);
    if (!st) {
      st = { id: conn.id, queued: 0, inFlight: 0, models: new Map(), queues: new Map(), identity: identityOf(conn) };
      this.conns.set(conn.id, st);
    }
    return st;
  }

  private queueOf(st: ConnState, key: string, minTimeMs: number): RequestQueue {
    let q = st.queues.get(key);
    if (!q) st.queues.set(key, (q = new RequestQueue(this.d.clock, this.pacerFor(st.id, key), () => this.changed())));
    q.setMinTime(minTimeMs);
    return q;
  }

  /** A queue's pacer: the team's spacing in team mode (the connection's team id is read per permit). */
  private pacerFor(connectionId: string, key: string): PacerFactory {
    const team = this.team;
    if (!team) return this.pacer;
    return teamPacerFactory({
      limiters: team.limiters,
      clock: this.d.clock,
      local: this.pacer,
      instanceId: team.instanceId,
      idOf: () => {
        const teamId = this.teamIdOf(connectionId);
        return teamId === null ? null : `${team.prefix}pace:${teamId}${key === '' ? '' : `:${key}`}`;
      },
    });
  }

  private modelCounters(st: ConnState, model: string): ModelCounters {
    let mc = st.models.get(model);
    if (!mc) st.models.set(model, (mc = { queued: 0, inFlight: 0 }));
    return mc;
  }

  private pruneModel(st: ConnState, model: string): void {
    const mc = st.models.get(model);
    if (mc && mc.queued === 0 && mc.inFlight === 0) {
      st.models.delete(model);
      const q = model === '' ? undefined : st.queues.get(model);
      if (q && q.isIdle(this.d.clock.now())) {
        st.queues.delete(model);
        void q.close();
      }
    }
  }

  /**
   * Forgets per-model queues that hold nothing: no waiter, no pause, and no spacing to remember
   * (a queue with spacing keeps the time of its last dispatch).
   */
  private pruneQueues(st: ConnState, now: number): void {
    for (const [key, q] of st.queues) {
      if (key !== '' && q.isIdle(now)) {
        st.queues.delete(key);
        void q.close();
      }
    }
  }

  // ---- team mode --------------------------------------------------------------------------------

  private teamParts(): TeamParts | null {
    const { team, teamIds } = this.d;
    if (!team?.enabled || !teamIds || (!team.link && !this.d.teamLimiters)) return null;
    const limiters = this.d.teamLimiters ?? new BottleneckLimiters({ link: team.link!, clock: this.d.clock, log: this.d.log });
    return {
      prefix: team.prefix,
      instanceId: team.instanceId,
      ids: teamIds,
      limiters,
      gate: new TeamGate(limiters, this.d.clock, team.instanceId, this.d.log),
      pauses: new TeamPauses(team, this.d.clock, (key, until) => this.applyTeamPause(key, until)),
    };
  }

  private teamIdOf(connectionId: string): string | null {
    const c = this.team ? this.d.registry.get(connectionId) : undefined;
    return c ? this.team!.ids.of(c) : null;
  }

  /**
   * The team's slots for a request with local caps: keyed by the connection's team id (and model),
   * each with the cap this instance has configured. None while Redis is not connected, and none for
   * a connection the team does not share: then the local gates alone apply, with no round trip.
   */
  private teamSlotsOf(conn: ConnectionRecord, model: string, stages: readonly GateStage[], quotaShareCap: number | null): TeamSlot[] | null {
    const team = this.team!;
    if (!team.gate.up) return null;
    const teamId = team.ids.of(conn);
    if (teamId === null) return null;
    const slots: TeamSlot[] = stages.map((s) =>
      s.kind === 'model'
        ? { kind: 'model', id: `${team.prefix}mcap:${teamId}:${model}`, cap: s.cap, label: s.label }
        : { kind: 'account', id: `${team.prefix}cap:${teamId}`, cap: s.cap, label: s.label },
    );
    if (quotaShareCap !== null) slots.push({ kind: 'shared', id: `${team.prefix}qs:${teamId}`, cap: quotaShareCap, label: 'shared-quota' });
    return slots;
  }

  /** How long the team counts a held slot without word from this instance: the execution budget (R-RQ-05), bounded. */
  private slotExpirationMs(conn: ConnectionRecord): number {
    return Math.min(MAX_SLOT_EXPIRATION_MS, Math.max(MIN_SLOT_EXPIRATION_MS, this.budgetsOf(conn).executionMs));
  }

  private publishPause(conn: ConnectionRecord, queue: string, model: string | null, until: number | null): void {
    if (!this.team || until === null) return;
    const teamId = this.team.ids.of(conn);
    if (teamId !== null) this.team.pauses.publish({ teamId, queue, model }, until);
  }

  /** The shared records of the pauses a queue holds now (to lift them across the team). */
  private pauseKeysOf(connectionId: string, queue: string, q: RequestQueue): PauseKey[] {
    const teamId = this.team ? this.teamIdOf(connectionId) : null;
    if (teamId === null) return [];
    const now = this.d.clock.now();
    const keys: PauseKey[] = q.pauseEnd(now) !== null ? [{ teamId, queue, model: null }] : [];
    for (const model of q.pausedModels(now)) keys.push({ teamId, queue, model });
    return keys;
  }

  /**
   * Another instance paused (or lifted) a queue of a connection this one holds too: the local
   * queue follows, as if its own upstream had answered (the later pause wins), without publishing.
   */
  private applyTeamPause(k: PauseKey, until: number | null): void {
    if (this.closed) return;
    const autoEnable = this.autoEnable();
    let any = false;
    for (const id of this.team!.ids.localIds(k.teamId)) {
      const conn = this.d.registry.get(id);
      if (!conn || !protectionOf(conn, autoEnable).protected) continue;
      const st = this.state(conn);
      if (until === null) {
        const q = st.queues.get(k.queue);
        if (q && (k.model === null ? q.clearPause() : q.clearModelPause(k.model))) any = true;
        continue;
      }
      if (until <= this.d.clock.now()) continue;
      this.queueOf(st, k.queue, this.budgetsOf(conn).minTimeMs).pause(until, k.model ?? undefined);
      any = true;
      this.d.log?.info('admission.teamPaused', { connectionId: id, model: k.model ?? (k.queue || null), until });
    }
    if (any) {
      this.changed();
      this.pausesChanged();
    }
  }

  /** A connection's caps changed: the team's limiters this instance uses take the new ones. */
  private updateTeamCaps(conn: ConnectionRecord, quotaShareOn: boolean): void {
    const team = this.team;
    const teamId = team?.ids.of(conn);
    if (!team || !teamId) return;
    const set = (id: string, cap: number | null) => team.limiters.existing(id)?.configure({ maxConcurrent: cap, minTime: 0 });
    set(`${team.prefix}cap:${teamId}`, capOf(conn.rateLimitOverrides?.maxConcurrent));
    set(`${team.prefix}qs:${teamId}`, quotaShareCapOf(conn, quotaShareOn));
    const models = `${team.prefix}mcap:${teamId}:`;
    for (const id of [...team.limiters.ids()]) if (id.startsWith(models)) set(id, modelCapOf(conn, id.slice(models.length)));
  }

  private changed(): void {
    for (const fn of this.listeners) {
      try {
        fn();
      } catch {
        // a failing listener never breaks admission
      }
    }
  }

  /** A connection was edited or deleted: new caps, new spacing, and a fresh start after a credential change. */
  private onConnectionsChanged(ids: string[]): void {
    const quotaShareOn = this.d.settings.values['quotaShareConcurrencyLimit.enabled'];
    for (const id of ids) {
      const st = this.conns.get(id);
      if (!st) continue;
      const c = this.d.registry.get(id);
      if (!c) {
        if (st.queued === 0 && st.inFlight === 0) {
          this.conns.delete(id);
          for (const q of st.queues.values()) void q.close();
        }
        continue;
      }
      const identity = identityOf(c);
      if (identity !== st.identity) {
        st.identity = identity;
        for (const q of st.queues.values()) q.clearPause();
        this.pausesChanged();
      }
      const spacing = configuredSpacingMs(c);
      for (const q of st.queues.values()) q.setMinTime(spacing);
      this.gate.setCap(accountKey(id), capOf(c.rateLimitOverrides?.maxConcurrent) ?? Infinity);
      const prefix = `model:${id}:`;
      for (const key of [...this.gate.keys()]) {
        if (key.startsWith(prefix)) this.gate.setCap(key, modelCapOf(c, key.slice(prefix.length)) ?? Infinity);
      }
      this.quotaShare.setCap(id, quotaShareCapOf(c, quotaShareOn) ?? Infinity);
      this.updateTeamCaps(c, quotaShareOn);
    }
    this.changed();
  }

  private onSettingsChanged(changed: SettingKey[]): void {
    if (changed.includes('quotaShareConcurrencyLimit.enabled') && !this.d.settings.values['quotaShareConcurrencyLimit.enabled']) {
      this.quotaShare.openAll();
      this.team?.gate.openShared();
    }
    this.changed();
  }
}

/** The engine's factory: admission over the engine's clock, settings, connections and resilience. */
export function createAdmission(ctx: AdmissionDeps): AdmissionPort {
  return new AdmissionService(ctx);
}
