import { load, startUpstream, startSwitchyard } from './lib';
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
const up = await startUpstream();
const body = JSON.stringify({ model: 'bench-delay-0', messages: [{ role: 'user', content: 'hi' }] });
const pidOf = (url: string) => execSync(`ss -ltnp | grep ':${url.split(':').pop()} ' | sed -E 's/.*pid=([0-9]+).*/\\1/'`).toString().trim();
const cpu = (pid: string) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const variants = (process.env.VARIANTS ?? '').split(';').map((v) => Object.fromEntries(v.split(',').filter(Boolean).map((kv) => [kv, '1'])));
for (const env of [...variants, ...variants, ...variants]) {
  const sy = await startSwitchyard(env);
  await sy.api('POST', '/api/providers', { name: 'b', kind: 'openai-compatible', provider: 'bench', baseUrl: `${up.url}/v1` });
  const h = { authorization: `Bearer ${sy.clientKey}` };
  const pid = pidOf(sy.proxyUrl);
  await load(sy.proxyUrl, '/v1/chat/completions', body, h, 8, 3000);
  const c0 = cpu(pid);
  const r = await load(sy.proxyUrl, '/v1/chat/completions', body, h, 8, 10000);
  const c1 = cpu(pid);
  console.log(JSON.stringify(env), 'cpu µs/request', ((c1 - c0) * 1000 / 10000).toFixed(0), 'rps', r.rps.toFixed(0));
  sy.stop();
  await new Promise((r) => setTimeout(r, 300));
}
up.stop();
