// Loopback outbound proxies for tests: an HTTP proxy (CONNECT tunnels, plus absolute-URI
// forwarding) and a SOCKS5 proxy (RFC 1928 CONNECT, RFC 1929 user/password), each optionally
// leaving from its own loopback address (127.0.0.2, 127.0.0.3, ...) so two proxies give two
// distinct egress IPs on one machine; and an IP-echo server that answers the caller's address.
// Each records what it relayed. Nothing here touches the network beyond 127.0.0.0/8.
import { createServer as createHttpServer, request as httpRequest, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface ProxyOptions {
  /** Source address of the proxy's upstream sockets (the egress IP the far end sees). */
  localAddress?: string;
  /** Credentials the proxy requires. */
  auth?: { user: string; pass: string };
}

const listen = (server: Server | HttpServer): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

class Tracked {
  protected readonly sockets = new Set<Socket>();
  protected track(s: Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
  }
  protected closeAll(server: Server | HttpServer): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}

/** An HTTP proxy: CONNECT host:port tunnels and forwarded absolute-URI requests. */
export class HttpConnectProxy extends Tracked {
  /** Targets tunnelled or forwarded ("host:port"), in order. */
  readonly relayed: string[] = [];
  /** Requests refused for missing or wrong credentials. */
  authRefusals = 0;
  private port = 0;

  private constructor(
    private readonly server: HttpServer,
    private readonly o: ProxyOptions,
  ) {
    super();
  }

  static async start(o: ProxyOptions = {}): Promise<HttpConnectProxy> {
    const server = createHttpServer();
    const p = new HttpConnectProxy(server, o);
    server.on('connection', (s) => p.track(s));
    server.on('connect', (req, client: Socket, head) => p.tunnel(req.url ?? '', req.headers['proxy-authorization'], client, head));
    server.on('request', (req, res) => {
      if (!p.authorized(req.headers['proxy-authorization'])) {
        p.authRefusals++;
        res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
        return;
      }
      const target = new URL(req.url ?? '');
      p.relayed.push(`${target.hostname}:${target.port || 80}`);
      const headers = { ...req.headers };
      delete headers['proxy-authorization'];
      const up = httpRequest(
        { host: target.hostname, port: target.port || 80, path: `${target.pathname}${target.search}`, method: req.method, headers, localAddress: o.localAddress },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.writeHead(502).end());
      req.pipe(up);
    });
    p.port = await listen(server);
    return p;
  }

  get url(): string {
    const a = this.o.auth;
    return `http://${a ? `${encodeURIComponent(a.user)}:${encodeURIComponent(a.pass)}@` : ''}127.0.0.1:${this.port}`;
  }

  private authorized(header: string | undefined): boolean {
    const a = this.o.auth;
    if (!a) return true;
    return header === `Basic ${Buffer.from(`${a.user}:${a.pass}`).toString('base64')}`;
  }

  private tunnel(target: string, auth: string | undefined, client: Socket, head: Buffer): void {
    if (!this.authorized(auth)) {
      this.authRefusals++;
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const i = target.lastIndexOf(':');
    const host = target.slice(0, i).replace(/^\[|\]$/g, '');
    const port = Number(target.slice(i + 1));
    this.relayed.push(`${host}:${port}`);
    const up = connect({ host, port, localAddress: this.o.localAddress });
    this.track(up);
    up.on('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n'));
    client.on('error', () => up.destroy());
  }

  close(): Promise<void> {
    return this.closeAll(this.server);
  }
}

/** Reads exactly n bytes from a socket that has been paused into a buffer queue. */
class ByteReader {
  private buf = Buffer.alloc(0);
  private want: { n: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;

  constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.pump();
    });
    socket.on('close', () => this.want?.reject(new Error('closed')));
    socket.on('error', () => undefined);
  }

  read(n: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.want = { n, resolve, reject };
      this.pump();
    });
  }

  /** Whatever arrived beyond the handshake. */
  rest(): Buffer {
    const b = this.buf;
    this.buf = Buffer.alloc(0);
    return b;
  }

  private pump(): void {
    const w = this.want;
    if (!w || this.buf.length < w.n) return;
    this.want = null;
    const out = this.buf.subarray(0, w.n);
    this.buf = this.buf.subarray(w.n);
    w.resolve(out);
  }
}

