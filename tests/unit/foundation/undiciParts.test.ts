// The engine loads undici's dispatchers without its index (upstream/undici.ts, issue 25): the
// module files it names must be undici's own classes, and request() must work on them as the
// index would set it up. An undici upgrade that moves a file fails here first.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as undici from 'undici';
import { describe, expect, it } from 'vitest';
import { Agent, Pool, ProxyAgent } from '../../../src/main/engine/upstream/undici';

describe("undici's parts", () => {
  it('are the classes undici exports', () => {
    expect(Agent).toBe(undici.Agent);
    expect(Pool).toBe(undici.Pool);
    expect(ProxyAgent).toBe(undici.ProxyAgent);
  });

  it('answer request() as undici does', async () => {
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ path: req.url, method: req.method }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const agent = new Agent();
    try {
      const res = await agent.request({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, path: '/x?y=1', method: 'POST', body: '{}' });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toEqual({ path: '/x?y=1', method: 'POST' });
    } finally {
      await agent.close();
      server.close();
    }
  });

  it('load without undici\'s index, and request() works then too', () => {
    // A process of its own: nothing else has loaded undici there.
    const script = `
      import { createServer } from 'node:http';
      import { Agent } from './src/main/engine/upstream/undici.ts';
      const server = createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1', async () => {
        const a = new Agent();
        const r = await a.request({ origin: 'http://127.0.0.1:' + server.address().port, path: '/', method: 'GET' });
        const body = await r.body.text();
        const { createRequire } = await import('node:module');
        const index = createRequire(import.meta.url).resolve('undici');
        process.stdout.write(JSON.stringify({ status: r.statusCode, body, indexLoaded: !!createRequire(import.meta.url).cache[index] }));
        await a.close(); server.close();
      });`;
    const out = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })) as Record<string, unknown>;
    expect(out).toEqual({ status: 200, body: 'ok', indexLoaded: false });
  });
});
