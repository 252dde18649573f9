// The chaos suite's measurements, computed after a phase from what the clients saw and what the
// chaos upstream recorded. The definitions (wasted call, healthy key, ejection period) are stated
// at the top of chaos.test.ts; this file implements them.
import type { ChaosCall } from '../support/chaosUpstream';
import type { ClientResult } from './clientPool';
import type { Schedule, Spell } from './schedule';

export interface SpellFigures extends Spell {
  /** Calls that arrived at the key during the spell. */
  calls: number;
  /** ms since the phase began when the spell's first failure had been delivered; null if none was. */
  evidenceAt: number | null;
  /** From when a sibling key was a better target (healthy for the key grace); null if never. */
  countedFrom: number | null;
  /** Calls that arrived after evidenceAt, while a sibling was a better target, before the spell ended. */
  wasted: number;
  /** The most wasted calls the thresholds allow for this spell. */
  allowed: number;
}

export interface BreakerSample {
  t: number;
  state: string;
}

export interface PhaseFigures {
  phase: string;
  requests: number;
  /** Client requests during which some key was healthy (the ones the zero-failure rule covers). */
  requestsWhileHealthy: number;
  upstreamCalls: number;
  /** Failed client requests during which some key was healthy (see chaos.test.ts). */
  failuresWhileHealthy: ClientResult[];
  /** Failed client requests while no key was healthy long enough (allowed). */
  failuresWithoutHealthyKey: number;
  /** Failed client requests whose last upstream call stalled after the response was committed. */
  postCommitFailures: number;
  midStreamStallsServed: number;
  clientTimeouts: number;
  spells: SpellFigures[];
  wasted: number;
  p50Ms: number;
  p99Ms: number;
  breaker: BreakerSample[];
}

/** Nearest-rank percentile of a list of numbers (0 when empty). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * How many ejection periods fit in `spanMs` after the first evidence: the detection period, plus
 * one for every ejection that could have expired within the span when ejection times grow no
 * faster than linearly from `baseMs` (Envoy's rule: base x times ejected; a doubling backoff
 * expires less often, so this is the generous count).
 */
export function ejectionPeriods(spanMs: number, baseMs: number): number {
  let m = 0;
  while ((baseMs * (m + 1) * (m + 2)) / 2 < spanMs) m++;
  return 1 + m;
}

export function measurePhase(o: {
  phase: string;
  schedule: Schedule;
  results: readonly ClientResult[];
  calls: readonly ChaosCall[];
  graceMs: number;
  keyGraceMs: number;
  ejectionBaseMs: number;
  allowedPerPeriod: number;
  breaker: BreakerSample[];
}): PhaseFigures {
  const lastCall = new Map<string, ChaosCall>();
  for (const c of o.calls) if (c.requestId !== null) lastCall.set(c.requestId, c);

  const failuresWhileHealthy: ClientResult[] = [];
  let failuresWithoutHealthyKey = 0;
  let postCommitFailures = 0;
  let requestsWhileHealthy = 0;
  for (const r of o.results) {
    const healthy = o.schedule.someHealthyOver(r.startedAt - o.graceMs, r.endedAt);
    if (healthy) requestsWhileHealthy++;
    if (r.ok) continue;
    if (lastCall.get(r.id)?.fault === 'stall_mid_stream') postCommitFailures++;
    else if (healthy) failuresWhileHealthy.push(r);
    else failuresWithoutHealthyKey++;
  }

  // A sibling is a better target at t when it has been healthy for the key grace up to t.
  const siblingHealthy = (key: string, t: number) =>
    o.schedule.keys.some((k) => k !== key && o.schedule.healthyOver(k, t - o.keyGraceMs, t));
  const spells = o.schedule.spells().map((s): SpellFigures => {
    const mine = o.calls.filter((c) => c.key === s.key && c.arrivedAt >= s.from && c.arrivedAt < s.to);
    const delivered = mine.map((c) => c.finishedAt).filter((t): t is number => t !== null);
    const evidenceAt = delivered.length > 0 ? Math.min(...delivered) : null;
    let countedFrom: number | null = null;
    if (evidenceAt !== null) {
      for (let t = evidenceAt; t < s.to; t += 5) {
        if (siblingHealthy(s.key, t)) {
          countedFrom = t;
          break;
        }
      }
    }
    const wasted =
      countedFrom === null ? 0 : mine.filter((c) => c.arrivedAt > evidenceAt! && c.arrivedAt >= countedFrom! && siblingHealthy(s.key, c.arrivedAt)).length;
    const allowed = countedFrom === null ? 0 : o.allowedPerPeriod * ejectionPeriods(s.to - countedFrom, o.ejectionBaseMs);
    return { ...s, calls: mine.length, evidenceAt, countedFrom, wasted, allowed };
  });

  const latencies = o.results.map((r) => r.endedAt - r.startedAt);
  return {
    phase: o.phase,
    requests: o.results.length,
    requestsWhileHealthy,
    upstreamCalls: o.calls.length,
    failuresWhileHealthy,
    failuresWithoutHealthyKey,
    postCommitFailures,
    midStreamStallsServed: o.calls.filter((c) => c.fault === 'stall_mid_stream').length,
    clientTimeouts: o.results.filter((r) => r.timedOut).length,
    spells,
    wasted: spells.reduce((n, s) => n + s.wasted, 0),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    breaker: o.breaker,
  };
}

/** Breaker state changes, e.g. "CLOSED@0 OPEN@412 HALF_OPEN@1415 CLOSED@1420". */
export function breakerTimeline(samples: readonly BreakerSample[]): string {
  const out: string[] = [];
  let last: string | null = null;
  for (const s of samples) {
    if (s.state === last) continue;
    out.push(`${s.state}@${s.t}`);
    last = s.state;
  }
  return out.join(' ');
}

export function formatFigures(f: PhaseFigures): string {
  const lines = [
    `chaos phase ${f.phase}: ${f.requests} requests (${f.requestsWhileHealthy} while a key was healthy), ${f.upstreamCalls} upstream calls`,
    `  client failures while a healthy key existed: ${f.failuresWhileHealthy.length}` +
      `  (without a healthy key: ${f.failuresWithoutHealthyKey}; after a mid-stream stall: ${f.postCommitFailures} of ${f.midStreamStallsServed} stalls served; client timeouts: ${f.clientTimeouts})`,
    `  wasted calls: ${f.wasted}  latency p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms`,
    ...f.spells.map(
      (s) =>
        `    ${s.key} ${s.states.join('+')} ${s.from}-${s.to} ms: ${s.calls} calls, wasted ${s.wasted} (allowed ${s.allowed}), ` +
        `first evidence at ${s.evidenceAt ?? '-'} ms, a sibling healthy from ${s.countedFrom ?? '-'} ms`,
    ),
    `  breaker: ${breakerTimeline(f.breaker)}`,
  ];
  const examples = f.failuresWhileHealthy.slice(0, 3).map((r) => `    e.g. ${r.id} at ${r.startedAt}-${r.endedAt} ms: ${r.status ?? '-'} ${r.code ?? ''} ${r.error ?? ''}`);
  return [...lines, ...examples].join('\n');
}
