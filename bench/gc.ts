// `npm run bench:gc` (issue 25): what V8's garbage collector costs Switchyard per request, for the
// issue's chat path (a one-line body) and two agent-sized ones (GC_LARGE_KIB, 100 KiB: a chat
// conversation, and a Claude Code-shaped request on the native Anthropic path), at c=1 and c=32,
// non-stream, against the 0 ms fake upstream (bench/upstream.ts).
// Each cell gets a fresh Switchyard started as users run it (scripts/runtimeTuning.mjs) plus
// `--trace-gc-nvp`, which prints one line per collection with its pause and the bytes allocated
// since the last; GC_WARMUP_SECONDS of load, then GC_SECONDS measured. Per request: bytes allocated,
// young-generation collections (scavenges) and full ones (mark-compact), and the time the thread
// was paused for them. Work V8 does on its helper threads (concurrent marking and sweeping, the
// parallel part of a scavenge) is not in the pause; the process's CPU per request is beside it,
// split into the engine's thread and the others (the log worker, V8's helpers, libuv's pool): on
// agent-sized bodies the helpers' marking is a large share of the whole.
// The two isolates are told apart by how much they allocate: the engine's thread allocates several
// times what the log worker does.
// Quick run: GC_SECONDS=2 GC_WARMUP_SECONDS=1 npx tsx bench/gc.ts
import autocannon from 'autocannon';
import { agentRequest, conversation, cpuTimeMs, envNumber, startSwitchyard, startUpstream, table, threadCpuMs } from './lib';

const SECONDS = envNumber('GC_SECONDS', 8, 1);
const WARMUP_SECONDS = envNumber('GC_WARMUP_SECONDS', 6, 0);
const LARGE_KIB = Math.round(envNumber('GC_LARGE_KIB', 100, 1));

interface IsolateGc {
  allocated: number;
  scavenges: number;
  scavengeMs: number;
  fulls: number;
  fullMs: number;
}

/** Sums `--trace-gc-nvp` lines per isolate (`[pid:0xaddress] ... pause=1.2 ... gc=s ... allocated=123`). */
function sumGcLines(lines: readonly string[]): Map<string, IsolateGc> {
  const out = new Map<string, IsolateGc>();
  for (const line of lines) {
    const isolate = /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1];
    const kind = / gc=(\w+)/.exec(line)?.[1];
    const pause = Number(/ pause=([\d.]+)/.exec(line)?.[1]);
    if (!isolate || !kind || !Number.isFinite(pause)) continue;
    let s = out.get(isolate);
    if (!s) out.set(isolate, (s = { allocated: 0, scavenges: 0, scavengeMs: 0, fulls: 0, fullMs: 0 }));
    s.allocated += Number(/ allocated=(\d+)/.exec(line)?.[1] ?? 0);
    if (kind === 's') {
      s.scavenges++;
      s.scavengeMs += pause;
    } else if (kind === 'mc' || kind === 'mmc') {
      s.fulls++;
      s.fullMs += pause;
    }
  }
  return out;
}

interface Row {
  path: string;
  concurrency: number;
  rps: number;
  cpuUsPerReq: number;
  /** The engine's thread (the event loop) and all the others (log worker, V8's helpers, libuv), µs per request. */
  mainUsPerReq: number;
  othersUsPerReq: number;
  engine: IsolateGc | null;
  worker: IsolateGc | null;
  requests: number;
  errors: number;
}

interface Path {
  label: string;
  body: string;
  /** Chat through an OpenAI-compatible connection, or Messages through an Anthropic one (native). */
  protocol: 'chat' | 'messages';
}

