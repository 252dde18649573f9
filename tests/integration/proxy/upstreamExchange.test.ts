// The upstream transport read straight from undici's dispatch handler (upstream/body.ts): what a
// Readable used to guarantee, held by the exchange itself. Chunks that arrive before the reader
// attaches are kept, in order, with the end; a reader that stops reading stops the socket; the
// signal aborts before and after the headers; a body dropped by its reader closes the socket and
// tells the reader later; an informational answer is not the answer.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TransportError, UpstreamClient, readBodyText, type UpstreamRequest } from '../../../src/main/engine/upstream/client';
import { HOLD_BYTES, type BodySink } from '../../../src/main/engine/upstream/body';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let handler: Handler;
let origin: string;
let client: UpstreamClient;
const sockets = new Set<Socket>();

beforeEach(async () => {
  server = createServer((req, res) => handler(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = new UpstreamClient();
});

afterEach(async () => {
  for (const s of sockets) s.destroy();
  await client.close();
  await new Promise((r) => server.close(r));
});

function req(signal = new AbortController().signal, over: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return { origin, path: '/x', method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{}'), signal, connectTimeoutMs: 5_000, headersTimeoutMs: 5_000, idleTimeoutMs: 5_000, ...over };
}

/** A sink that records what it gets, and whose every data callback may pause the body. */
function recorder() {
  const got: string[] = [];
  let settle: (v: string) => void = () => {};
  const settled = new Promise<string>((r) => (settle = r));
  const sink: BodySink = {
    data: (c) => void got.push(c.toString()),
    end: () => settle('end'),
    error: (e) => settle(`error: ${(e as Error).message}`),
  };
  return { got, sink, settled };
}

const tick = () => new Promise((r) => setImmediate(r));

/** Far more than loopback's socket buffers take: a server that could write it all was never paused. */
const FLOOD = 32 * 1024 * 1024;

/** The upstream answers FLOOD bytes as fast as the socket takes them; `written()` is how far it got. */
function flood(): { written: () => number } {
  let written = 0;
  handler = (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const piece = Buffer.alloc(16 * 1024, 'x');
    const more = () => {
      while (written < FLOOD) {
        written += piece.length;
        if (!res.write(piece)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  };
  return { written: () => written };
}

describe('the upstream exchange (dispatch handler, no Readable)', () => {
  it('holds what arrives before its reader attaches, in order, with the end', async () => {
    handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-a': ['1', '2'] });
      res.write('{"a":');
      res.end('1}');
    };
    const res = await client.request(req());
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['x-a']).toEqual(['1', '2']);
    // The body has come and ended by now: nothing read it yet.
    for (let i = 0; i < 5; i++) await tick();
    const r = recorder();
    res.body.attach(r.sink);
    expect(await r.settled).toBe('end');
    expect(r.got.join('')).toBe('{"a":1}');
  });

  it('pauses the socket past HOLD_BYTES for a reader that has not attached, and delivers all of it once it does', async () => {
    const server = flood();
    const res = await client.request(req());
    for (let i = 0; i < 20; i++) await tick();
    // The server could not write everything: the exchange stopped reading from the socket.
    expect(server.written()).toBeLessThan(FLOOD);
    let bytes = 0;
    await new Promise<void>((end, fail) => res.body.attach({ data: (c) => void (bytes += c.length), end, error: fail }));
    expect(bytes).toBe(FLOOD);
  });

  it('a reader that pauses stops the socket until it resumes', async () => {
    const server = flood();
    const total = FLOOD;
    const res = await client.request(req());
    let bytes = 0;
    let chunks = 0;
    let hold = true;
    let ended: () => void = () => {};
    const end = new Promise<void>((r) => (ended = r));
    res.body.attach({
      data: (c) => {
        bytes += c.length;
        chunks++;
        if (hold) res.body.pause();
      },
      end: () => ended(),
      error: () => {},
    });
    for (let i = 0; i < 5; i++) await tick();
    // Paused in every data callback: after what was held for it, nothing more comes, and the server
    // cannot write it all.
    const seen = chunks;
    for (let i = 0; i < 20; i++) await tick();
    expect(chunks).toBe(seen);
    expect(bytes).toBeLessThanOrEqual(2 * HOLD_BYTES);
    expect(server.written()).toBeLessThan(total);
    hold = false;
    res.body.resume();
    await end;
    expect(bytes).toBe(total);
  });

  it('the signal aborts a request still waiting for headers: a TransportError of kind aborted', async () => {
    handler = () => {}; // never answers
    const ac = new AbortController();
    const p = client.request(req(ac.signal));
    await tick();
    ac.abort();
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).kind).toBe('aborted');
  });

  it('an already aborted signal never reaches the upstream', async () => {
    let reached = false;
    handler = (_q, res) => ((reached = true), res.end());
    const ac = new AbortController();
    ac.abort();
    const err = await client.request(req(ac.signal)).catch((e: unknown) => e);
    expect((err as TransportError).kind).toBe('aborted');
    await tick();
    expect(reached).toBe(false);
  });

  it('the signal aborting mid-body ends the body with an error and closes the socket', async () => {
    let closed = false;
    handler = (_q, res) => {
      res.writeHead(200);
      res.write('part');
      res.on('close', () => (closed = true));
    };
    const ac = new AbortController();
    const res = await client.request(req(ac.signal));
    const r = recorder();
    res.body.attach(r.sink);
    while (r.got.length === 0) await tick();
    ac.abort();
    expect(await r.settled).toMatch(/^error/);
    while (!closed) await tick();
    expect(r.got).toEqual(['part']);
  });

  it('a body its reader destroys closes the socket, and the reader hears of it later, not inside destroy()', async () => {
    let closed = false;
    handler = (_q, res) => {
      res.writeHead(200);
      res.write('part');
      res.on('close', () => (closed = true));
    };
    const res = await client.request(req());
    let got = '';
    let error: string | null = null;
    let errored: () => void = () => {};
    const errorCame = new Promise<void>((r) => (errored = r));
    res.body.attach({
      data: (c) => void (got += c.toString()),
      end: () => {},
      error: (e) => {
        error = (e as Error).message;
        errored();
      },
    });
    while (got === '') await tick();
    res.body.destroy();
    expect(error).toBeNull();
    await errorCame;
    expect(error).toBe('upstream closed the stream');
    while (!closed) await tick();
  });

  it('an informational 1xx is not the answer; the final status is', async () => {
    handler = (_q, res) => {
      res.writeProcessing();
      res.writeHead(201, { 'content-type': 'text/plain' });
      res.end('made');
    };
    const res = await client.request(req());
    expect(res.status).toBe(201);
    expect(await readBodyText(res.body)).toBe('made');
  });

  it('an upstream that closes before its headers fails with a network TransportError', async () => {
    handler = (q) => q.socket.destroy();
    const err = await client.request(req()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).kind).toBe('network');
  });

  it('an upstream that goes silent mid-body ends it with an idle timeout', async () => {
    handler = (_q, res) => {
      res.writeHead(200);
      res.write('part');
    };
    const res = await client.request(req(undefined, { idleTimeoutMs: 50 }));
    const r = recorder();
    res.body.attach(r.sink);
    expect(await r.settled).toMatch(/^error/);
    expect(r.got).toEqual(['part']);
  });

  it('readBodyText stops at its limit and drops the rest', async () => {
    handler = (_q, res) => {
      res.writeHead(500);
      res.write('a'.repeat(10));
      res.write('b'.repeat(10));
    };
    const res = await client.request(req());
    expect(await readBodyText(res.body, 15)).toBe('a'.repeat(10) + 'b'.repeat(5));
  });
});
