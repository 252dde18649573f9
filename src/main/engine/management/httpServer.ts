// The headless shell's HTTP face: the management API under /api (routes derived from the
// contract), server-sent events at /api/events, and the built dashboard at /. Loopback only by
// default: bound to 127.0.0.1, Host and Origin must be loopback. A team server opts in to another
// address and to its host names (net/exposure.ts); Host and Origin are then checked against those.
// Either way every /api call needs the token (a header, or the session cookie the sign-in link sets).
// Bounded: a slow client gets a 408, a body is at most 1 MiB and 32 levels deep, and an event-stream
// client that stops reading is not queued for without limit (see EventStream).
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import {
  contract,
  EVENTS_PATH,
  SESSION_PATH,
  METHOD_NAMES,
  type Handlers,
  type HttpMethod,
  type MethodName,
  type MethodSpec,
} from '../../../shared/contract';
import { cookieFromRequest, sessionCookie, sessionCookieName, tokenFromRequest, type ManagementToken } from '../auth/managementToken';
import { jsonTooDeep, MANAGEMENT_JSON_MAX_DEPTH, prototypeKeyPath } from '../../../shared/jsonBounds';
import type { Clock } from '../clock';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import { answerClientErrors, timeoutServerOptions, type InboundTimeouts } from '../net/inboundTimeouts';
import { answersOtherNames, hostCheck, LOOPBACK_ONLY, originCheck, type Exposure } from '../net/exposure';
import { EXPORT_ROWS_HEADER, EXPORT_TRUNCATED_HEADER, isExportFile, type ExportFile } from '../../../shared/usage';
import { dispatch } from './dispatch';
import { EventStream, type EventStreamLimits, type EventStreamStats } from './eventStream';

interface CompiledRoute {
  name: MethodName;
  method: HttpMethod;
  pattern: RegExp;
  params: string[];
  bodyField?: string;
  download?: boolean;
}

/** Compiles the contract's REST routes (exported for the drift test). */
export function compileRoutes(): CompiledRoute[] {
  return METHOD_NAMES.map((name) => {
    const spec = contract[name] as MethodSpec;
    const params: string[] = [];
    const re = spec.path.replace(/:([A-Za-z_]+)/g, (_m, p: string) => {
      params.push(p);
      return '([^/]+)';
    });
    return { name, method: spec.http, pattern: new RegExp(`^${re}$`), params, bodyField: spec.bodyField, download: spec.download === true };
  });
}

/**
 * The route for a method and path with its decoded path parameters; 'method_not_allowed' when the
 * path exists for other methods, 'invalid_path' when a parameter has a malformed %-escape.
 */
export function matchRoute(routes: CompiledRoute[], method: string, path: string) {
  let pathMatched = false;
  for (const r of routes) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (r.method !== method) continue;
    const params: Record<string, string> = {};
    try {
      r.params.forEach((p, i) => (params[p] = decodeURIComponent(m[i + 1]!)));
    } catch {
      return 'invalid_path' as const;
    }
    return { route: r, params };
  }
  return pathMatched ? ('method_not_allowed' as const) : null;
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

export interface ManagementHttpOptions {
  handlers: Handlers;
  token: ManagementToken;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  /** Directory of the built dashboard (index.html + assets); null serves a plain notice. */
  rendererDir: string | null;
  /** Initial payloads sent to a new event-stream subscriber. */
  initialEvents?: () => { name: string; payload: unknown }[];
  /** How long a client may take to send a request; defaults to MANAGEMENT_TIMEOUTS. */
  timeouts?: InboundTimeouts;
  /** Bounds for an event-stream client that stops reading; defaults in eventStream.ts. */
  eventStream?: Partial<EventStreamLimits>;
  /** Where it listens and which host names it answers; default: loopback only. */
  exposure?: Exposure;
}

/** Management requests are small (a body is at most 1 MiB) and come from this machine. */
export const MANAGEMENT_TIMEOUTS: InboundTimeouts = { headersMs: 10_000, requestMs: 30_000 };
const MAX_BODY_BYTES = 1024 * 1024;

export class ManagementHttpServer {
  private server: Server | null = null;
  private readonly routes = compileRoutes();
  private readonly streams = new Set<EventStream>();
  private readonly exposure: Exposure;
  private readonly hostAllowed: (host: string | undefined) => boolean;
  private readonly originAllowed: (origin: string | undefined) => boolean;

  constructor(private readonly o: ManagementHttpOptions) {
    this.exposure = o.exposure ?? LOOPBACK_ONLY;
    this.hostAllowed = hostCheck(this.exposure);
    this.originAllowed = originCheck(this.exposure);
  }

  get port(): number | null {
    const a = this.server?.address() as AddressInfo | null | undefined;
    return a ? a.port : null;
  }

