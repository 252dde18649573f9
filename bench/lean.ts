// `npm run bench:lean` (also part of `npm run bench`): issue 25's table in one run. Non-stream
// requests against an upstream that answers at once (bench/upstream.ts, 0 ms), for three paths:
//   OpenAI chat (native), Anthropic messages (native, on an Anthropic connection) and Anthropic ->
//   Chat (translated: an Anthropic client on the Chat upstream),
// each at c=1 and c=32, sent by autocannon straight to the upstream ("direct"), through the bare
// hop (bench/minimalProxy.ts: a keep-alive pass-through and nothing else, the floor for a Node
// gateway) and through Switchyard. Every cell runs once per round for LEAN_SECONDS, all cells
// interleaved (the order reversed on odd rounds, so drift on a shared machine hits all alike), for
// LEAN_ROUNDS rounds; the figure is the median round. The translated path is set against the bare
// hop of the protocol its client speaks (Anthropic messages): a bare hop cannot translate.
// Beside them, "required work" (bench/requiredWork.ts): the least a gateway keeping Switchyard's
// promises does (client key, body parse, model rewrite, whole answer parsed, a journal line before
// the answer), written flat; its ratio to the bare hop is what those promises cost by themselves.
// Memory: RSS (VmRSS) of the Switchyard process tree (the engine process with its worker threads,
// plus child processes if any) idle after start (LEAN_SETTLE_SECONDS, 10 s, after start and set-up),
// its peak during the load (sampled every 100 ms,
// and VmHWM reset before the load) and LEAN_AFTER_SECONDS after the load; the bare hop's beside it.
// Targets (issue 25): >= 0.9x bare hop at c=1, >= 0.8x at c=32; RSS peak <= 150 MiB, 60 s after
// <= 110 MiB, idle <= 80 MiB. The figures also go to LEAN_JSON (default
// /tmp/switchyard-lean-bench.json) and, as one JSON object, to stdout's last line.
// After the memory figures, beyond the issue's table: agent-sized bodies (LEAN_LARGE_KIB, 100 KiB;
// 0 leaves them out), a chat conversation and a Claude Code-shaped request on the native Anthropic
// path, through the same four, at c=1 and 32; and that request streamed, as Claude Code sends it
// (direct, bare hop and Switchyard: the flat reference does not stream); and one agent session's
// requests in turn, each a turn longer than the last (bench/lib.ts agentTurns), where the rows before
// repeat one body (Switchyard remembers what it checked of a client's last bodies, so a repeated
// body is its best case; a real turn adds a little). The memory figures are
// taken again under them (peak, and LEAN_AFTER_SECONDS after), against the same targets: agents'
// bodies are what a user's Switchyard carries.
// Quick run: LEAN_ROUNDS=1 LEAN_SECONDS=2 LEAN_AFTER_SECONDS=5 npx tsx bench/lean.ts
import autocannon from 'autocannon';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { agentRequest, agentTurns, conversation, envNumber, startMinimalProxy, startRequiredWork, startSwitchyard, startUpstream, table } from './lib';

const ROUNDS = Math.round(envNumber('LEAN_ROUNDS', 3, 1));
const SECONDS = envNumber('LEAN_SECONDS', 8, 1);
const WARMUP_SECONDS = envNumber('LEAN_WARMUP_SECONDS', 1, 0);
const SETTLE_SECONDS = envNumber('LEAN_SETTLE_SECONDS', 10, 0);
const AFTER_SECONDS = envNumber('LEAN_AFTER_SECONDS', 60, 0);
const JSON_FILE = process.env.LEAN_JSON || '/tmp/switchyard-lean-bench.json';
/** The agent-sized body of the extra table, in KiB (0: no extra table). */
const LARGE_KIB = Math.round(envNumber('LEAN_LARGE_KIB', 100, 0));
const CONCURRENCY = [1, 32] as const;
/** Text deltas in the streamed agent row's answer. */
const STREAM_EVENTS = 50;
/** The agent session's length in the turns row: its requests grow by a turn each, then start over. */
const TURNS = 40;
const SAMPLE_MS = 100;