/** A SOCKS5 proxy (CONNECT only; no auth, or username/password). */
export class Socks5Proxy extends Tracked {
  readonly relayed: string[] = [];
  authRefusals = 0;
  private port = 0;

  private constructor(
    private readonly server: Server,
    private readonly o: ProxyOptions,
  ) {
    super();
  }

  static async start(o: ProxyOptions = {}): Promise<Socks5Proxy> {
    const server = createServer();
    const p = new Socks5Proxy(server, o);
    server.on('connection', (s) => {
      p.track(s);
      p.handle(s).catch(() => s.destroy());
    });
    p.port = await listen(server);
    return p;
  }

  get url(): string {
    const a = this.o.auth;
    return `socks5://${a ? `${encodeURIComponent(a.user)}:${encodeURIComponent(a.pass)}@` : ''}127.0.0.1:${this.port}`;
  }

  private async handle(client: Socket): Promise<void> {
    const r = new ByteReader(client);
    const [ver, nMethods] = await r.read(2);
    if (ver !== 5) return void client.destroy();
    const methods = [...(await r.read(nMethods!))];
    const method = this.o.auth ? 0x02 : 0x00;
    if (!methods.includes(method)) {
      client.end(Buffer.from([5, 0xff]));
      return;
    }
    client.write(Buffer.from([5, method]));
    if (this.o.auth) {
      await r.read(1); // sub-negotiation version 1
      const user = (await r.read((await r.read(1))[0]!)).toString();
      const pass = (await r.read((await r.read(1))[0]!)).toString();
      if (user !== this.o.auth.user || pass !== this.o.auth.pass) {
        this.authRefusals++;
        client.end(Buffer.from([1, 1]));
        return;
      }
      client.write(Buffer.from([1, 0]));
    }
    const [, cmd, , atyp] = await r.read(4);
    let host: string;
    if (atyp === 1) host = [...(await r.read(4))].join('.');
    else if (atyp === 3) host = (await r.read((await r.read(1))[0]!)).toString();
    else if (atyp === 4) {
      const b = await r.read(16);
      host = [...Array(8).keys()].map((i) => b.readUInt16BE(i * 2).toString(16)).join(':');
    } else return void client.destroy();
    const port = (await r.read(2)).readUInt16BE(0);
    if (cmd !== 1) {
      client.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]));
      return;
    }
    this.relayed.push(`${host}:${port}`);
    const up = connect({ host, port, localAddress: this.o.localAddress });
    this.track(up);
    up.on('connect', () => {
      client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
      const rest = r.rest();
      if (rest.length) up.write(rest);
      client.removeAllListeners('data');
      up.pipe(client);
      client.pipe(up);
    });
    up.on('error', () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
    client.on('error', () => up.destroy());
  }

  close(): Promise<void> {
    return this.closeAll(this.server);
  }
}

/** Answers every GET with the caller's address as plain text ("127.0.0.2"), like api.ipify.org. */
export class IpEcho extends Tracked {
  /** Caller addresses, in order. */
  readonly seen: string[] = [];
  private port = 0;

  private constructor(private readonly server: HttpServer) {
    super();
  }

  static async start(): Promise<IpEcho> {
    const server = createHttpServer((req, res) => {
      const ip = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
      e.seen.push(ip);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`${ip}\n`);
    });
    const e = new IpEcho(server);
    server.on('connection', (s) => e.track(s));
    e.port = await listen(server);
    return e;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  close(): Promise<void> {
    return this.closeAll(this.server);
  }
}

/** A "proxy" that accepts every TCP connection and never answers (a hung proxy). */
export class SilentProxy extends Tracked {
  /** Connections accepted so far. */
  accepted = 0;
  private port = 0;

  private constructor(private readonly server: Server) {
    super();
  }

  static async start(): Promise<SilentProxy> {
    const p = new SilentProxy(createServer());
    p.server.on('connection', (s) => {
      p.accepted += 1;
      p.track(s);
      s.on('error', () => {});
      s.resume();
    });
    p.port = await listen(p.server);
    return p;
  }

  url(scheme: 'http' | 'socks5'): string {
    return `${scheme}://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return this.closeAll(this.server);
  }
}
