// The per-connection state timeline: spans of cooldown, breaker open / half-open, model lockout,
// terminal and disabled, recorded in SQLite as they start and end. The recorder is given what
// holds now (observe) and diffs it against the spans still open: a new state opens a span, a
// state gone closes its span — at the time it was due to lift when that came first (states that
// lift lazily, like a cooldown running out, end on time even when nobody looked). Bounded: spans
// that ended more than the retention ago are deleted.
import type { ConnectionTimeline, StateSpan, StateSpanKind, StateTimelineView } from '../../../shared/usage';
import type { Clock } from '../clock';
import type { StateSpansRepo, StoredSpan } from '../store/notificationsRepo';

/** Ended spans are kept this long. */
export const TIMELINE_RETENTION_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

/** One state holding a connection now. */
export interface ObservedState {
  connectionId: string;
  kind: StateSpanKind;
  /** Plain words: why (for a lockout, which model). */
  reason: string;
  /** Distinguishes two spans of one kind on one connection (a lockout's model); '' otherwise. */
  detail?: string;
  /** When it began, if the layer knows (else: now, when first seen). */
  since?: number | null;
  /** When it lifts by itself; null when it needs a person or has no timer. */
  until?: number | null;
}

const keyOf = (s: { kind: StateSpanKind; detail?: string }) => (s.detail ? `${s.kind}:${s.detail}` : s.kind);
const spanKey = (connectionId: string, key: string) => `${connectionId}\u0000${key}`;

/** Where a stored span ends as of `now`: its end, else its due time once passed, else null (holds). */
const effectiveEnd = (s: StoredSpan, now: number): number | null =>
  s.endedAt ?? (s.untilHint !== null && s.untilHint <= now ? Math.max(s.startedAt, s.untilHint) : null);

export class StateTimeline {
  private readonly open = new Map<string, StoredSpan>();
  private lastPrune = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly repo: StateSpansRepo,
    private readonly clock: Clock,
    private readonly retentionMs = TIMELINE_RETENTION_MS,
  ) {
    for (const s of repo.open()) this.open.set(spanKey(s.connectionId, s.key), s);
  }

  /** What holds every connection now: opens, updates and closes spans to match. */
  observe(states: readonly ObservedState[]): void {
    const now = this.clock.now();
    const seen = new Set<string>();
    for (const st of states) {
      const key = keyOf(st);
      const k = spanKey(st.connectionId, key);
      if (seen.has(k)) continue;
      seen.add(k);
      const until = st.until ?? null;
      const cur = this.open.get(k);
      if (cur && effectiveEnd(cur, now) === null) {
        // Still holding: a cooldown extended (or shortened) moves its due time.
        if (cur.untilHint !== until || cur.reason !== st.reason) {
          this.repo.updateHint(cur.id, until, st.reason);
          cur.untilHint = until;
          cur.reason = st.reason;
        }
        continue;
      }
      if (cur) this.close(k, cur, now);
      const since = st.since != null && st.since <= now ? st.since : now;
      this.open.set(k, this.repo.insert({ connectionId: st.connectionId, key, kind: st.kind, reason: st.reason, startedAt: since, untilHint: until }));
    }
    for (const [k, s] of this.open) if (!seen.has(k)) this.close(k, s, now);
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      this.repo.prune(now - this.retentionMs);
    }
  }

  private close(k: string, s: StoredSpan, now: number): void {
    const end = effectiveEnd(s, now) ?? now;
    this.repo.end(s.id, end);
    this.open.delete(k);
  }

  /** The spans overlapping [from, to), per connection, named by `nameOf` (null: a connection since removed). */
  view(range: { from: number; to: number }, nameOf: (connectionId: string) => string | null): StateTimelineView {
    const now = this.clock.now();
    const byConn = new Map<string, ConnectionTimeline>();
    for (const s of this.repo.range(range.from, range.to)) {
      const to = effectiveEnd(s, now);
      if (to !== null && to < range.from) continue;
      let t = byConn.get(s.connectionId);
      if (!t) byConn.set(s.connectionId, (t = { connectionId: s.connectionId, name: nameOf(s.connectionId) ?? 'Removed connection', spans: [] }));
      const span: StateSpan = { kind: s.kind, from: s.startedAt, to, reason: s.reason };
      t.spans.push(span);
    }
    return { from: range.from, to: range.to, connections: [...byConn.values()] };
  }
}
