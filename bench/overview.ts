// `npm run bench` (last part; or `npx tsx bench/overview.ts`): how fast the Overview's usage report
// answers with a million logged requests. A month of 1,000,000 requests (6 connections over 3
// providers, 10 models, 3 combos and none, 4 client keys; 8 % errors, some rescued by a failover)
// is written through the request log's real write path, `insertOps` (the log rows, their attempts
// and the roll-ups, in one transaction per batch of 2,000, as the log writer's worker runs them),
// into a SQLite file; then getUsage's report is timed for each range (median of 9 runs after one
// warm-up). Printed, never asserted (timing belongs here, not in npm test). Goal: under 50 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openStore } from '../src/main/engine/store/db';
import { insertOps, runLogWrites, usagePruneOps } from '../src/main/engine/store/logsRepo';
import { UsageRepo } from '../src/main/engine/store/usageRepo';
import { UsageService } from '../src/main/engine/usage/usageService';
import type { RequestLogEntry } from '../src/shared/model';
import { USAGE_RANGES } from '../src/shared/usage';

const REQUESTS = Number(process.env.BENCH_OVERVIEW_REQUESTS ?? 1_000_000);
const BATCH = 2_000;
const RUNS = 9;
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 30, 17, 23, 0);
const START = NOW - 30 * DAY;

let seed = 2323;
const rnd = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;

const CONNECTIONS = Array.from({ length: 6 }, (_, i) => ({ id: `conn_${i}`, name: `Connection ${i}`, provider: ['openai', 'anthropic', 'glm'][i % 3]! }));
const MODELS = Array.from({ length: 10 }, (_, i) => `model-${i}`);
const COMBOS = [null, null, 'fast', 'cheap', 'deep'];
const KEYS = ['key_0', 'key_1', 'key_2', 'key_3'];

function entry(i: number): RequestLogEntry {
  const c = pick(CONNECTIONS);
  const model = pick(MODELS);
  const startedAt = START + Math.floor((i / REQUESTS) * 30 * DAY);
  const failed = rnd() < 0.08;
  const rescued = !failed && rnd() < 0.04;
  const status = failed ? pick([429, 500, 502, 400]) : 200;
  const ttfb = Math.round(80 * Math.exp(rnd() * 3));
  const attempt = (n: number, s: number) => ({
    attempt: n,
    connectionId: c.id,
    connectionName: c.name,
    provider: c.provider,
    model,
    startedAt,
    status: s,
    errorClass: s === 200 ? null : 'server_error',
    errorCode: null,
    errorMessage: null,
    ttfbMs: ttfb,
    durationMs: ttfb * 4,
    failedOver: s !== 200,
    queuedMs: 0,
  });
  return {
    id: `req_${i.toString(36).padStart(10, '0')}`,
    startedAt,
    protocol: 'openai-chat',
    path: '/v1/chat/completions',
    clientKeyId: pick(KEYS),
    requestedModel: model,
    model,
    stream: rnd() < 0.7,
    status,
    errorCode: failed ? 'upstream_error' : null,
    errorMessage: failed ? 'upstream failed' : null,
    connectionId: c.id,
    connectionName: c.name,
    provider: c.provider,
    ttfbMs: failed ? null : ttfb,
    durationMs: ttfb * 4 + Math.round(rnd() * 5000),
    inputTokens: failed ? null : Math.round(rnd() * 4000),
    outputTokens: failed ? null : Math.round(rnd() * 1000),
    cacheReadTokens: failed ? null : Math.round(rnd() * 20000),
    cacheWriteTokens: null,
    costUsd: failed || rnd() < 0.1 ? null : Math.round(rnd() * 1e5) / 1e7,
    attempts: rescued ? [attempt(1, 503), attempt(2, 200)] : [attempt(1, status)],
    skipped: [],
    combo: (() => {
      const name = pick(COMBOS);
      return name ? ({ id: name, name, strategy: 'priority', via: 'name', pattern: null, order: [], waits: [] } as unknown as RequestLogEntry['combo']) : null;
    })(),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-overview-'));
try {
  const db = openStore({ path: join(dir, 'switchyard.db'), now: () => NOW });
  db.pragma('synchronous = OFF'); // as the log writer's worker connection runs
  const cache = new Map();
  let lastPrune = 0;
  const t0 = performance.now();
  for (let i = 0; i < REQUESTS; i += BATCH) {
    const batch: RequestLogEntry[] = [];
    for (let j = i; j < Math.min(REQUESTS, i + BATCH); j++) batch.push(entry(j));
    runLogWrites(db, insertOps(batch), cache);
    // The roll-ups' own retention, as the request log runs it (every 10 minutes of its clock).
    const at = batch.at(-1)!.startedAt;
    if (at - lastPrune >= 10 * 60_000) {
      lastPrune = at;
      runLogWrites(db, usagePruneOps(at), cache);
    }
  }
  const fillS = (performance.now() - t0) / 1000;
  const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  console.log(
    `overview: ${REQUESTS.toLocaleString('en')} requests over 30 days written through insertOps in ${fillS.toFixed(1)} s ` +
      `(${Math.round(REQUESTS / fillS).toLocaleString('en')}/s, log rows and roll-ups together); ` +
      `roll-up rows: ${count('usage_minute')} minute, ${count('usage_hour')} hour, ${count('usage_day')} day`,
  );
  const usage = new UsageService({ repo: new UsageRepo(db), settle: async () => {}, connectionName: (id) => id, clientKeyName: (id) => id });
  for (const range of USAGE_RANGES) {
    usage.reportNow(range, NOW);
    const times: number[] = [];
    let requests = 0;
    for (let r = 0; r < RUNS; r++) {
      const s = performance.now();
      requests = usage.reportNow(range, NOW).totals.requests;
      times.push(performance.now() - s);
    }
    console.log(`overview: getUsage(${range.padEnd(5)}) median ${median(times).toFixed(2)} ms (min ${Math.min(...times).toFixed(2)}, max ${Math.max(...times).toFixed(2)}) over ${requests.toLocaleString('en')} requests`);
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
