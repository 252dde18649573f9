// The randomised chaos suite's baselines: minimal gateways over the same keys, loopback only,
// test use only. Every request tries one key, then another on a 429, a 5xx, a transport error or
// a timeout, each try bounded by `perTargetMs` for the whole answer (it buffers it, as a plain
// fallback config does), until one answers or every key was tried.
// - `blind`: always k1, k2, k3... in order, no state between requests (a plain fallback config).
// - `last outcome`: remembers only each key's last outcome; before each try it picks, among the
//   keys this request has not tried, one whose last call succeeded (the first listed), else the
//   one whose last failure is oldest. Not a proposal for the engine: a reference showing what a
//   few lines of memory reach on the same schedule.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type WalkOrder = 'blind' | 'last outcome';

export interface Walk {
  url: string;
  close(): Promise<void>;
}

const failure = (status: number, message: string) =>
  JSON.stringify({ type: 'error', error: { type: status === 429 ? 'rate_limit_error' : 'api_error', message } });

export async function startWalk(o: { upstreamUrl: string; keys: readonly string[]; perTargetMs: number; order?: WalkOrder }): Promise<Walk> {
  /** The last outcome per key: ok, or the time of its last failure. */
  const last = new Map<string, { ok: boolean; at: number }>();
  const next = (untried: readonly string[]): string => {
    if (o.order !== 'last outcome') return untried[0]!;
    const good = untried.find((k) => last.get(k)?.ok !== false);
    if (good !== undefined) return good;
    return [...untried].sort((a, b) => last.get(a)!.at - last.get(b)!.at)[0]!;
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      let answer = { status: 502, type: 'application/json', body: Buffer.from(failure(502, 'no key answered')) };
      const untried = [...o.keys];
      while (untried.length > 0) {
        const key = next(untried);
        untried.splice(untried.indexOf(key), 1);
        try {
          const r = await fetch(`${o.upstreamUrl}${req.url ?? '/'}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
            body,
            signal: AbortSignal.timeout(o.perTargetMs),
          });
          answer = { status: r.status, type: r.headers.get('content-type') ?? 'application/json', body: Buffer.from(await r.arrayBuffer()) };
        } catch (e) {
          answer = { status: 502, type: 'application/json', body: Buffer.from(failure(502, (e as Error).message)) };
        }
        const ok = answer.status !== 429 && answer.status < 500;
        last.set(key, { ok, at: Date.now() });
        if (ok) break;
      }
      res.writeHead(answer.status, { 'content-type': answer.type, 'content-length': String(answer.body.length) });
      res.end(answer.body);
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