const TARGET = { ratio: { 1: 0.9, 32: 0.8 } as Record<number, number>, peakMiB: 150, afterMiB: 110, idleMiB: 80 };

// ---- memory, from /proc (Linux) ----

/** VmRSS and VmHWM of one process, in KiB (0 when it is gone). */
function status(pid: number): { rss: number; hwm: number } {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0);
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return { rss: 0, hwm: 0 };
  }
}

/** The process and its descendants (threads are not processes: they share the process's RSS). */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    const p = out[i]!;
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        for (const c of readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8').split(' ')) if (c.trim()) out.push(Number(c));
      } catch {
        // the thread ended, or the kernel has no children file: then the tree is the process alone
      }
    }
  }
  return out;
}

const mib = (kib: number) => kib / 1024;

/** The tree's RSS now, the sum of its VmHWM, and its processes. */
function treeMemory(pid: number) {
  const pids = tree(pid);
  let rss = 0;
  let hwm = 0;
  for (const p of pids) {
    const s = status(p);
    rss += s.rss;
    hwm += s.hwm;
  }
  return { rssMiB: mib(rss), hwmMiB: mib(hwm), pids };
}

/** Resets VmHWM to the current RSS (clear_refs 5), so the peak is the load's, not start-up's. */
function resetPeak(pid: number): boolean {
  let ok = true;
  for (const p of tree(pid)) {
    try {
      writeFileSync(`/proc/${p}/clear_refs`, '5');
    } catch {
      ok = false;
    }
  }
  return ok;
}

/** Samples each tree's RSS every SAMPLE_MS and keeps the highest. */
function sampler(pids: Record<string, number>) {
  const max: Record<string, number> = Object.fromEntries(Object.keys(pids).map((k) => [k, 0]));
  const tick = () => {
    for (const [k, pid] of Object.entries(pids)) max[k] = Math.max(max[k]!, treeMemory(pid).rssMiB);
  };
  tick();
  const timer = setInterval(tick, SAMPLE_MS);
  return {
    stop: () => {
      clearInterval(timer);
      tick();
      return max;
    },
  };
}

type Trees = { switchyard: number; bare: number };

/**
 * The memory figures of one load: VmHWM reset before it, the RSS sampled during it, the RSS right
 * at its end and AFTER_SECONDS after it, for each tree.
 */
async function memoryWindow(pids: Trees, load: () => Promise<void>) {
  const peakReset = resetPeak(pids.switchyard) && resetPeak(pids.bare);
  const samples = sampler(pids);
  await load();
  const sampled = samples.stop();
  const hwm = { switchyard: treeMemory(pids.switchyard).hwmMiB, bare: treeMemory(pids.bare).hwmMiB };
  const peak = { switchyard: Math.max(sampled.switchyard!, peakReset ? hwm.switchyard : 0), bare: Math.max(sampled.bare!, peakReset ? hwm.bare : 0) };
  const endOfLoad = { switchyard: treeMemory(pids.switchyard), bare: treeMemory(pids.bare) };
  if (AFTER_SECONDS > 0) process.stderr.write(`  waiting ${AFTER_SECONDS} s after the load\n`);
  await new Promise((r) => setTimeout(r, AFTER_SECONDS * 1000));
  const after = { switchyard: treeMemory(pids.switchyard), bare: treeMemory(pids.bare) };
  return { peakReset, sampled, hwm, peak, endOfLoad, after };
}

// ---- load ----

interface Cell {
  /** e.g. "chat direct" */
  key: string;
  url: string;
  path: string;
  body: string;
  /** Bodies sent in turn, one per request, cycling (instead of `body` every time; `body` is the first). */
  bodies?: string[];
  headers: Record<string, string>;
  concurrency: number;
}

