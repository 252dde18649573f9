// The chaos suite's measurements, computed after a phase from what the clients saw and what the
// chaos upstream recorded. The definitions (wasted call, healthy key, ejection period) are stated
// at the top of chaos.test.ts; this file implements them.
import type { ChaosCall } from '../support/chaosUpstream';
import type { ClientResult } from './clientPool';
import { HEALTHY, type Schedule, type Spell } from './schedule';

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

// ---- the randomised suite's figures (random.test.ts states the definitions) ---------------------

export interface RunFigures {
  /** What served the run: `engine` (Switchyard) or `blind walk` (the stateless baseline). */
  router: string;
  seed: number;
  keys: number;
  requests: number;
  streamed: number;
  upstreamCalls: number;
  /** Requests that started while some key was healthy at the upstream and outside any wait it had declared. */
  requestsWhileHealthy: number;
  /** Failed requests among those. */
  failuresWhileHealthy: ClientResult[];
  /** Failed requests whose every healthy key was inside a wait it had declared (Retry-After). */
  failuresExcused: number;
  /** Failed requests that started while no key was healthy (the schedule never allows one). */
  failuresWithoutHealthyKey: number;
  /** Calls that reached a key inside a bad spell that had already delivered a failure. */
  wasted: number;
  wastedByFault: Record<string, number>;
  clientTimeouts: number;
}

const pct = (n: number, of: number) => (of === 0 ? '0.00' : ((100 * n) / of).toFixed(2));

export function measureRun(o: {
  router: string;
  seed: number;
  schedule: Schedule;
  results: readonly ClientResult[];
  calls: readonly ChaosCall[];
  /** How long a `status_429_retry_after` asks the client to wait, ms. */
  retryAfterMs: number;
}): RunFigures {
  const { schedule } = o;
  // The waits each key declared: from the moment its Retry-After answer was sent, for as long as it said.
  const waits = new Map<string, { from: number; to: number }[]>();
  for (const c of o.calls) {
    if (c.fault !== 'status_429_retry_after' || c.finishedAt === null) continue;
    const list = waits.get(c.key) ?? [];
    list.push({ from: c.finishedAt, to: c.finishedAt + o.retryAfterMs });
    waits.set(c.key, list);
  }
  const inDeclaredWait = (key: string, t: number) => (waits.get(key) ?? []).some((w) => w.from <= t && t < w.to);
  const healthyAt = (key: string, t: number) => HEALTHY.has(schedule.stateAt(key, t));

  const failuresWhileHealthy: ClientResult[] = [];
  let failuresExcused = 0;
  let failuresWithoutHealthyKey = 0;
  let requestsWhileHealthy = 0;
  for (const r of o.results) {
    const healthy = schedule.keys.filter((k) => healthyAt(k, r.startedAt));
    const open = healthy.filter((k) => !inDeclaredWait(k, r.startedAt));
    if (open.length > 0) requestsWhileHealthy++;
    if (r.ok) continue;
    if (open.length > 0) failuresWhileHealthy.push(r);
    else if (healthy.length > 0) failuresExcused++;
    else failuresWithoutHealthyKey++;
  }

  // Calls grouped by (key, bad span); a span's evidence is the first moment one of its failures was delivered.
  const groups = new Map<string, ChaosCall[]>();
  for (const c of o.calls) {
    const span = schedule.badSpanAt(c.key, c.arrivedAt);
    if (span === null) continue;
    const id = `${c.key}@${span.from}`;
    const group = groups.get(id);
    if (group) group.push(c);
    else groups.set(id, [c]);
  }
  let wasted = 0;
  const wastedByFault: Record<string, number> = {};
  for (const group of groups.values()) {
    const delivered = group.map((c) => c.finishedAt).filter((t): t is number => t !== null);
    if (delivered.length === 0) continue;
    const evidenceAt = Math.min(...delivered);
    for (const c of group) {
      if (c.arrivedAt < evidenceAt) continue;
      wasted++;
      wastedByFault[c.fault] = (wastedByFault[c.fault] ?? 0) + 1;
    }
  }

  return {
    router: o.router,
    seed: o.seed,
    keys: schedule.keys.length,
    requests: o.results.length,
    streamed: o.results.filter((r) => r.stream).length,
    upstreamCalls: o.calls.length,
    requestsWhileHealthy,
    failuresWhileHealthy,
    failuresExcused,
    failuresWithoutHealthyKey,
    wasted,
    wastedByFault,
    clientTimeouts: o.results.filter((r) => r.timedOut).length,
  };
}

/** Several runs added up (the total row); the failures are concatenated. */
export function sumRuns(router: string, runs: readonly RunFigures[]): RunFigures {
  const add = (f: (r: RunFigures) => number) => runs.reduce((n, r) => n + f(r), 0);
  const wastedByFault: Record<string, number> = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.wastedByFault)) wastedByFault[k] = (wastedByFault[k] ?? 0) + v;
  return {
    router,
    seed: NaN,
    keys: NaN,
    requests: add((r) => r.requests),
    streamed: add((r) => r.streamed),
    upstreamCalls: add((r) => r.upstreamCalls),
    requestsWhileHealthy: add((r) => r.requestsWhileHealthy),
    failuresWhileHealthy: runs.flatMap((r) => r.failuresWhileHealthy),
    failuresExcused: add((r) => r.failuresExcused),
    failuresWithoutHealthyKey: add((r) => r.failuresWithoutHealthyKey),
    wasted: add((r) => r.wasted),
    wastedByFault,
    clientTimeouts: add((r) => r.clientTimeouts),
  };
}

/** The figures table: one row per run, then the totals, with the share of requests (and calls) in %. */
export function formatRunTable(rows: readonly RunFigures[]): string {
  const head = ['router', 'seed', 'keys', 'requests', 'failed while healthy', 'excused', 'wasted calls (% req / % calls)', 'calls/req', 'client timeouts'];
  const body = rows.map((r) => [
    r.router,
    Number.isNaN(r.seed) ? 'total' : String(r.seed),
    Number.isNaN(r.keys) ? '' : String(r.keys),
    String(r.requests),
    `${r.failuresWhileHealthy.length} (${pct(r.failuresWhileHealthy.length, r.requests)}%)`,
    String(r.failuresExcused),
    `${r.wasted} (${pct(r.wasted, r.requests)}% / ${pct(r.wasted, r.upstreamCalls)}%)`,
    r.requests === 0 ? '-' : (r.upstreamCalls / r.requests).toFixed(2),
    String(r.clientTimeouts),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(head), ...body.map(line)].join('\n');
}

/** What went wrong in a run, for the log: wasted calls by fault, and a few failed requests. */
export function describeRun(r: RunFigures): string {
  const byFault = Object.entries(r.wastedByFault)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const codes = new Map<string, number>();
  for (const f of r.failuresWhileHealthy) {
    const k = `${f.status ?? '-'} ${f.code ?? f.error ?? ''}`.trim();
    codes.set(k, (codes.get(k) ?? 0) + 1);
  }
  return [
    `  ${r.router} seed ${r.seed}: wasted by fault: ${byFault || 'none'}; failures while healthy by answer: ${[...codes].map(([k, v]) => `${k} x${v}`).join(', ') || 'none'}`,
    ...r.failuresWhileHealthy.slice(0, 3).map((f) => `    e.g. ${f.id} at ${f.startedAt}-${f.endedAt} ms: ${f.status ?? '-'} ${f.code ?? ''} ${f.error ?? ''}`),
  ].join('\n');
}
