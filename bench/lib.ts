// Bench helpers: child processes for the upstream and the headless shell, a load generator over
// undici, and percentile maths.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { ENGINE_V8_FLAGS, engineEnv } from '../scripts/runtimeTuning.mjs';

export async function spawnJsonLine<T>(cmd: string, args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; info: T }> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const err: string[] = [];
  child.stderr!.on('data', (d: Buffer) => err.push(d.toString()));
  const info = await new Promise<T>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        // ignore non-JSON lines
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${err.join('')}`)));
  });
  return { child, info };
}

export async function startUpstream() {
  const { child, info } = await spawnJsonLine<{ port: number }>(process.execPath, ['--import', 'tsx', 'bench/upstream.ts']);
  return { url: `http://127.0.0.1:${info.port}`, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

/** The thinnest pass-through proxy, in its own process: the floor any proxy pays for the hop. */
export async function startMinimalProxy(upstreamUrl: string) {
  const { child, info } = await spawnJsonLine<{ port: number }>(process.execPath, ['--import', 'tsx', 'bench/minimalProxy.ts', upstreamUrl]);
  return { url: `http://127.0.0.1:${info.port}`, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

/** The least work a gateway with Switchyard's promises does, flat, in its own process (requiredWork.ts). */
export async function startRequiredWork(upstreamUrl: string, clientKey: string) {
  const { child, info } = await spawnJsonLine<{ port: number }>(process.execPath, ['--import', 'tsx', 'bench/requiredWork.ts', upstreamUrl, clientKey]);
  return { url: `http://127.0.0.1:${info.port}`, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

/**
 * The headless shell in its own process; `nodeArgs` go before the script (e.g. `--cpu-prof` to
 * profile it); `serveJs` runs another build (e.g. a baseline worktree's) for before/after figures.
 */
export async function startSwitchyard(env: Record<string, string> = {}, nodeArgs: string[] = [], serveJs = 'out/main/serve.js') {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  // Started as `npm run serve` starts it (scripts/runtimeTuning.mjs), so the bench measures what users run.
  const { child, info } = await spawnJsonLine<{ managementPort: number; proxyPort: number }>(
    process.execPath,
    [...ENGINE_V8_FLAGS, ...nodeArgs, serveJs, '--port', '0', '--proxy-port', '0', '--data-dir', dataDir, '--ready-json'],
    { ...engineEnv(process.env), SWITCHYARD_LOG_LEVEL: 'warn', ...env },
  );
  const token = readFileSync(join(dataDir, 'management-token'), 'utf8').trim();
  const mgmt = `http://127.0.0.1:${info.managementPort}`;
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${mgmt}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const keys = await api<{ id: string }[]>('GET', '/api/keys');
  const clientKey = (await api<{ secret: string }>('POST', `/api/keys/${keys[0]!.id}/reveal`)).secret;
  return {
    proxyUrl: `http://127.0.0.1:${info.proxyPort}`,
    clientKey,
    api,
    /** The Switchyard process (for its CPU time). */
    pid: child.pid!,
    /** Its standard output (what V8's tracing flags print, for bench/gc.ts). */
    stdout: child.stdout!,
    stop: () => {
      child.kill('SIGTERM');
      setTimeout(() => rmSync(dataDir, { recursive: true, force: true }), 500).unref();
    },
  };
}

export interface RunResult {
  count: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** Sends `total` non-streaming requests with `concurrency` workers; returns throughput and latency. */
export async function load(baseUrl: string, path: string, body: string, headers: Record<string, string>, concurrency: number, total: number): Promise<RunResult> {
  const pool = new Pool(baseUrl, { connections: concurrency, pipelining: 1 });
  const lat: number[] = [];
  let errors = 0;
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const t0 = performance.now();
        try {
          const r = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
          await r.body.dump();
          if (r.statusCode !== 200) errors++;
        } catch {
          errors++;
        }
        lat.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  await pool.close();
  lat.sort((a, b) => a - b);
  return { count: lat.length, seconds, rps: lat.length / seconds, p50: percentile(lat, 50), p99: percentile(lat, 99), errors };
}

/** Streams `total` responses one after another; returns time to first byte and total time. */
export async function streamRuns(baseUrl: string, path: string, body: string, headers: Record<string, string>, total: number) {
  const pool = new Pool(baseUrl, { connections: 1 });
  const ttfb: number[] = [];
  const full: number[] = [];
  for (let i = 0; i < total; i++) {
    const t0 = performance.now();
    const r = await pool.request({ path, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    let first = true;
    for await (const _c of r.body) {
      if (first) {
        ttfb.push(performance.now() - t0);
        first = false;
      }
    }
    full.push(performance.now() - t0);
  }
  await pool.close();
  ttfb.sort((a, b) => a - b);
  full.sort((a, b) => a - b);
  return { ttfbP50: percentile(ttfb, 50), ttfbP99: percentile(ttfb, 99), totalP50: percentile(full, 50), totalP99: percentile(full, 99) };
}

/**
 * CPU time a process has used so far, in ms, from /proc (Linux): the nanosecond run time of each of
 * its threads (schedstat), else user + system ticks (10 ms steps, too coarse for one block).
 */
export function cpuTimeMs(pid: number): number {
  const threads = threadCpuMs(pid);
  if (threads) return threads.main + threads.others;
  // No schedstat: fall back to the tick counts.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at field 3; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / CLOCK_TICKS;
}

/**
 * The same, split: the main thread's (the engine's event loop; its thread id is the process id) and
 * every other thread's (the log worker, V8's helper threads for garbage collection and compiling,
 * libuv's pool), in ms, from schedstat. Null where /proc has no schedstat.
 */
export function threadCpuMs(pid: number): { main: number; others: number } | null {
  try {
    let main = 0;
    let others = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      if (tid === String(pid)) main += ns;
      else others += ns;
    }
    return main > 0 ? { main: main / 1e6, others: others / 1e6 } : null;
  } catch {
    // a thread ended between the listing and its read, or no schedstat
    return null;
  }
}

/** USER_HZ: 100 on every Linux build Node ships for. */
const CLOCK_TICKS = 100;

export interface StreamCase {
  name: string;
  path: string;
  body: string;
  headers: Record<string, string>;
}

export interface StreamCaseResult {
  ttfbP50: number;
  ttfbP99: number;
  totalP50: number;
  /** The proxy's CPU time per request (ms): the median block, so one block that met a background job (a log prune) does not decide it. */
  cpuPerRequest: number;
}

/**
 * Streams the cases against one proxy in alternating blocks of `block` requests for `rounds`
 * rounds (so machine load drifts over both alike), measuring time to first byte, total time and
 * the proxy process's CPU time per block.
 */
export async function compareStreams(baseUrl: string, pid: number, cases: StreamCase[], rounds: number, block: number): Promise<Record<string, StreamCaseResult>> {
  const pool = new Pool(baseUrl, { connections: 1 });
  const acc = new Map(cases.map((c) => [c.name, { ttfb: [] as number[], full: [] as number[], cpu: [] as number[] }]));
  const one = async (c: StreamCase) => {
    const t0 = performance.now();
    const r = await pool.request({ path: c.path, method: 'POST', headers: { 'content-type': 'application/json', ...c.headers }, body: c.body });
    let ttfb = -1;
    for await (const _chunk of r.body) if (ttfb < 0) ttfb = performance.now() - t0;
    if (r.statusCode !== 200) throw new Error(`${c.name}: status ${r.statusCode}`);
    return { ttfb, full: performance.now() - t0 };
  };
  for (const c of cases) for (let i = 0; i < 20; i++) await one(c); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const c of round % 2 ? [...cases].reverse() : cases) {
      const a = acc.get(c.name)!;
      const cpu0 = cpuTimeMs(pid);
      for (let i = 0; i < block; i++) {
        const r = await one(c);
        a.ttfb.push(r.ttfb);
        a.full.push(r.full);
      }
      a.cpu.push((cpuTimeMs(pid) - cpu0) / block);
    }
  }
  await pool.close();
  const out: Record<string, StreamCaseResult> = {};
  for (const [name, a] of acc) {
    a.ttfb.sort((x, y) => x - y);
    a.full.sort((x, y) => x - y);
    a.cpu.sort((x, y) => x - y);
    out[name] = { ttfbP50: percentile(a.ttfb, 50), ttfbP99: percentile(a.ttfb, 99), totalP50: percentile(a.full, 50), cpuPerRequest: percentile(a.cpu, 50) };
  }
  return out;
}

const OUTPUT = Buffer.from('"content":"t');

export interface FirstOutputResult {
  firstP50: number;
  outputP50: number;
  outputP99: number;
}

/**
 * Time to the first model output (the first byte of a chunk carrying text: what hold-back waits
 * for) and to the first byte at all, for each target, in alternating blocks of `block` requests
 * over `rounds` rounds so machine load drifts over all of them alike.
 */
export async function compareFirstOutput(
  targets: { name: string; url: string; headers: Record<string, string> }[],
  path: string,
  body: string,
  rounds: number,
  block: number,
): Promise<Record<string, FirstOutputResult>> {
  const pools = new Map(targets.map((t) => [t.name, new Pool(t.url, { connections: 1 })]));
  const acc = new Map(targets.map((t) => [t.name, { first: [] as number[], output: [] as number[] }]));
  const one = async (t: (typeof targets)[number]) => {
    const t0 = performance.now();
    const r = await pools.get(t.name)!.request({ path, method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body });
    let first = -1;
    let output = -1;
    let tail = Buffer.alloc(0);
    for await (const c of r.body) {
      const now = performance.now();
      if (first < 0) first = now - t0;
      if (output < 0) {
        const b = Buffer.concat([tail, c as Buffer]);
        if (b.includes(OUTPUT)) output = now - t0;
        else tail = b.subarray(Math.max(0, b.length - OUTPUT.length));
      }
    }
    return { first, output };
  };
  for (const t of targets) for (let i = 0; i < 20; i++) await one(t); // warm-up
  for (let round = 0; round < rounds; round++) {
    for (const t of round % 2 ? [...targets].reverse() : targets) {
      const a = acc.get(t.name)!;
      for (let i = 0; i < block; i++) {
        const r = await one(t);
        a.first.push(r.first);
        a.output.push(r.output);
      }
    }
  }
  await Promise.all([...pools.values()].map((p) => p.close()));
  const out: Record<string, FirstOutputResult> = {};
  for (const [name, a] of acc) {
    a.first.sort((x, y) => x - y);
    a.output.sort((x, y) => x - y);
    out[name] = { firstP50: percentile(a.first, 50), outputP50: percentile(a.output, 50), outputP99: percentile(a.output, 99) };
  }
  return out;
}

/** An agent-sized conversation of about `kib` KiB (accents, CJK and quotes included): bench/lean.ts, bench/gc.ts. */
export function conversation(kib: number): { role: string; content: string }[] {
  const messages: { role: string; content: string }[] = [];
  for (let i = 0, size = 0; size < kib * 1024; i++) {
    const content = `Step ${i}: read "src/módulo-${i}.ts" and its tests — 日本語 — then report {"ok": true}.\n`.repeat(8);
    messages.push({ role: i % 2 ? 'assistant' : 'user', content });
    size += Buffer.byteLength(content);
  }
  return messages;
}

/**
 * A request of about `kib` KiB shaped as Claude Code sends one (bench/lean.ts): model first; a
 * system prompt and tool descriptions with a few non-ASCII characters; a tool whose schema has a
 * `model` parameter, so the raw key occurs more than once; then a conversation of tool results,
 * mostly ASCII code. (A captured Claude Code request has the same traits: 294 non-ASCII bytes in
 * 48 KB, the first at byte 591, and `"model"` in its Task tool's schema.)
 */
export function agentRequest(model: string, kib: number): string {
  const describe = (what: string) => `${what} — read the repository's files → report results… Use ≤ 4 lines; mark done items with ✓. 🤖\n`.repeat(20);
  const tools = ['Read', 'Edit', 'Bash', 'Grep', 'Glob', 'Task'].map((name) => ({
    name,
    description: describe(name),
    input_schema: { type: 'object', properties: name === 'Task' ? { prompt: { type: 'string' }, model: { type: 'string', enum: ['sonnet', 'opus', 'haiku'] } } : { file_path: { type: 'string' }, pattern: { type: 'string' } } },
  }));
  const request = { model, max_tokens: 1024, system: [{ type: 'text', text: describe('You are an agent for software engineering') }], tools, metadata: { user_id: 'user_bench' }, messages: [] as unknown[] };
  request.messages.push({ role: 'user', content: [{ type: 'text', text: 'Summarise src/ and fix the failing test.' }] });
  for (let i = 0; Buffer.byteLength(JSON.stringify(request)) < kib * 1024; i++) {
    request.messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: `/repo/src/module${i}.ts` } }] });
    request.messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `export function step${i}(input: string): { ok: boolean } {\n  return { ok: input.length > ${i} }; // "model" ${i}\n}\n`.repeat(40) }] });
  }
  return JSON.stringify(request);
}

