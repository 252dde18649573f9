// Where notifications and timeline spans come from: small subscriptions on the layers that own the
// states (the connection registry, the resilience layer, the Claude accounts, the request log's
// push), each diffing what it saw last against what holds now. Nothing here runs inside the
// proxy's loop; a burst of changes is looked at once per short interval.
import type { BreakerView, ModelLockoutView, RequestLogEntry } from '../../../shared/model';
import type { ClaudeAccounts } from '../claude/claudeAccounts';
import type { CancelTimer, Clock } from '../clock';
import type { ConnectionRecord, ConnectionRegistry } from '../connections/registry';
import type { EventBus } from '../events';
import type { ResilienceManagement } from '../resilience/port';
import type { NotificationCenter } from './notificationCenter';
import type { ObservedState, StateTimeline } from './stateTimeline';
import { breakerNotice, exhaustedNotice, laneNotice, limitResetNotice, TERMINAL_SPAN_REASON, terminalNotice, terminalOf } from './words';

/** How soon after a burst of state changes they are looked at. */
export const WATCH_INTERVAL_MS = 100;

/** The proxy's answers for "every target was excluded": cooling (comes back by itself) or not. */
const EXHAUSTED_CODES: Record<string, boolean> = {
  all_targets_cooling_down: true,
  no_executable_targets: false,
  ALL_TARGETS_SKIPPED: false,
};

export interface WatchDeps {
  clock: Clock;
  bus: EventBus;
  registry: Pick<ConnectionRegistry, 'all' | 'get' | 'onChange'>;
  resilience: Pick<ResilienceManagement, 'breakers' | 'lockouts' | 'onChange'>;
  claude?: Pick<ClaudeAccounts, 'lane' | 'reset'>;
  center: NotificationCenter;
  timeline: StateTimeline;
}

/** What holds every connection now, for the timeline. */
export function observedStates(conns: readonly ConnectionRecord[], breakers: readonly BreakerView[], lockouts: readonly ModelLockoutView[], now: number): ObservedState[] {
  const out: ObservedState[] = [];
  const byProvider = new Map<string, BreakerView>(breakers.map((b) => [b.provider, b]));
  for (const c of conns) {
    if (!c.enabled) out.push({ connectionId: c.id, kind: 'disabled', reason: 'Turned off' });
    const terminal = terminalOf(c.health.testStatus);
    if (terminal) out.push({ connectionId: c.id, kind: 'terminal', reason: TERMINAL_SPAN_REASON[terminal], since: c.health.lastErrorAt });
    else if (c.health.rateLimitedUntil !== null && c.health.rateLimitedUntil > now) {
      out.push({ connectionId: c.id, kind: 'cooldown', reason: c.health.lastErrorType === 'rate_limit_exceeded' ? 'Rate limited' : 'Resting after an error', until: c.health.rateLimitedUntil });
    }
    const b = byProvider.get(c.provider);
    if (b?.state === 'OPEN') out.push({ connectionId: c.id, kind: 'breaker-open', reason: `Requests to ${b.provider} paused after repeated failures`, since: b.openedAt, until: b.halfOpenAt });
    else if (b?.state === 'HALF_OPEN') out.push({ connectionId: c.id, kind: 'breaker-half-open', reason: `One request tries ${b.provider} again`, since: b.halfOpenAt });
  }
  for (const l of lockouts) {
    if (l.expiresAt <= now) continue;
    out.push({ connectionId: l.connectionId, kind: 'lockout', detail: l.model, reason: `${l.model} locked`, since: l.lockedAt, until: l.expiresAt });
  }
  return out;
}

/** Subscribes the feed and the timeline to the engine's layers; returns the unsubscribe. */
export function watchEngine(d: WatchDeps): () => void {
  const { clock, registry, resilience, center, timeline } = d;
  const offs: (() => void)[] = [];
  const terminalSeen = new Map(registry.all().map((c) => [c.id, terminalOf(c.health.testStatus)]));
  const breakerOpen = new Map(resilience.breakers(clock.now()).map((b) => [b.provider, b.state === 'OPEN']));

  // Terminal connections: looked at as their health changes (only the ids that changed).
  const checkTerminal = (ids: readonly string[]) => {
    for (const id of ids) {
      const c = registry.get(id);
      const now = c ? terminalOf(c.health.testStatus) : null;
      const before = terminalSeen.get(id) ?? null;
      if (c) terminalSeen.set(id, now);
      else terminalSeen.delete(id);
      if (c && now && now !== before) center.raise(terminalNotice(c, now));
    }
  };

  const checkBreakers = () => {
    const now = clock.now();
    for (const b of resilience.breakers(now)) {
      const open = b.state === 'OPEN';
      const was = breakerOpen.get(b.provider) ?? false;
      breakerOpen.set(b.provider, open);
      if (open && !was) center.raise(breakerNotice(b.provider, b.halfOpenAt, now));
    }
  };

  const observe = () => {
    const now = clock.now();
    timeline.observe(observedStates(registry.all(), resilience.breakers(now), resilience.lockouts(now), now));
  };

  // One look per burst: the resilience layer changes with every failure.
  let pending: CancelTimer | null = null;
  const schedule = () => {
    if (pending) return;
    pending = clock.setTimer(() => {
      pending = null;
      checkBreakers();
      observe();
    }, WATCH_INTERVAL_MS);
  };
  offs.push(() => pending?.());

  offs.push(
    registry.onChange((kind, ids) => {
      checkTerminal(ids);
      schedule();
      void kind;
    }),
  );
  offs.push(resilience.onChange(schedule));

  // Every target excluded: read from the request log's push (the answer the proxy gave).
  offs.push(
    d.bus.on('logs', (batch: RequestLogEntry[]) => {
      for (const e of batch) {
        const cooling = e.errorCode ? EXHAUSTED_CODES[e.errorCode] : undefined;
        if (cooling === undefined || e.attempts.length > 0) continue;
        center.raise(exhaustedNotice({ combo: e.combo?.name ?? null, model: e.requestedModel ?? e.model ?? 'the model' }, e.id, cooling));
      }
    }),
  );

  if (d.claude) {
    const { lane, reset } = d.claude;
    const laneActive = new Map<string, boolean>();
    const laneTimers = new Map<string, CancelTimer>();
    const resetAt = new Map<string, number | null>();
    const named = (id: string) => {
      const c = registry.get(id);
      return c ? { id, name: c.name } : null;
    };
    const checkLane = (id: string) => {
      const now = clock.now();
      const v = lane.view(id, now);
      const active = v.state === 'active';
      const was = laneActive.get(id) ?? false;
      laneActive.set(id, active);
      laneTimers.get(id)?.();
      laneTimers.delete(id);
      // A lane ends by itself at its window's end, without a change event: look again then.
      if (active && v.until !== null) laneTimers.set(id, clock.setTimer(() => checkLane(id), Math.max(0, v.until - now) + 1));
      const c = named(id);
      if (c && active !== was) center.raise(laneNotice(c, active, v.until));
    };
    offs.push(lane.onChange(checkLane));
    offs.push(() => laneTimers.forEach((t) => t()));
    offs.push(
      reset.onChange((id) => {
        const v = reset.view(id);
        const before = resetAt.get(id) ?? null;
        resetAt.set(id, v?.lastAttemptAt ?? null);
        const c = named(id);
        if (c && v?.lastResult === 'reset' && v.lastAttemptAt !== before) center.raise(limitResetNotice(c));
      }),
    );
  }

  observe();
  return () => offs.forEach((o) => o());
}