async function cell(upstreamUrl: string, path: Path, concurrency: number): Promise<Row> {
  const sy = await startSwitchyard({}, ['--trace-gc-nvp']);
  const chat = path.protocol === 'chat';
  try {
    await sy.api(
      'POST',
      '/api/providers',
      chat
        ? { name: 'bench', kind: 'openai-compatible', provider: 'bench', baseUrl: `${upstreamUrl}/v1` }
        : { name: 'bench', kind: 'anthropic', provider: 'bench', baseUrl: upstreamUrl, secret: 'sk-ant-bench-aaaaaaaaaaaa' },
    );
    const opts = {
      url: `${sy.proxyUrl}${chat ? '/v1/chat/completions' : '/v1/messages'}`,
      method: 'POST' as const,
      headers: chat
        ? { 'content-type': 'application/json', authorization: `Bearer ${sy.clientKey}` }
        : { 'content-type': 'application/json', 'x-api-key': sy.clientKey, 'anthropic-version': '2023-06-01' },
      body: path.body,
      connections: concurrency,
      pipelining: 1,
    };
    if (WARMUP_SECONDS > 0) await autocannon({ ...opts, duration: WARMUP_SECONDS });
    let text = '';
    const onData = (d: Buffer) => (text += d.toString('utf8'));
    sy.stdout.on('data', onData);
    const cpu0 = cpuTimeMs(sy.pid);
    const threads0 = threadCpuMs(sy.pid);
    const r = await autocannon({ ...opts, duration: SECONDS });
    const cpu1 = cpuTimeMs(sy.pid);
    const threads1 = threadCpuMs(sy.pid);
    sy.stdout.off('data', onData);
    const isolates = [...sumGcLines(text.split('\n')).values()].sort((a, b) => b.allocated - a.allocated);
    const n = r.requests.total;
    return {
      path: path.label,
      concurrency,
      rps: n / r.duration,
      cpuUsPerReq: n ? ((cpu1 - cpu0) * 1000) / n : NaN,
      mainUsPerReq: n && threads0 && threads1 ? ((threads1.main - threads0.main) * 1000) / n : NaN,
      othersUsPerReq: n && threads0 && threads1 ? ((threads1.others - threads0.others) * 1000) / n : NaN,
      engine: isolates[0] ?? null,
      worker: isolates[1] ?? null,
      requests: n,
      errors: r.errors + r.timeouts + r.non2xx,
    };
  } finally {
    sy.stop();
  }
}

const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');


async function main() {
  const up = await startUpstream();
  const small = JSON.stringify({ model: 'bench/bench-delay-0', messages: [{ role: 'user', content: 'hello' }] });
  const large = JSON.stringify({ model: 'bench/bench-delay-0', messages: conversation(LARGE_KIB) });
  const paths: Path[] = [
    { label: 'OpenAI chat', body: small, protocol: 'chat' },
    { label: `OpenAI chat, ${LARGE_KIB} KiB`, body: large, protocol: 'chat' },
    // As coding agents send (bench/lib.ts agentRequest): tools, a system prompt, a long conversation.
    { label: `Claude Code-shaped, ${LARGE_KIB} KiB, Anthropic native`, body: agentRequest('bench/bench-delay-0', LARGE_KIB), protocol: 'messages' },
  ];
  const rows: Row[] = [];
  try {
    for (const path of paths) {
      for (const c of [1, 32]) {
        process.stderr.write(`  ${path.label}, c=${c}\n`);
        rows.push(await cell(up.url, path, c));
      }
    }
  } finally {
    up.stop();
  }
  const per = (x: number, r: Row) => (r.requests ? x / r.requests : NaN);
  console.log(`\nGC per request (issue 25): non-stream, upstream 0 ms, ${SECONDS} s per cell after ${WARMUP_SECONDS} s of warm-up, a fresh Switchyard per cell`);
  console.log('pauses are the thread\'s own; V8\'s helper threads (concurrent marking, parallel scavenging) are in the process CPU only, and in "other threads" with the log worker');
  console.log(
    table(
      ['path', 'conc', 'req/s', 'process CPU µs/req', 'engine thread / other threads µs/req', 'allocated KB/req', 'scavenges per 1k req', 'scavenge pause µs/req', 'full GCs per 1k req', 'full GC pause µs/req', 'log worker: KB/req, pause µs/req'],
      rows.map((r) => {
        const e = r.engine;
        const w = r.worker;
        return [
          r.path,
          String(r.concurrency),
          f(r.rps, 0),
          f(r.cpuUsPerReq),
          `${f(r.mainUsPerReq)} / ${f(r.othersUsPerReq)}`,
          e ? f(per(e.allocated, r) / 1024) : '-',
          e ? f(per(e.scavenges * 1000, r)) : '-',
          e ? f(per(e.scavengeMs * 1000, r)) : '-',
          e ? f(per(e.fulls * 1000, r)) : '-',
          e ? f(per(e.fullMs * 1000, r)) : '-',
          w ? `${f(per(w.allocated, r) / 1024)}, ${f(per((w.scavengeMs + w.fullMs) * 1000, r))}` : 'not started',
        ];
      }),
    ),
  );
  const bad = rows.filter((r) => r.errors > 0);
  if (bad.length) console.log(`ERRORS (figures not valid): ${bad.map((r) => `${r.path} c=${r.concurrency}: ${r.errors}`).join('; ')}`);
  process.exit(0);
}

await main();