/**
 * `turns` requests of one agent session as agentRequest builds them (bench/lean.ts): each one turn
 * longer than the last (a text answer and the next instruction, about 1.4 KB, appended to its
 * messages), as an agent sends its whole conversation again on every turn. They start below `kib`
 * and end above it by as much, so that on average they weigh what the other agent-sized rows do.
 */
export function agentTurns(model: string, kib: number, turns: number): string[] {
  const first = JSON.parse(agentRequest(model, Math.max(16, Math.round(kib - (turns * 1.4) / 2)))) as { messages: unknown[] };
  const out: string[] = [];
  const messages = [...first.messages];
  for (let t = 0; t < turns; t++) {
    out.push(JSON.stringify({ ...first, messages }));
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `Turn ${t}: the test passes now — next, "src/module${t}.ts". ✓\n`.repeat(12) }] });
    messages.push({ role: 'user', content: [{ type: 'text', text: `Go on with step ${t + 1}; keep "model" as it is.\n`.repeat(12) }] });
  }
  return out;
}

/** A numeric setting from the environment (the benches' knobs): the fallback when unset; exits with a message when not a number of at least `min`. */
export function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) {
    process.stderr.write(`${name} must be a number of at least ${min} (got "${raw}")\n`);
    process.exit(2);
  }
  return n;
}

/** A Markdown table, the first two columns left-aligned and the rest right-aligned (figures). */
export function table(head: string[], rows: string[][]): string {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (i < 2 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join(' | ')} |`;
  return [line(head), `|${w.map((x) => '-'.repeat(x + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
