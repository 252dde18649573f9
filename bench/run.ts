// `npm run bench`: direct-to-upstream vs through Switchyard, in one run, printed as ratios.
// Non-streaming at c=1 and c=32 (req/s, p50, p99) and a 200-chunk stream (TTFB and total), with an
// upstream that answers at once (pure proxy overhead) and one that takes 20 ms (closer to a real
// provider). A bare pass-through proxy (bench/minimalProxy.ts) runs beside them as the floor any
// extra hop costs on this machine. Targets: >= 0.9x direct req/s, < 1 ms added p99 at c=1.
// Translation: the same 200-chunk Chat stream through Switchyard natively (a Chat client) and
// translated (an Anthropic Messages client on the Chat upstream), alternating blocks in one run.
// Targets: translated adds < 1 ms time to first byte and < 15 % proxy CPU per request.
// Gemini, in the same blocks and against the same native Chat path and targets: a Gemini client
// (streamGenerateContent?alt=sse) on the Chat upstream, a Chat client on a Gemini upstream (the
// bench upstream answers Gemini SSE on Google's path), and a Gemini client on the Gemini upstream
// (native passthrough).
// Hold-back: a healthy stream whose first text comes 5 ms after its headers (a role chunk first),
// time to that first output direct, through the bare proxy and through Switchyard (which holds
// the stream back until that frame). Target: hold-back adds < 0.5 ms over the bare proxy's hop.
// BENCH_ONLY=streams runs only the stream cases.
import { existsSync } from 'node:fs';
import { compareFirstOutput, compareStreams, load, startMinimalProxy, startSwitchyard, startUpstream, streamRuns, type RunResult, type StreamCaseResult } from './lib';

const f = (n: number, d = 2) => n.toFixed(d);

interface Path {
  name: string;
  url: string;
  headers: Record<string, string>;
}

