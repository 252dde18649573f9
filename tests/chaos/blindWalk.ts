// The randomised chaos suite's baseline: a stateless gateway that walks the keys blindly. Every
// request tries the first key, then the next on a 429, a 5xx, a transport error or a timeout,
// each try bounded by `perTargetMs` for the whole answer (it buffers it, as a plain fallback
// config does); it keeps no state between requests. Loopback only, test use only.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BlindWalk {
  url: string;
  close(): Promise<void>;
}

const failure = (status: number, message: string) =>
  JSON.stringify({ type: 'error', error: { type: status === 429 ? 'rate_limit_error' : 'api_error', message } });

export async function startBlindWalk(o: { upstreamUrl: string; keys: readonly string[]; perTargetMs: number }): Promise<BlindWalk> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      let last = { status: 502, type: 'application/json', body: Buffer.from(failure(502, 'no key answered')) };
      for (const key of o.keys) {
        try {
          const r = await fetch(`${o.upstreamUrl}${req.url ?? '/'}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
            body,
            signal: AbortSignal.timeout(o.perTargetMs),
          });
          last = { status: r.status, type: r.headers.get('content-type') ?? 'application/json', body: Buffer.from(await r.arrayBuffer()) };
          if (r.status !== 429 && r.status < 500) break;
        } catch (e) {
          last = { status: 502, type: 'application/json', body: Buffer.from(failure(502, (e as Error).message)) };
        }
      }
      res.writeHead(last.status, { 'content-type': last.type, 'content-length': String(last.body.length) });
      res.end(last.body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
