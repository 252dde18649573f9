// A raw TCP client for the servers' slow-client limits: it writes exactly the bytes a test gives
// (a half-sent header block, a body that stops short) and collects what comes back until the
// server closes the socket.
import { connect, type Socket } from 'node:net';

export interface RawExchange {
  socket: Socket;
  /** Resolves with everything received once the server has closed the connection. */
  closed: Promise<string>;
  write(text: string): void;
  /** Everything received so far. */
  received(): string;
  /** Resolves once what was received contains `text` (rejects after a safety limit, not a timing assertion). */
  until(text: string, limitMs?: number): Promise<void>;
}

export function openRaw(url: string): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const closed = new Promise<string>((done) => {
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () => done(Buffer.concat(chunks).toString('utf8')));
    });
    socket.on('error', () => {
      // a reset is a close too; `closed` reports what arrived before it
    });
    const received = () => Buffer.concat(chunks).toString('utf8');
    const until = (text: string, limitMs = 10_000) =>
      new Promise<void>((done, fail) => {
        if (received().includes(text)) return done();
        const timer = setTimeout(() => {
          socket.off('data', check);
          fail(new Error(`did not receive ${JSON.stringify(text)}`));
        }, limitMs);
        const check = () => {
          if (!received().includes(text)) return;
          clearTimeout(timer);
          socket.off('data', check);
          done();
        };
        socket.on('data', check);
      });
    socket.once('connect', () => resolve({ socket, closed, write: (t) => void socket.write(t), received, until }));
    socket.once('error', reject);
  });
}

/** Splits a raw HTTP/1.1 answer into status, lower-cased headers and the JSON body. */
export function parseRawResponse(raw: string): { status: number; headers: Record<string, string>; json: any } {
  const end = raw.indexOf('\r\n\r\n');
  const head = end >= 0 ? raw.slice(0, end) : raw;
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const body = end >= 0 ? raw.slice(end + 4) : '';
  let json: unknown = undefined;
  try {
    json = body ? JSON.parse(body) : undefined;
  } catch {
    json = undefined;
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0), headers, json };
}