async function main() {
  if (!existsSync('out/main/serve.js')) {
    process.stderr.write('Build first: npm run build\n');
    process.exit(1);
  }
  const upstream = await startUpstream();
  const minimal = await startMinimalProxy(upstream.url);
  const sy = await startSwitchyard();
  try {
    await sy.api('POST', '/api/providers', { name: 'bench', kind: 'openai-compatible', provider: 'bench', baseUrl: `${upstream.url}/v1` });
    const paths: Path[] = [
      { name: 'direct', url: upstream.url, headers: { authorization: 'Bearer upstream' } },
      { name: 'bare proxy', url: minimal.url, headers: {} },
      { name: 'switchyard', url: sy.proxyUrl, headers: { authorization: `Bearer ${sy.clientKey}` } },
    ];
    const path = '/v1/chat/completions';
    const body = (model: string, stream = false) => JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hello' }] });

    const lines: string[] = [];
    const onlyStreams = process.env.BENCH_ONLY === 'streams';
    const scenario = async (label: string, model: string, c: number, n: number) => {
      for (const p of paths) await load(p.url, path, body(model), p.headers, c, Math.min(n, 300));
      const r: Record<string, RunResult> = {};
      for (const p of paths) r[p.name] = await load(p.url, path, body(model), p.headers, c, n);
      const d = r.direct!;
      const cells = paths.map((p) => `${p.name} ${f(r[p.name]!.rps, 0)} req/s p50 ${f(r[p.name]!.p50)} p99 ${f(r[p.name]!.p99)}`);
      const s = r.switchyard!;
      const b = r['bare proxy']!;
      lines.push(
        `${label}\n  ${cells.join('\n  ')}\n  switchyard vs direct: ${f(s.rps / d.rps)}x req/s, added p50 ${f(s.p50 - d.p50)} ms, p99 ${f(s.p99 - d.p99)} ms` +
          `\n  switchyard vs bare proxy: ${f(s.rps / b.rps)}x req/s, added p50 ${f(s.p50 - b.p50)} ms, p99 ${f(s.p99 - b.p99)} ms` +
          (Object.values(r).some((x) => x.errors) ? `\n  errors: ${paths.map((p) => r[p.name]!.errors).join('/')}` : ''),
      );
    };
    if (!onlyStreams) {
      await scenario('upstream 0 ms, c=1', 'bench-delay-0', 1, 3000);
      await scenario('upstream 0 ms, c=32', 'bench-delay-0', 32, 10000);
      await scenario('upstream 20 ms, c=1', 'bench-delay-20', 1, 300);
      await scenario('upstream 20 ms, c=32', 'bench-delay-20', 32, 4000);
    }

    // A combo whose first target is healthy vs the plain model, both through Switchyard: the cost of
    // combo resolution, expansion and ranking. Runs alternate (plain, combo, plain, combo) so drift
    // on a shared machine hits both alike; the best of each pair is compared.
    await sy.api('POST', '/api/combos', {
      name: 'bench-combo',
      targets: [
        { provider: 'bench', model: 'bench-delay-0' },
        { provider: 'bench', model: 'bench-delay-20' },
      ],
    });
    const sw = paths.find((p) => p.name === 'switchyard')!;
    const comboCase = async (c: number, n: number) => {
      await load(sw.url, path, body('bench-combo'), sw.headers, c, Math.min(n, 300));
      const plain: RunResult[] = [];
      const combo: RunResult[] = [];
      for (let i = 0; i < 2; i++) {
        plain.push(await load(sw.url, path, body('bench-delay-0'), sw.headers, c, n));
        combo.push(await load(sw.url, path, body('bench-combo'), sw.headers, c, n));
      }
      const best = (rs: RunResult[]) => rs.reduce((a, b) => (b.rps > a.rps ? b : a));
      const p = best(plain);
      const k = best(combo);
      const spread = (rs: RunResult[]) => Math.abs(rs[0]!.rps - rs[1]!.rps) / Math.max(rs[0]!.rps, rs[1]!.rps);
      lines.push(
        `combo (first target healthy) vs plain model, upstream 0 ms, c=${c}\n  plain ${f(p.rps, 0)} req/s p50 ${f(p.p50)} p99 ${f(p.p99)}\n  combo ${f(k.rps, 0)} req/s p50 ${f(k.p50)} p99 ${f(k.p99)}` +
          `\n  combo vs plain: ${f(k.rps / p.rps)}x req/s, added p50 ${f(k.p50 - p.p50)} ms, p99 ${f(k.p99 - p.p99)} ms (run-to-run spread: plain ${f(spread(plain) * 100, 1)}%, combo ${f(spread(combo) * 100, 1)}%)` +
          ([...plain, ...combo].some((x) => x.errors) ? `\n  errors: ${[...plain, ...combo].map((x) => x.errors).join('/')}` : ''),
      );
    };
    if (!onlyStreams) {
      await comboCase(1, 3000);
      await comboCase(32, 10000);
    }

    // Hold-back: time to the first model output of a healthy stream (first text 5 ms after a role chunk).
    const fo = await compareFirstOutput(paths, path, body('bench-ttfo-5', true), 8, 40);
    const held = fo.switchyard!.outputP50 - fo['bare proxy']!.outputP50;
    lines.push(
      `time to first output, healthy stream (text 5 ms after a role chunk), c=1, alternating blocks\n  ${paths
        .map((p) => `${p.name} first byte p50 ${f(fo[p.name]!.firstP50)}, first output p50 ${f(fo[p.name]!.outputP50)} p99 ${f(fo[p.name]!.outputP99)}`)
        .join('\n  ')}` +
        `\n  switchyard vs direct: added first output p50 ${f(fo.switchyard!.outputP50 - fo.direct!.outputP50, 3)} ms (x${f(fo.switchyard!.outputP50 / fo.direct!.outputP50, 3)})` +
        `\n  switchyard vs bare proxy (hold-back and routing): added p50 ${f(held, 3)} ms (target < 0.5 ms)`,
    );

    const sbody = body('bench-stream-200', true);
    for (const p of paths) await streamRuns(p.url, path, sbody, p.headers, 20);
    const sr: Record<string, Awaited<ReturnType<typeof streamRuns>>> = {};
    for (const p of paths) sr[p.name] = await streamRuns(p.url, path, sbody, p.headers, 300);
    lines.push(
      `stream of 200 chunks, c=1\n  ${paths
        .map((p) => `${p.name} ttfb p50 ${f(sr[p.name]!.ttfbP50)} p99 ${f(sr[p.name]!.ttfbP99)}, total p50 ${f(sr[p.name]!.totalP50)} p99 ${f(sr[p.name]!.totalP99)}`)
        .join('\n  ')}\n  switchyard vs direct: added ttfb p50 ${f(sr.switchyard!.ttfbP50 - sr.direct!.ttfbP50)} ms, total p50 ${f(sr.switchyard!.totalP50 - sr.direct!.totalP50)} ms`,
    );
    // Translation: native Chat → Chat against Anthropic Messages → Chat and the Gemini rows (a
    // Gemini client on the Chat upstream, a Chat client on a Gemini upstream, Gemini passed through
    // to a Gemini upstream), all in the same alternating blocks, each against the native Chat path.
    await sy.api('POST', '/api/providers', { name: 'gembench', kind: 'gemini', provider: 'gembench', baseUrl: upstream.url, secret: 'bench-google-key' });
    const auth = { authorization: `Bearer ${sy.clientKey}` };
    const chatBody = (model: string) => JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hello' }] });
    const geminiCase = (name: string, model: string) => ({
      name,
      path: `/v1beta/models/${model}:streamGenerateContent?alt=sse`,
      headers: { 'x-goog-api-key': sy.clientKey },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }),
    });
    const tr = await compareStreams(
      sy.proxyUrl,
      sy.pid,
      [
        { name: 'native', path: '/v1/chat/completions', headers: auth, body: chatBody('bench/bench-stream-200') },
        {
          name: 'translated',
          path: '/v1/messages',
          headers: { ...auth, 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ model: 'bench/bench-stream-200', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'hello' }] }),
        },
        geminiCase('gemini on chat', 'bench/bench-stream-200'),
        { name: 'chat on gemini', path: '/v1/chat/completions', headers: auth, body: chatBody('gembench/bench-stream-200') },
        geminiCase('gemini native', 'gembench/bench-stream-200'),
      ],
      8,
      50,
    );
    const n = tr.native!;
    const row = (label: string, r: StreamCaseResult) => `\n  ${label.padEnd(14)} ttfb p50 ${f(r.ttfbP50)} p99 ${f(r.ttfbP99)}, total p50 ${f(r.totalP50)}, proxy CPU ${f(r.cpuPerRequest)} ms/request`;
    const against = (what: string, r: StreamCaseResult, base = n) =>
      `\n  ${what} adds ttfb p50 ${f(r.ttfbP50 - base.ttfbP50, 3)} ms (target < 1 ms), CPU per request x${f(r.cpuPerRequest / base.cpuPerRequest)} (${f((r.cpuPerRequest / base.cpuPerRequest - 1) * 100, 1)} %, target < 15 %)`;
    const t = tr.translated!;
    lines.push(
      `translated stream (Anthropic Messages client on a Chat upstream) vs native (Chat client), 200 chunks, c=1` +
        row('native', n) +
        row('translated', t) +
        against('translation', t),
    );
    const gc = tr['gemini on chat']!;
    const cg = tr['chat on gemini']!;
    const gg = tr['gemini native']!;
    lines.push(
      `Gemini streams (streamGenerateContent?alt=sse), 200 chunks, c=1, same blocks as above, each vs native (Chat client on the Chat upstream)` +
        row('native', n) +
        row('gemini on chat', gc) +
        row('chat on gemini', cg) +
        row('gemini native', gg) +
        against('Gemini client on a Chat upstream', gc) +
        against('Chat client on a Gemini upstream', cg) +
        against('Gemini client on a Gemini upstream (passthrough)', gg) +
        against('Chat client on a Gemini upstream vs Gemini passthrough (same upstream stream)', cg, gg),
    );
    const { loadavg } = await import('node:os');
    process.stdout.write(
      `\nSwitchyard proxy bench (${process.version}, ${new Date().toISOString()}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}, times in ms)\n${lines.join('\n')}\n`,
    );
  } finally {
    sy.stop();
    minimal.stop();
    upstream.stop();
  }
}

void main();
