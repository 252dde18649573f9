// Egress-bucketed lockout (SPEC §7c, R-EGR-01..11). Some upstreams bucket their free tier per IP,
// not per account (opencode, #9611): when one connection of the family is rate-limited, every
// family connection that leaves through the same IP would fail the same way. On a 429 classified
// quota_exhausted or rate_limit_exceeded, the failing connection gets a connection cooldown (not a
// per-model lock, R-EGR-06) and every family sibling whose last known egress IP is the failing
// connection's is held until the same moment, before rotation can try it (R-EGR-01). Never
// terminal; a terminal or longer-cooling sibling is left alone (R-EGR-08, holdUntil); a
// disableCooling connection skips the branch (R-EGR-05); no known IP: only the failing
// connection cools (R-EGR-04). Pure selection here; resilienceService applies it.
import type { ConnectionRecord } from '../connections/registry';
import type { FailureClass } from './classifyFailure';
import { EGRESS_BUCKETED_LOCK_PROVIDERS } from './providerErrorRules';

/** R-EGR-02: a subscription-quota 429 on the family cools for at least an hour. */
export const EGRESS_QUOTA_COOLDOWN_MS = 60 * 60_000;

/** R-EGR-03: how far back the request log is searched for a connection's last egress IP. */
export const EGRESS_HISTORY_WINDOW_MS = 24 * 60 * 60_000;

/** Where a connection's last known egress IP comes from (a fresh probe, else the request log). */
export interface EgressHistory {
  /** The connection's last known egress IP, or null (never probed, or nothing within the window). */
  lastKnown(connectionId: string, now: number): string | null;
  /** The last known egress IP of each of these connections that has one. */
  lastKnownOf(connectionIds: readonly string[], now: number): Map<string, string>;
  /** Team mode: told when a probe learns a connection's egress IP (a team lockout on that IP may hold it). */
  onLearnt?(fn: (connectionId: string, ip: string) => void): () => void;
}

const FAMILY: ReadonlySet<string> = new Set(EGRESS_BUCKETED_LOCK_PROVIDERS);

export const isEgressBucketed = (provider: string) => FAMILY.has(provider);

/**
 * Whether this failure takes the egress branch: a family connection that did not opt out of
 * cooldowns, a 429 read as a quota or a rate limit, and no operator rule that chose another scope.
 */
export function egressBranchApplies(conn: Pick<ConnectionRecord, 'provider' | 'disableCooling'>, c: FailureClass): boolean {
  if (!FAMILY.has(conn.provider) || conn.disableCooling || c.status !== 429) return false;
  if (c.reason !== 'quota_exhausted' && c.reason !== 'rate_limit_exceeded') return false;
  return c.rule === null || !c.rule.honored || c.rule.scope === 'connection';
}

/** The family siblings (not the failing connection) whose last known egress IP is `ip`. */
export function egressSiblings(
  failing: ConnectionRecord,
  all: readonly ConnectionRecord[],
  ip: string,
  ips: ReadonlyMap<string, string>,
): ConnectionRecord[] {
  return all.filter((c) => c !== failing && FAMILY.has(c.provider) && !c.disableCooling && ips.get(c.id) === ip);
}

/** The family connections other than the failing one (whose IPs the lookup needs). */
export const familyOthers = (failing: ConnectionRecord, all: readonly ConnectionRecord[]) =>
  all.filter((c) => c !== failing && FAMILY.has(c.provider));
