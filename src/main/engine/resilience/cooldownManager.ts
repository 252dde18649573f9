// The cooldown manager (SPEC §3b): one view of every connection that is out of routing for a
// transient reason (cooldown, outlier ejection, model-scoped rate limits and lockouts) or a terminal one, and the operator's clear, which
// lifts cooldowns and lockouts for one connection, a selection or all of a provider, and never
// touches a terminal state (reported under skippedTerminal, R-CM-09). No credentials leave here.
import type { ClearCooldownsResult, CooldownEntry, CooldownsView } from '../../../shared/model';
import { isTerminalStatus } from '../../../shared/model';
import type { ConnectionRecord, ConnectionRegistry } from '../connections/registry';
import { ApiError, notFound } from '../errors';
import { clearCooldown, connectionStatusAt } from './connectionCooldown';
import type { ModelLockouts } from './modelLockout';

export type ClearInput = { connectionIds: string[] } | { all: true; provider?: string };

export function cooldownEntry(c: ConnectionRecord, now: number, lockouts: ModelLockouts): CooldownEntry {
  const h = c.health;
  const status = connectionStatusAt(h, now);
  const cooling = status === 'cooling';
  return {
    connectionId: c.id,
    name: c.name,
    provider: c.provider,
    authClass: c.authClass,
    enabled: c.enabled,
    status,
    terminal: isTerminalStatus(status),
    rateLimitedUntil: cooling ? h.rateLimitedUntil : null,
    remainingMs: cooling ? h.rateLimitedUntil! - now : 0,
    backoffLevel: h.backoffLevel,
    lastErrorType: h.lastErrorType,
    lastError: h.lastError,
    errorCode: h.errorCode,
    lastErrorAt: h.lastErrorAt,
    lockouts: lockouts.activeFor(c.id, now).map((e) => lockouts.toView(e, c.name)),
  };
}

export function cooldownsView(registry: ConnectionRegistry, lockouts: ModelLockouts, now: number, provider?: string): CooldownsView {
  const conns = registry.all().filter((c) => provider === undefined || c.provider === provider);
  return { now, connections: conns.map((c) => cooldownEntry(c, now, lockouts)) };
}

/** Applies an operator clear. Every id is checked before anything changes. */
export function clearCooldowns(
  registry: ConnectionRegistry,
  lockouts: ModelLockouts,
  input: ClearInput,
  now: number,
  /**
   * Called for every non-terminal connection cleared, so other layers (outlier records, a
   * key-level breaker hold) forget it too; true when that lifted something.
   */
  onCleared: (connectionId: string) => boolean | void = () => {},
  /** Persists the cleared connections' health (team mode: and publishes the clear). */
  saveHealth: (ids: string[]) => void = (ids) => registry.saveHealth(ids),
): ClearCooldownsResult {
  let targets: ConnectionRecord[];
  if ('connectionIds' in input) {
    targets = [];
    for (const id of new Set(input.connectionIds)) {
      const c = registry.get(id);
      if (!c) throw notFound('connection', id);
      targets.push(c);
    }
  } else {
    targets = registry.all().filter((c) => input.provider === undefined || c.provider === input.provider);
    if (input.provider !== undefined && targets.length === 0) {
      throw new ApiError(404, 'not_found', `no connection belongs to provider "${input.provider}"`, 'provider');
    }
  }
  const result: ClearCooldownsResult = { cleared: [], unchanged: [], skippedTerminal: [], lockoutsCleared: 0, pausesLifted: 0, remaining: [] };
  const changed: string[] = [];
  for (const c of targets) {
    if (isTerminalStatus(c.health.testStatus)) {
      result.skippedTerminal.push(c.id);
      continue;
    }
    const next = clearCooldown(c.health);
    const lifted = onCleared(c.id) === true;
    const locks = lockouts.clearConnection(c.id, now);
    result.lockoutsCleared += locks;
    const healthChanged = next !== c.health;
    if (healthChanged) {
      Object.assign(c.health, next);
      changed.push(c.id);
    }
    if (healthChanged || locks > 0 || lifted) result.cleared.push(c.id);
    else result.unchanged.push(c.id);
  }
  if (changed.length) saveHealth(changed);
  return result;
}