  /** Buffered bytes and drop counts of each open event stream (for health checks and tests). */
  eventStreams(): EventStreamStats[] {
    return [...this.streams].map((s) => s.stats());
  }

  listen(port: number): Promise<number> {
    const server = createServer(timeoutServerOptions(this.o.timeouts ?? MANAGEMENT_TIMEOUTS), (req, res) => void this.handle(req, res));
    answerClientErrors(server, (a) => JSON.stringify({ error: { code: a.code, message: a.message } }));
    return new Promise((resolvePort, reject) => {
      server.once('error', reject);
      server.listen(port, this.exposure.bindHost, () => {
        server.off('error', reject);
        this.server = server;
        resolvePort((server.address() as AddressInfo).port);
      });
    });
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.close();
    this.streams.clear();
    const s = this.server;
    this.server = null;
    if (!s) return;
    await new Promise<void>((r) => {
      s.close(() => r());
      s.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    try {
      if (!this.hostAllowed(req.headers.host) || !this.originAllowed(req.headers.origin as string | undefined)) {
        const message = answersOtherNames(this.exposure)
          ? "this server answers only to its allowed host names (the server's --allowed-host or --public-url)"
          : 'the management API answers loopback only';
        return this.json(res, 403, { error: { code: 'forbidden_host', message } });
      }
      if (path === '/api' || path.startsWith('/api/')) {
        const byHeader = this.o.token.matches(tokenFromRequest(req.headers));
        if (!byHeader && !this.o.token.matchesSession(cookieFromRequest(req.headers, this.cookieName()))) {
          return this.json(res, 401, {
            error: { code: 'unauthorized', message: 'missing or wrong management token (Authorization: Bearer <token>)' },
          });
        }
        if (path === SESSION_PATH) return this.session(req, res, byHeader);
        if (path === EVENTS_PATH && req.method === 'GET') return this.events(req, res);
        return await this.api(req, res, url, path);
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return this.json(res, 405, { error: { code: 'method_not_allowed', message: `${req.method} is not allowed here` } });
      }
      if (url.searchParams.has('token')) return this.exchangeLink(res, url);
      return this.static(res, path);
    } catch (err) {
      this.o.log.error('management.http', { err, path });
      if (!res.headersSent) this.json(res, 500, { error: { code: 'internal_error', message: 'internal error' } });
      else res.destroy();
    }
  }

  private cookieName(): string {
    return sessionCookieName(this.port);
  }

  /** Set-Cookie for the session; Secure when the dashboard is reached over https (TLS terminated in front). */
  private cookie(value: string | null): string {
    const c = sessionCookie(this.cookieName(), value);
    return this.exposure.secureCookie ? `${c}; Secure` : c;
  }

  /**
   * A `?token=` link: the token is exchanged once for the session cookie, and the browser is sent
   * to the same address without it, so it leaves the address bar and the history entry. A wrong
   * token sets no cookie (the dashboard then asks for one).
   */
  private exchangeLink(res: ServerResponse, url: URL) {
    const ok = this.o.token.matches(url.searchParams.get('token'));
    url.searchParams.delete('token');
    const headers: Record<string, string> = { location: url.pathname + url.search + url.hash, 'cache-control': 'no-store', ...SECURITY_HEADERS };
    if (ok) headers['set-cookie'] = this.cookie(this.o.token.sessionValue());
    res.writeHead(303, headers);
    res.end();
  }

  /**
   * `POST /api/session` with the token in a header sets the session cookie (the dashboard's token
   * gate); `DELETE /api/session` clears it ("Forget token").
   */
  private session(req: IncomingMessage, res: ServerResponse, byHeader: boolean) {
    if (req.method === 'DELETE') {
      res.writeHead(204, { 'set-cookie': this.cookie(null), 'cache-control': 'no-store', ...SECURITY_HEADERS });
      res.end();
      return;
    }
    if (req.method !== 'POST') {
      return this.json(res, 405, { error: { code: 'method_not_allowed', message: `${req.method} is not allowed on ${SESSION_PATH}` } });
    }
    if (!byHeader) {
      return this.json(res, 401, { error: { code: 'unauthorized', message: 'send the management token in the Authorization header' } });
    }
    res.writeHead(204, { 'set-cookie': this.cookie(this.o.token.sessionValue()), 'cache-control': 'no-store', ...SECURITY_HEADERS });
    res.end();
  }

  private async api(req: IncomingMessage, res: ServerResponse, url: URL, path: string) {
    const m = matchRoute(this.routes, req.method ?? 'GET', path);
    if (m === null) return this.json(res, 404, { error: { code: 'not_found', message: `no such route: ${path}` } });
    if (m === 'method_not_allowed') {
      return this.json(res, 405, { error: { code: 'method_not_allowed', message: `${req.method} is not allowed on ${path}` } });
    }
    if (m === 'invalid_path') {
      return this.json(res, 400, {
        error: { code: 'invalid_input', message: 'the path has a malformed %-escape', field: '(path)' },
      });
    }
    const input: Record<string, unknown> = {};
    for (const [k, v] of url.searchParams) input[k] = v;
    let body: unknown = undefined;
    if (req.method !== 'GET') {
      const raw = await readBody(req, MAX_BODY_BYTES);
      if (raw === 'too_large') {
        return this.json(res, 413, { error: { code: 'payload_too_large', message: 'body larger than 1 MiB' } });
      }
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return this.json(res, 400, { error: { code: 'invalid_json', message: 'the body is not valid JSON', field: '(body)' } });
        }
        if (jsonTooDeep(body, MANAGEMENT_JSON_MAX_DEPTH)) {
          return this.json(res, 400, {
            error: {
              code: 'invalid_json',
              message: `the body nests arrays/objects deeper than ${MANAGEMENT_JSON_MAX_DEPTH} levels`,
              field: '(body)',
            },
          });
        }
        // Checked here, not only in the contract: merging such a key into the input would set its prototype.
        const protoKey = prototypeKeyPath(body, MANAGEMENT_JSON_MAX_DEPTH);
        if (protoKey) {
          const field = protoKey.join('.');
          return this.json(res, 400, {
            error: { code: 'invalid_input', message: `${field}: a key named "${protoKey.at(-1)}" is not allowed`, field },
          });
        }
      }
    }
    if (m.route.bodyField) {
      // An empty body is an empty object; an explicit null is not one.
      if (body === null) {
        return this.json(res, 400, { error: { code: 'invalid_input', message: 'the body must be a JSON object, not null', field: '(body)' } });
      }
      input[m.route.bodyField] = body ?? {};
    } else if (body !== undefined) {
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        return this.json(res, 400, { error: { code: 'invalid_input', message: 'the body must be a JSON object', field: '(body)' } });
      }
      Object.assign(input, body);
    }
    Object.assign(input, m.params);
    const r = await dispatch(this.o.handlers, m.route.name, input, this.o.log);
    if (r.ok && m.route.download && isExportFile(r.value)) this.download(res, r.value);
    else if (r.ok) this.json(res, 200, r.value);
    else this.json(res, r.status, r.body);
  }

  /** An export: the file itself, as an attachment named by the export. */
  private download(res: ServerResponse, file: ExportFile) {
    const ascii = file.filename.replace(/[^A-Za-z0-9._-]/g, '_');
    res.writeHead(200, {
      'content-type': file.contentType,
      'content-length': Buffer.byteLength(file.body),
      'content-disposition': `attachment; filename="${ascii}"`,
      'cache-control': 'no-store',
      [EXPORT_ROWS_HEADER]: String(file.rows),
      [EXPORT_TRUNCATED_HEADER]: String(file.truncated),
      ...SECURITY_HEADERS,
    });
    res.end(file.body);
  }

  private events(req: IncomingMessage, res: ServerResponse) {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      ...SECURITY_HEADERS,
    });
    const stream = new EventStream(res, this.o.clock, this.o.log.child('events'), this.o.eventStream);
    stream.comment('connected');
    for (const e of this.o.initialEvents?.() ?? []) stream.send(e.name, e.payload);
    const off = this.o.bus.onAny((name, payload) => stream.send(name, payload));
    this.streams.add(stream);
    req.on('close', () => {
      off();
      stream.close();
      this.streams.delete(stream);
    });
  }

  private static(res: ServerResponse, path: string) {
    const dir = this.o.rendererDir;
    if (!dir || !existsSync(join(dir, 'index.html'))) {
      const msg =
        'The dashboard is not built. Run "npm run build" (npm run serve does it for you), then reload.';
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
      res.end(msg);
      return;
    }
    const root = resolve(dir);
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return this.json(res, 400, { error: { code: 'invalid_path', message: 'the path has a malformed %-escape' } });
    }
    let file = resolve(join(root, normalize(decoded)));
    if (file !== root && !file.startsWith(root + sep)) {
      return this.json(res, 404, { error: { code: 'not_found', message: 'not found' } });
    }
    if (!existsSync(file) || !statSync(file).isFile()) file = join(root, 'index.html');
    const ext = extname(file);
    res.writeHead(200, {
      'content-type': MIME[ext] ?? 'application/octet-stream',
      'cache-control': ext === '.html' ? 'no-cache' : 'public, max-age=31536000, immutable',
      ...SECURITY_HEADERS,
    });
    createReadStream(file).pipe(res);
  }

  private json(res: ServerResponse, status: number, value: unknown) {
    const body = JSON.stringify(value);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      ...SECURITY_HEADERS,
    });
    res.end(body);
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolveBody(over ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
