// Pin selection, pure: given a plan's order and a session's pin, where the pinned target stands.
// When it is in the order and eligible it moves to the front and nothing else changes (the rest
// keep the strategy's order, so failover continues down the normal list). When it is not
// eligible (cooling, locked, breaker open, terminal: the resilience exclusion; disabled or gone:
// not in the order at all) the order is left as it is and the pin is "bypassed", so whichever
// connection serves takes the pin over. A pin whose connection cannot serve this request at all
// (another model, same session) is "not_candidate": it is left alone.
import type { AffinityTrace } from '../../../../shared/model';
import type { Exclusion } from '../../resilience/port';
import type { Target } from '../target';

/** Where a pin points: a connection, and for a combo the target's stable key. */
export interface PinPlace {
  connectionId: string;
  /** Set for combo pins (the combo target key provider/model#connection). */
  targetKey: string | null;
}

export const samePlace = (pin: PinPlace, t: Target): boolean =>
  t.conn.id === pin.connectionId && (pin.targetKey === null || t.combo?.key === pin.targetKey);

export interface PinContext {
  /** The resilience layer's eligibility read for a target. */
  exclusion(t: Target): Exclusion | null;
  /**
   * Why the pinned place is not in the order although it belongs to this route (disabled,
   * deleted, dropped from the combo), or null when it simply cannot serve this request.
   */
  absent(pin: PinPlace): string | null;
}

export interface PinSelection {
  pin: Exclude<AffinityTrace['pin'], 'none'>;
  reason: string | null;
}

/** Moves the pinned target to the front of `order` (in place) when it is there and eligible. */
export function selectPinned(order: Target[], pin: PinPlace, ctx: PinContext): PinSelection {
  const i = order.findIndex((t) => samePlace(pin, t));
  if (i < 0) {
    const why = ctx.absent(pin);
    return why === null ? { pin: 'not_candidate', reason: null } : { pin: 'bypassed', reason: why };
  }
  const ex = ctx.exclusion(order[i]!);
  if (ex) return { pin: 'bypassed', reason: ex.reason };
  if (i > 0) order.unshift(...order.splice(i, 1));
  return { pin: 'followed', reason: null };
}
