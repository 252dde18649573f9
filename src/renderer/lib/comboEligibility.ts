// Live eligibility of a combo's targets, from the pushed connections and resilience snapshot and
// the current (server) time, read lazily like the engine does: which connections of a target may
// be called now, and if none, why (cooling down, model locked, breaker open, terminal, disabled,
// or no connection at all) and until when.
import type { BreakerView, ComboTarget, ConnectionView, CooldownEntry, ModelLockoutView, WireProtocol } from '../../shared/model';
import { breakerStateAt, liveStateOf } from './connectionState';

export type ConnectionEligibility =
  | { kind: 'ready' }
  | { kind: 'cooling'; until: number }
  | { kind: 'locked'; until: number }
  | { kind: 'breaker_open'; until: number | null }
  | { kind: 'terminal'; status: string }
  | { kind: 'disabled' };

export type TargetEligibility =
  | { kind: 'ready'; connections: number }
  | { kind: 'cooling' | 'locked' | 'breaker_open'; until: number | null }
  | { kind: 'terminal' | 'disabled' | 'no_connection' };

export interface Resilience {
  cooldowns: CooldownEntry[];
  lockouts: ModelLockoutView[];
  breakers: BreakerView[];
}

/** The connections a target may use: its pinned connection, or its provider's that serve the model. */
export function connectionsOf(t: ComboTarget, all: ConnectionView[]): ConnectionView[] {
  if (t.connectionId) return all.filter((c) => c.id === t.connectionId);
  return all.filter((c) => c.provider === t.provider && (c.passthroughModels || c.models.includes(t.model)));
}

/** The wire protocol a target speaks (from its connections), or null when it has none. */
export function protocolOf(t: ComboTarget, all: ConnectionView[]): WireProtocol | null {
  return (t.connectionId ? all.find((c) => c.id === t.connectionId) : all.find((c) => c.provider === t.provider))?.protocol ?? null;
}

export function connectionEligibility(conn: ConnectionView, model: string, r: Resilience, now: number): ConnectionEligibility {
  const live = liveStateOf(conn, r.cooldowns.find((e) => e.connectionId === conn.id), now);
  if (live.kind === 'terminal') return { kind: 'terminal', status: live.status };
  if (live.kind === 'disabled') return { kind: 'disabled' };
  const breaker = r.breakers.find((b) => b.provider === conn.provider);
  if (breaker && breakerStateAt(breaker, now) === 'OPEN') return { kind: 'breaker_open', until: breaker.halfOpenAt };
  if (live.kind === 'cooling') return { kind: 'cooling', until: live.until };
  const lock = r.lockouts
    .filter((l) => l.connectionId === conn.id && l.expiresAt > now && (l.model === model || (l.scope === 'family' && model.startsWith(l.model))))
    .sort((a, b) => b.expiresAt - a.expiresAt)[0];
  if (lock) return { kind: 'locked', until: lock.expiresAt };
  return { kind: 'ready' };
}

export function targetEligibility(t: ComboTarget, all: ConnectionView[], r: Resilience, now: number): TargetEligibility {
  const conns = connectionsOf(t, all);
  if (conns.length === 0) return { kind: 'no_connection' };
  const states = conns.map((c) => connectionEligibility(c, t.model, r, now));
  const ready = states.filter((s) => s.kind === 'ready').length;
  if (ready > 0) return { kind: 'ready', connections: ready };
  // Nothing usable now: report what lifts first.
  const timed = states.filter((s): s is Extract<ConnectionEligibility, { until: number | null }> => 'until' in s);
  if (timed.length) {
    const first = [...timed].sort((a, b) => (a.until ?? Infinity) - (b.until ?? Infinity))[0]!;
    return { kind: first.kind, until: first.until };
  }
  return { kind: states.some((s) => s.kind === 'terminal') ? 'terminal' : 'disabled' };
}
