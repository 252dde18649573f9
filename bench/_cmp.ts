import { load, startUpstream, startSwitchyard } from './lib';
const up = await startUpstream();
const body = (m: string) => JSON.stringify({ model: m, messages: [{ role: 'user', content: 'hi' }] });
for (const env of [{}, {}]) {
  const sy = await startSwitchyard(env);
  await sy.api('POST', '/api/providers', { name: 'b', kind: 'openai-compatible', provider: 'bench', baseUrl: `${up.url}/v1` });
  const h = { authorization: `Bearer ${sy.clientKey}` };
  await load(sy.proxyUrl, '/v1/chat/completions', body('bench-delay-0'), h, 32, 2000);
  const r = await load(sy.proxyUrl, '/v1/chat/completions', body('bench-delay-0'), h, 32, 10000);
  const r1 = await load(sy.proxyUrl, '/v1/chat/completions', body('bench-delay-0'), h, 1, 3000);
  console.log(JSON.stringify(env), 'c=32', r.rps.toFixed(0), 'p99', r.p99.toFixed(2), '| c=1 p50', r1.p50.toFixed(2), 'p99', r1.p99.toFixed(2));
  sy.stop();
}
up.stop();
