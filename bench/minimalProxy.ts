// Bench baseline: the thinnest possible pass-through proxy (node:http in, undici out, no checks,
// no routing, no logging) in its own process. Comparing Switchyard to it separates the cost of the
// extra hop itself from the cost of what Switchyard does on it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: minimalProxy.ts <upstream origin>');
const agent = new Agent({ keepAliveTimeout: 30_000 });
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', async () => {
    try {
      const r = await agent.request({
        origin: upstream,
        path: req.url ?? '/',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string' && k !== 'connection' && k !== 'keep-alive') headers[k] = v;
      res.writeHead(r.statusCode, headers);
      r.body.on('data', (c: Buffer) => res.write(c));
      r.body.on('end', () => res.end());
    } catch {
      res.writeHead(502).end();
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
