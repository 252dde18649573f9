// `npm run bench` (second part; or `npx tsx bench/queue.ts` after a build): what the request queue and the concurrency gates cost through the proxy.
// One Switchyard process, one loopback upstream process, four connections to the same upstream:
//   off     OAuth connection, not queue-protected (the baseline)
//   on      API-key connection, auto-protected by the queue with default settings (idle fast path)
//   gates   on + a connection cap, a model cap and max_concurrent, all far above the load
//   paced   on + minTimeMs 1, so every request goes through Bottleneck (what the fast path avoids)
// Non-streaming requests at c=1 and c=32 against an upstream that answers at once; each variant
// runs in interleaved rounds and the median round is reported, with ratios against "off" and the
// added p99 against "off" and against calling the upstream directly. Loopback HTTP on a busy
// machine is noisy, so the bench also times admission alone in-process (acquire + release per
// request, same variants): that is the latency the queue itself adds.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AdmissionService } from '../src/main/engine/admission/admissionService';
import { systemClock } from '../src/main/engine/clock';
import { resolveSettings } from '../src/main/engine/settings/resolve';
import type { ConnectionRecord } from '../src/main/engine/store/connectionsRepo';
import { connectionRecord } from '../tests/support/builders';
import { load, percentile, startSwitchyard, startUpstream, type RunResult } from './lib';

const f = (n: number, d = 2) => n.toFixed(d);

const VARIANTS = {
  off: { authClass: 'oauth' },
  on: { authClass: 'apikey' },
  gates: {
    authClass: 'apikey',
    maxConcurrent: 10_000,
    rateLimitOverrides: { maxConcurrent: 10_000, modelConcurrency: { 'bench-delay-0': 10_000 } },
  },
  paced: { authClass: 'apikey', rateLimitOverrides: { minTimeMs: 1 } },
} as const;
type Variant = keyof typeof VARIANTS;

/** Admission alone: acquire + release per request on an in-process AdmissionService (real clock). */
async function inProcess(): Promise<string[]> {
  const settings = resolveSettings({}, {});
  const record = (id: string, extra: Partial<ConnectionRecord>): ConnectionRecord =>
    connectionRecord({ id, name: id, kind: 'openai-compatible', provider: id, baseUrl: 'http://127.0.0.1:1/v1', ...extra });
  const conns = Object.entries(VARIANTS).map(([name, extra]) => record(name, extra));
  const admission = new AdmissionService({
    clock: systemClock,
    settings: { snapshot: settings, values: settings.values, onChange: () => () => {} },
    registry: { all: () => conns, get: (id) => conns.find((c) => c.id === id), onChange: () => () => {} },
    resilience: { lockModel: () => {} },
  });
  let pushes = 0;
  admission.onChange(() => pushes++);
  const signal = new AbortController().signal;
  const rows: string[] = [];
  for (const conn of conns) {
    const target = { conn, model: 'bench-delay-0', requestedModel: 'bench-delay-0' };
    const n = conn.id === 'paced' ? 300 : 100_000;
    for (let i = 0; i < Math.min(n, 2_000); i++) (await admission.acquire(target, signal)).release(); // warm-up
    const lat: number[] = [];
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const lease = await admission.acquire(target, signal);
      lease.release();
      lat.push(performance.now() - t0);
    }
    const total = performance.now() - start;
    lat.sort((a, b) => a - b);
    rows.push(
      `  ${conn.id.padEnd(6)} ${f((total / n) * 1000, 2).padStart(8)} us/request  p50 ${f(percentile(lat, 50) * 1000, 2)} us  p99 ${f(percentile(lat, 99) * 1000, 2)} us  p99.9 ${f(percentile(lat, 99.9) * 1000, 2)} us`,
    );
  }
  await admission.close();
  return rows;
}

const median = (runs: RunResult[]): RunResult => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)]!;

async function main() {
  const admissionRows = await inProcess();
  process.stdout.write(`\nAdmission alone, in-process (acquire + release, sequential)\n${admissionRows.join('\n')}\n`);
  const upstream = await startUpstream();
  if (!existsSync(join('out', 'main', 'serve.js'))) throw new Error('build first: npm run build');
  const sy = await startSwitchyard();
  try {
    for (const [name, extra] of Object.entries(VARIANTS)) {
      await sy.api('POST', '/api/providers', { name: `queue-${name}`, kind: 'openai-compatible', provider: `q${name}`, baseUrl: `${upstream.url}/v1`, ...extra });
    }
    const views = await sy.api<{ connectionId: string; protected: boolean }[]>('GET', '/api/rate-limits');
    if (views.filter((v) => v.protected).length !== 3) throw new Error(`expected 3 protected connections: ${JSON.stringify(views)}`);

    const body = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] });
    const proxied = (v: Variant | null, c: number, n: number) =>
      v === null
        ? load(upstream.url, '/v1/chat/completions', body('bench-delay-0'), { authorization: 'Bearer upstream' }, c, n)
        : load(sy.proxyUrl, '/v1/chat/completions', body(`q${v}/bench-delay-0`), { authorization: `Bearer ${sy.clientKey}` }, c, n);

    const rows: string[] = [];
    const ROUNDS = 3;
    for (const [c, n] of [
      [1, 2_000],
      [32, 8_000],
    ] as const) {
      const order: (Variant | null)[] = [null, 'off', 'on', 'gates', 'paced'];
      for (const v of order) await proxied(v, c, Math.min(n, 300)); // warm-up
      const runs = new Map<Variant | null, RunResult[]>(order.map((v) => [v, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const v of order) runs.get(v)!.push(await proxied(v, c, v === 'paced' ? (c > 1 ? 1_500 : 500) : n));
      }
      const direct = median(runs.get(null)!);
      const off = median(runs.get('off')!);
      rows.push(`c=${c}, upstream answers at once (median of ${ROUNDS} rounds)`);
      rows.push(`  ${'direct'.padEnd(6)} ${f(direct.rps, 0).padStart(6)} req/s  p50 ${f(direct.p50)}  p99 ${f(direct.p99)}`);
      for (const v of ['off', 'on', 'gates', 'paced'] as const) {
        const m = median(runs.get(v)!);
        rows.push(
          `  ${v.padEnd(6)} ${f(m.rps, 0).padStart(6)} req/s  p50 ${f(m.p50)}  p99 ${f(m.p99)}` +
            (v === 'off'
              ? `  | vs direct: ${f(m.rps / direct.rps)}x req/s, added p99 ${f(m.p99 - direct.p99)} ms`
              : `  | vs off: ${f(m.rps / off.rps)}x req/s, p50 ${f(m.p50 / off.p50)}x, p99 ${f(m.p99 / off.p99)}x, added p99 ${f(m.p99 - off.p99)} ms; vs direct added p99 ${f(m.p99 - direct.p99)} ms`) +
            (m.errors ? `  (errors ${m.errors})` : ''),
        );
      }
    }
    process.stdout.write(`\nThrough the proxy (${process.version}, times in ms)\n${rows.join('\n')}\n`);
  } finally {
    sy.stop();
    upstream.stop();
  }
}

void main();