interface Shot {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function shoot(c: Cell, seconds: number): Promise<Shot> {
  const bodies = c.bodies;
  let next = 0;
  const r = await autocannon({
    url: `${c.url}${c.path}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...c.headers },
    body: c.body,
    ...(bodies ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: bodies[next++ % bodies.length] }) }] } : {}),
    connections: c.concurrency,
    pipelining: 1,
    duration: seconds,
  });
  return { rps: r.requests.total / r.duration, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
}

/** One request per cell before the load: a wrong setup says so instead of measuring errors. */
async function preflight(c: Cell) {
  const res = await fetch(`${c.url}${c.path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...c.headers }, body: c.body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${c.key}: status ${res.status}: ${text.slice(0, 500)}`);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

// ---- output ----

const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');


async function main() {
  if (!existsSync('out/main/serve.js')) {
    process.stderr.write('Build first: npm run build\n');
    process.exit(1);
  }
  const upstream = await startUpstream();
  const bare = await startMinimalProxy(upstream.url);
  const sy = await startSwitchyard();
  const required = await startRequiredWork(upstream.url, 'bench-client-key');
  try {
    await sy.api('POST', '/api/providers', { name: 'bench', kind: 'openai-compatible', provider: 'bench', baseUrl: `${upstream.url}/v1` });
    await sy.api('POST', '/api/providers', { name: 'anth', kind: 'anthropic', provider: 'anth', baseUrl: upstream.url, secret: 'sk-ant-bench-aaaaaaaaaaaa' });

    const chat = (model: string) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] });
    const messages = (model: string) => JSON.stringify({ model, max_tokens: 1024, messages: [{ role: 'user', content: 'hello' }] });
    const anthHeaders = { 'anthropic-version': '2023-06-01' };
    const syAuth = { authorization: `Bearer ${sy.clientKey}` };
    const cells: Cell[] = [];
    for (const concurrency of CONCURRENCY) {
      const add = (key: string, url: string, path: string, body: string, headers: Record<string, string>) => cells.push({ key: `${key} c=${concurrency}`, url, path, body, headers, concurrency });
      add('chat direct', upstream.url, '/v1/chat/completions', chat('bench-delay-0'), { authorization: 'Bearer upstream' });
      add('chat bare', bare.url, '/v1/chat/completions', chat('bench-delay-0'), {});
      add('chat switchyard', sy.proxyUrl, '/v1/chat/completions', chat('bench/bench-delay-0'), syAuth);
      add('chat required', required.url, '/v1/chat/completions', chat('bench/bench-delay-0'), { authorization: 'Bearer bench-client-key' });
      add('messages direct', upstream.url, '/v1/messages', messages('bench-delay-0'), { 'x-api-key': 'upstream', ...anthHeaders });
      add('messages bare', bare.url, '/v1/messages', messages('bench-delay-0'), anthHeaders);
      add('messages switchyard', sy.proxyUrl, '/v1/messages', messages('anth/bench-delay-0'), { ...syAuth, ...anthHeaders });
      add('messages required', required.url, '/v1/messages', messages('anth/bench-delay-0'), { 'x-api-key': 'bench-client-key', ...anthHeaders });
      add('translated switchyard', sy.proxyUrl, '/v1/messages', messages('bench/bench-delay-0'), { ...syAuth, ...anthHeaders });
    }
    for (const c of cells) await preflight(c);

    // Idle: after start and setup, once the start-up work has settled.
    await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
    const idle = { switchyard: treeMemory(sy.pid), bare: treeMemory(bare.pid) };
    const trees = { switchyard: sy.pid, bare: bare.pid };

    const total = cells.length * (ROUNDS * SECONDS + WARMUP_SECONDS) + AFTER_SECONDS;
    process.stderr.write(`lean bench: ${cells.length} cells x ${ROUNDS} rounds of ${SECONDS} s (+${WARMUP_SECONDS} s warm-up each), then ${AFTER_SECONDS} s idle: about ${Math.ceil(total / 60)} min\n`);
    const shots = new Map<string, Shot[]>(cells.map((c) => [c.key, []]));
    const { peakReset, sampled, hwm, peak, endOfLoad, after } = await memoryWindow(trees, async () => {
      if (WARMUP_SECONDS > 0) for (const c of cells) await shoot(c, WARMUP_SECONDS);
      for (let round = 0; round < ROUNDS; round++) {
        for (const c of round % 2 ? [...cells].reverse() : cells) shots.get(c.key)!.push(await shoot(c, SECONDS));
        process.stderr.write(`  round ${round + 1}/${ROUNDS} done\n`);
      }
    });

    // Beyond the issue's table, after the memory figures (which it must not move): agent-sized
    // bodies, as coding agents send (tens to hundreds of KiB): a chat conversation dense in
    // non-ASCII text, and a request shaped as Claude Code's on the native Anthropic path.
    const large: Cell[] = [];
    let agentMemory: { peak: Trees; endOfLoad: Trees; after: Trees } | null = null;
    if (LARGE_KIB > 0) {
      const big = (model: string) => JSON.stringify({ model, messages: conversation(LARGE_KIB) });
      const agent = (model: string) => agentRequest(model, LARGE_KIB);
      // As Claude Code sends it: streamed (the answer is STREAM_EVENTS text deltas in Anthropic's events).
      const streamed = (model: string) => agentRequest(model, LARGE_KIB).replace('"max_tokens":1024', '"max_tokens":1024,"stream":true');
      for (const concurrency of CONCURRENCY) {
        const add = (key: string, url: string, path: string, body: string, headers: Record<string, string>) => large.push({ key: `${key} c=${concurrency}`, url, path, body, headers, concurrency });
        add('large direct', upstream.url, '/v1/chat/completions', big('bench-delay-0'), { authorization: 'Bearer upstream' });
        add('large bare', bare.url, '/v1/chat/completions', big('bench-delay-0'), {});
        add('large switchyard', sy.proxyUrl, '/v1/chat/completions', big('bench/bench-delay-0'), syAuth);
        add('large required', required.url, '/v1/chat/completions', big('bench/bench-delay-0'), { authorization: 'Bearer bench-client-key' });
        add('agent direct', upstream.url, '/v1/messages', agent('bench-delay-0'), { 'x-api-key': 'upstream', ...anthHeaders });
        add('agent bare', bare.url, '/v1/messages', agent('bench-delay-0'), anthHeaders);
        add('agent switchyard', sy.proxyUrl, '/v1/messages', agent('anth/bench-delay-0'), { ...syAuth, ...anthHeaders });
        add('agent required', required.url, '/v1/messages', agent('anth/bench-delay-0'), { 'x-api-key': 'bench-client-key', ...anthHeaders });
        // The flat reference reads the answer whole as JSON: it has no stream to compare.
        add('stream direct', upstream.url, '/v1/messages', streamed(`bench-stream-${STREAM_EVENTS}`), { 'x-api-key': 'upstream', ...anthHeaders });
        add('stream bare', bare.url, '/v1/messages', streamed(`bench-stream-${STREAM_EVENTS}`), anthHeaders);
        add('stream switchyard', sy.proxyUrl, '/v1/messages', streamed(`anth/bench-stream-${STREAM_EVENTS}`), { ...syAuth, ...anthHeaders });
        // One session's requests in turn, each a turn longer (an agent sends its whole conversation
        // every time): what is new in each is what a real turn adds; the rows above repeat one body.
        const turns = (model: string) => agentTurns(model, LARGE_KIB, TURNS);
        const addTurns = (key: string, url: string, model: string, headers: Record<string, string>) => {
          const bodies = turns(model);
          large.push({ key: `${key} c=${concurrency}`, url, path: '/v1/messages', body: bodies[0]!, bodies, headers, concurrency });
        };
        addTurns('turns direct', upstream.url, 'bench-delay-0', { 'x-api-key': 'upstream', ...anthHeaders });
        addTurns('turns bare', bare.url, 'bench-delay-0', anthHeaders);
        addTurns('turns switchyard', sy.proxyUrl, 'anth/bench-delay-0', { ...syAuth, ...anthHeaders });
      }
      for (const c of large) await preflight(c);
      process.stderr.write(`  the ${LARGE_KIB} KiB tables: ${large.length} cells x ${ROUNDS} rounds of ${SECONDS} s, then ${AFTER_SECONDS} s idle\n`);
      for (const c of large) shots.set(c.key, []);
      // The same memory figures under agents' bodies, which is what a user's Switchyard carries.
      const m = await memoryWindow(trees, async () => {
        if (WARMUP_SECONDS > 0) for (const c of large) await shoot(c, WARMUP_SECONDS);
        for (let round = 0; round < ROUNDS; round++) for (const c of round % 2 ? [...large].reverse() : large) shots.get(c.key)!.push(await shoot(c, SECONDS));
      });
      const rss = (w: { switchyard: { rssMiB: number }; bare: { rssMiB: number } }) => ({ switchyard: w.switchyard.rssMiB, bare: w.bare.rssMiB });
      agentMemory = { peak: m.peak, endOfLoad: rss(m.endOfLoad), after: rss(m.after) };
    }

    // ---- figures ----
    const rps = (key: string) => median(shots.get(key)!.map((s) => s.rps));
    const errors = (key: string) => shots.get(key)!.reduce((a, s) => a + s.errors, 0);
    /** Each round's ratio (the two ran in the same round): their spread shows the run's noise. */
    const perRound = (key: string, bareKey: string) => shots.get(key)!.map((s, i) => s.rps / shots.get(bareKey)!.at(i)!.rps);
    const rows = [
      { path: 'OpenAI chat', proto: 'chat', sy: 'chat switchyard', required: 'chat required' },
      { path: 'Anthropic messages, native', proto: 'messages', sy: 'messages switchyard', required: 'messages required' },
      // The flat reference does not translate.
      { path: 'Anthropic -> Chat, translated', proto: 'messages', sy: 'translated switchyard', required: null },
    ];
    const throughput = CONCURRENCY.flatMap((c) =>
      rows.map((r) => {
        const k = (name: string) => `${name} c=${c}`;
        const syShots = shots.get(k(r.sy))!;
        const ratio = rps(k(r.sy)) / rps(k(`${r.proto} bare`));
        const requiredRps = r.required ? rps(k(r.required)) : null;
        return {
          path: r.path,
          concurrency: c,
          directRps: rps(k(`${r.proto} direct`)),
          bareHopRps: rps(k(`${r.proto} bare`)),
          switchyardRps: rps(k(r.sy)),
          xBareHop: ratio,
          xBareHopPerRound: perRound(k(r.sy), k(`${r.proto} bare`)),
          target: TARGET.ratio[c]!,
          meetsTarget: ratio >= TARGET.ratio[c]!,
          requiredWorkRps: requiredRps,
          requiredWorkXBareHop: requiredRps === null ? null : requiredRps / rps(k(`${r.proto} bare`)),
          switchyardP50Ms: median(syShots.map((s) => s.p50)),
          switchyardP99Ms: median(syShots.map((s) => s.p99)),
          errors: {
            direct: errors(k(`${r.proto} direct`)),
            bareHop: errors(k(`${r.proto} bare`)),
            switchyard: errors(k(r.sy)),
            requiredWork: r.required ? errors(k(r.required)) : 0,
          },
        };
      }),
    );
    const largeKinds = [
      { kind: 'large', path: `OpenAI chat, ${LARGE_KIB} KiB conversation` },
      { kind: 'agent', path: `Anthropic native, ${LARGE_KIB} KiB Claude Code-shaped` },
      { kind: 'stream', path: `the same, streamed (${STREAM_EVENTS} text deltas)` },
      { kind: 'turns', path: `one session's turns, each a turn longer (${TURNS}, then again)` },
    ];
    const largeBody = large.length
      ? largeKinds.flatMap(({ kind, path }) =>
          CONCURRENCY.map((c) => {
            const k = (name: string) => `${kind} ${name} c=${c}`;
            return {
              kind,
              path,
              kib: LARGE_KIB,
              bodyBytes: Buffer.byteLength(large.find((x) => x.key === k('switchyard'))!.body),
              concurrency: c,
              directRps: rps(k('direct')),
              bareHopRps: rps(k('bare')),
              switchyardRps: rps(k('switchyard')),
              xBareHop: rps(k('switchyard')) / rps(k('bare')),
              xBareHopPerRound: perRound(k('switchyard'), k('bare')),
              requiredWorkRps: shots.has(k('required')) ? rps(k('required')) : null,
              requiredWorkXBareHop: shots.has(k('required')) ? rps(k('required')) / rps(k('bare')) : null,
              errors: errors(k('direct')) + errors(k('bare')) + errors(k('switchyard')) + (shots.has(k('required')) ? errors(k('required')) : 0),
            };
          }),
        )
      : [];
    const memory = {
      switchyard: {
        idleMiB: idle.switchyard.rssMiB,
        peakMiB: peak.switchyard,
        peakSampledMiB: sampled.switchyard!,
        peakHwmMiB: peakReset ? hwm.switchyard : null,
        endOfLoadMiB: endOfLoad.switchyard.rssMiB,
        afterMiB: after.switchyard.rssMiB,
        processes: after.switchyard.pids.length,
      },
      bareHop: {
        idleMiB: idle.bare.rssMiB,
        peakMiB: peak.bare,
        peakSampledMiB: sampled.bare!,
        peakHwmMiB: peakReset ? hwm.bare : null,
        endOfLoadMiB: endOfLoad.bare.rssMiB,
        afterMiB: after.bare.rssMiB,
        processes: after.bare.pids.length,
      },
      // Under the agent-sized tables (null when they are left out): peak, end of load, AFTER_SECONDS after.
      agentLoad: agentMemory,
    };

    // ---- print ----
    const verdict = (ok: boolean) => (ok ? 'meets' : 'misses');
    const spread = (xs: number[]) => (xs.length > 1 ? `${f(Math.min(...xs))}-${f(Math.max(...xs))}` : '-');
    const tp = table(
      ['path', 'conc', 'direct req/s', 'bare hop req/s', 'Switchyard req/s', 'x bare hop', 'per round', 'target', '', 'required work req/s', 'its x bare hop'],
      throughput.map((t) => [
        t.path,
        String(t.concurrency),
        int(t.directRps),
        int(t.bareHopRps),
        int(t.switchyardRps),
        f(t.xBareHop),
        spread(t.xBareHopPerRound),
        `>= ${f(t.target, 1)}`,
        verdict(t.meetsTarget),
        t.requiredWorkRps === null ? '-' : int(t.requiredWorkRps),
        t.requiredWorkXBareHop === null ? '-' : f(t.requiredWorkXBareHop),
      ]),
    );
    const s = memory.switchyard;
    const b = memory.bareHop;
    const memRow = (label: string, sv: number, bv: number, target: number) => [label, '', `${f(sv, 1)}`, `${f(bv, 1)}`, f(sv / bv), `${f(target, 0)}`, f(sv / target), verdict(sv <= target)];
    const mem = table(
      ['RSS, MiB', '', 'Switchyard', 'bare hop', 'x bare hop', 'target', 'x target', ''],
      [
        memRow(`idle ${SETTLE_SECONDS} s after start`, s.idleMiB, b.idleMiB, TARGET.idleMiB),
        memRow('peak during the load', s.peakMiB, b.peakMiB, TARGET.peakMiB),
        memRow(`${AFTER_SECONDS} s after the load`, s.afterMiB, b.afterMiB, TARGET.afterMiB),
        ...(agentMemory
          ? [
              memRow(`peak, ${LARGE_KIB} KiB tables`, agentMemory.peak.switchyard, agentMemory.peak.bare, TARGET.peakMiB),
              memRow(`${AFTER_SECONDS} s after them`, agentMemory.after.switchyard, agentMemory.after.bare, TARGET.afterMiB),
            ]
          : []),
      ],
    );
    const errs = throughput.filter((t) => t.errors.direct + t.errors.bareHop + t.errors.switchyard + t.errors.requiredWork > 0);
    const out = [
      '',
      `Lean bench (issue 25): ${process.version}, ${new Date().toISOString()}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`,
      `non-stream, upstream 0 ms, ${ROUNDS} interleaved round(s) of ${SECONDS} s per cell, medians; "per round" is the spread of the rounds' own ratios;`,
      `"required work": the least a gateway keeping Switchyard's promises does, flat (bench/requiredWork.ts), against the same bare hop`,
      tp,
      `Switchyard p50 / p99 latency (ms): ${throughput.map((t) => `${t.path} c=${t.concurrency} ${f(t.switchyardP50Ms, 1)} / ${f(t.switchyardP99Ms, 1)}`).join('; ')}`,
      ...(errs.length ? [`ERRORS (figures not valid): ${errs.map((t) => `${t.path} c=${t.concurrency} direct ${t.errors.direct}, bare hop ${t.errors.bareHop}, Switchyard ${t.errors.switchyard}, required work ${t.errors.requiredWork}`).join('; ')}`] : []),
      ...(largeBody.length
        ? [
            '',
            `Beyond the issue's table, run after the memory figures: agent-sized bodies, the model rewritten (a conversation dense in accents and CJK, ${int(largeBody[0]!.bodyBytes)} bytes; a Claude Code-shaped request, ${int(largeBody.at(-1)!.bodyBytes)} bytes, plain and streamed)`,
            table(
              ['path', 'conc', 'direct req/s', 'bare hop req/s', 'Switchyard req/s', 'x bare hop', 'per round', 'required work req/s', 'its x bare hop'],
              largeBody.map((t) => [
                t.path,
                String(t.concurrency),
                int(t.directRps),
                int(t.bareHopRps),
                int(t.switchyardRps),
                f(t.xBareHop),
                spread(t.xBareHopPerRound),
                t.requiredWorkRps === null ? '—' : int(t.requiredWorkRps),
                t.requiredWorkXBareHop === null ? '—' : f(t.requiredWorkXBareHop),
              ]),
            ),
            ...(largeBody.some((t) => t.errors > 0) ? [`ERRORS in the ${LARGE_KIB} KiB table (figures not valid): ${largeBody.map((t) => `${t.path} c=${t.concurrency} ${t.errors}`).join(', ')}`] : []),
          ]
        : []),
      '',
      `Memory: RSS of each process tree (Switchyard: ${s.processes} process(es) with their threads; the bare hop runs under tsx, whose loader thread is in its figure)`,
      mem,
      `peak: the highest of the ${SAMPLE_MS} ms samples (Switchyard ${f(s.peakSampledMiB, 1)}, bare hop ${f(b.peakSampledMiB, 1)})` +
        (peakReset ? ` and VmHWM, reset before the load (Switchyard ${f(s.peakHwmMiB ?? NaN, 1)}, bare hop ${f(b.peakHwmMiB ?? NaN, 1)})` : '; VmHWM could not be reset, so it is left out') +
        `; right at the end of the load: Switchyard ${f(s.endOfLoadMiB, 1)}, bare hop ${f(b.endOfLoadMiB, 1)}` +
        (agentMemory ? `; at the end of the ${LARGE_KIB} KiB tables: Switchyard ${f(agentMemory.endOfLoad.switchyard, 1)}, bare hop ${f(agentMemory.endOfLoad.bare, 1)}` : ''),
      `figures as JSON: ${JSON_FILE}`,
      '',
    ].join('\n');
    process.stdout.write(out);
    const json = {
      bench: 'lean',
      node: process.version,
      at: new Date().toISOString(),
      loadavg: loadavg(),
      rounds: ROUNDS,
      secondsPerCell: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      afterSeconds: AFTER_SECONDS,
      targets: TARGET,
      throughput,
      largeBody,
      memory,
    };
    writeFileSync(JSON_FILE, `${JSON.stringify(json, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(json)}\n`);
  } finally {
    sy.stop();
    required.stop();
    bare.stop();
    upstream.stop();
  }
}

main().then(
  () => setTimeout(() => process.exit(0), 1000),
  (e: unknown) => {
    process.stderr.write(`lean bench failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
