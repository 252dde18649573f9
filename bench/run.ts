// `npm run bench`: direct-to-upstream vs through-the-proxy, in one run, printed as ratios.
// Non-streaming at c=1 and c=32 (req/s, p50, p99), and a 200-chunk stream (TTFB and total), with
// an upstream that answers at once (pure proxy overhead) and one that takes 20 ms (closer to a
// real provider). Targets: >= 0.9x direct req/s, < 1 ms added p99 at c=1.
import { existsSync } from 'node:fs';
import { load, startSwitchyard, startUpstream, streamRuns, type RunResult } from './lib';

const f = (n: number, d = 2) => n.toFixed(d);

async function main() {
  if (!existsSync('out/main/serve.js')) {
    process.stderr.write('Build first: npm run build\n');
    process.exit(1);
  }
  const upstream = await startUpstream();
  const sy = await startSwitchyard();
  try {
    await sy.api('POST', '/api/providers', { name: 'bench', kind: 'openai-compatible', provider: 'bench', baseUrl: `${upstream.url}/v1` });
    const direct = { url: upstream.url, path: '/v1/chat/completions', headers: { authorization: 'Bearer upstream' } };
    const proxied = { url: sy.proxyUrl, path: '/v1/chat/completions', headers: { authorization: `Bearer ${sy.clientKey}` } };
    const body = (model: string, stream = false) => JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hello' }] });

    const rows: string[] = [];
    const compare = async (label: string, model: string, c: number, n: number) => {
      await load(direct.url, direct.path, body(model), direct.headers, c, Math.min(n, 200));
      await load(proxied.url, proxied.path, body(model), proxied.headers, c, Math.min(n, 200));
      const d: RunResult = await load(direct.url, direct.path, body(model), direct.headers, c, n);
      const p: RunResult = await load(proxied.url, proxied.path, body(model), proxied.headers, c, n);
      rows.push(
        `${label.padEnd(26)} direct ${f(d.rps, 0).padStart(6)} req/s p50 ${f(d.p50)} p99 ${f(d.p99)} | proxy ${f(p.rps, 0).padStart(6)} req/s p50 ${f(p.p50)} p99 ${f(p.p99)} | ratio ${f(p.rps / d.rps)}x, added p99 ${f(p.p99 - d.p99)} ms${d.errors + p.errors ? ` (errors ${d.errors}/${p.errors})` : ''}`,
      );
    };
    await compare('upstream 0 ms, c=1', 'bench-delay-0', 1, 2000);
    await compare('upstream 0 ms, c=32', 'bench-delay-0', 32, 10000);
    await compare('upstream 20 ms, c=1', 'bench-delay-20', 1, 200);
    await compare('upstream 20 ms, c=32', 'bench-delay-20', 32, 3000);

    await streamRuns(direct.url, direct.path, body('bench-stream-200', true), direct.headers, 20);
    await streamRuns(proxied.url, proxied.path, body('bench-stream-200', true), proxied.headers, 20);
    const sd = await streamRuns(direct.url, direct.path, body('bench-stream-200', true), direct.headers, 200);
    const sp = await streamRuns(proxied.url, proxied.path, body('bench-stream-200', true), proxied.headers, 200);
    rows.push(
      `${'stream 200 chunks, c=1'.padEnd(26)} direct ttfb p50 ${f(sd.ttfbP50)} total p50 ${f(sd.totalP50)} p99 ${f(sd.totalP99)} | proxy ttfb p50 ${f(sp.ttfbP50)} total p50 ${f(sp.totalP50)} p99 ${f(sp.totalP99)} | added ttfb p50 ${f(sp.ttfbP50 - sd.ttfbP50)} ms, total p50 ${f(sp.totalP50 - sd.totalP50)} ms`,
    );
    process.stdout.write(`\nSwitchyard proxy bench (${process.version}, times in ms)\n${rows.join('\n')}\n`);
  } finally {
    sy.stop();
    upstream.stop();
  }
}

void main();
