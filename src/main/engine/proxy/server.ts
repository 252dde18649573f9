// The inbound proxy server (127.0.0.1 only unless a team server opts in, net/exposure.ts):
// authenticates the client key, checks Host against DNS rebinding, reads the bounded JSON body and
// hands the call to the pipeline.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { InboundProtocol, WireProtocol } from '../../../shared/model';
import type { ClientKeyService } from '../auth/clientKeys';
import { answerClientErrors, setServerTimeouts, timeoutServerOptions, type InboundTimeouts } from '../net/inboundTimeouts';
import { answersOtherNames, hostCheck, LOOPBACK_ONLY, type Exposure } from '../net/exposure';
import type { LeaseEndpoint } from '../routing/leases/leaseEndpoint';
import type { UpstreamEndpoint } from '../upstream/headers';
import { parseJsonObject, readRequestBody } from './body';
import { errorBody, ProxyError, sendProxyError } from './errors';
import { inForeground } from './foreground';
import type { InboundCall } from './inbound';
import { MemberMemory } from './memberMemory';
import { BodyReads, ParsedCall, readsTopLevelOnly } from './parsedCall';
import { byteLengthOf } from './requestBytes';
import type { YoungNudge } from '../memory/youngNudge';
import { geminiModelsResponse, modelsResponse } from './models';
import { geminiCall } from '../codecs/geminiRequest';
import { runPipeline, type PipelineDeps } from './pipeline';

interface Route {
  protocol: InboundProtocol;
  endpoint: UpstreamEndpoint;
  wire: WireProtocol;
}

const ROUTES: Record<string, Route> = {
  '/v1/messages': { protocol: 'anthropic-messages', endpoint: 'messages', wire: 'anthropic' },
  '/v1/messages/count_tokens': { protocol: 'anthropic-count-tokens', endpoint: 'count_tokens', wire: 'anthropic' },
  '/v1/chat/completions': { protocol: 'openai-chat', endpoint: 'chat', wire: 'openai' },
  '/v1/responses': { protocol: 'openai-responses', endpoint: 'responses', wire: 'openai' },
};
// Gemini routes name the model and method in the path (/v1beta/models/{model}:{method}).
const GEMINI_ROUTE: Route = { protocol: 'gemini', endpoint: 'gemini', wire: 'gemini' };
const GEMINI_COUNT_ROUTE: Route = { protocol: 'gemini-count-tokens', endpoint: 'gemini_count', wire: 'gemini' };
// Clients configured with a base URL that lacks /v1 still reach the same endpoints.
for (const [path, route] of Object.entries({ ...ROUTES })) ROUTES[path.slice(3)] = route;

export interface ProxyServerDeps extends PipelineDeps {
  clientKeys: ClientKeyService;
  startedAt: number;
  /** POST /api/v1/session-leases (exclusive connection leases, R-LS-02). */
  leases?: LeaseEndpoint;
  /** Where it listens and which host names it answers; default: loopback only. */
  exposure?: Exposure;
  /** Large bodies' Buffers freed by a young collection when idle (memory/youngNudge.ts). */
  youngNudge?: YoungNudge;
}

/** The lease lifecycle endpoint, on this port (also without the /api prefix). */
const LEASE_PATHS = new Set(['/api/v1/session-leases', '/v1/session-leases']);
const LEASE_BODY_MAX_BYTES = 16 * 1024;

/** The client key: a bearer token, `x-api-key`, or as Google clients send it, `x-goog-api-key` or `?key=`. */
function clientKeyOf(req: IncomingMessage, query: string): string | null {
  const auth = req.headers['authorization'];
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  const x = req.headers['x-api-key'] ?? req.headers['x-goog-api-key'];
  if (typeof x === 'string' && x) return x.trim();
  if (query) {
    const k = new URLSearchParams(query).get('key');
    if (k) return k.trim();
  }
  return null;
}

/** Google's API version prefixes: a path under one is a Gemini request. */
const isGeminiPath = (path: string) => path.startsWith('/v1beta/') || path.startsWith('/v1alpha/') || path === '/v1beta' || (path.startsWith('/v1/models/') && path.includes(':'));

function protocolForPath(path: string, headers: IncomingMessage['headers']): InboundProtocol {
  if (isGeminiPath(path)) return 'gemini';
  if (path.includes('/messages') || headers['anthropic-version']) return 'anthropic-messages';
  return 'openai-chat';
}

const isGoogleClient = (req: IncomingMessage, query: string) =>
  typeof req.headers['x-goog-api-key'] === 'string' || typeof req.headers['x-goog-api-client'] === 'string' || /(^|&)key=/.test(query);

const GEMINI_MODELS = /^(?:\/(?:v1beta|v1alpha|v1))?\/models(?:\/([^:]+))?$/;

/** Request ids: a random per-process prefix and a counter (unique across restarts, cheap per request). */
function requestIdFactory(): () => string {
  const prefix = randomBytes(6).toString('hex');
  let n = 0;
  return () => `req_${prefix}${(n++).toString(36).padStart(6, '0')}`;
}

export class ProxyServer {
  private server: Server | null = null;
  private readonly nextRequestId = requestIdFactory();
  private readonly bodyReads = new BodyReads();
  /** Large members of each client's recent bodies, which the next scan need not check again. */
  private readonly members = new MemberMemory();
  private readonly exposure: Exposure;
  private readonly hostAllowed: (host: string | undefined) => boolean;
  private readonly hostRefusal: string;

  constructor(private readonly deps: ProxyServerDeps) {
    this.exposure = deps.exposure ?? LOOPBACK_ONLY;
    this.hostAllowed = hostCheck(this.exposure);
    this.hostRefusal = answersOtherNames(this.exposure)
      ? "requests must address one of this server's allowed host names (the server's --allowed-host, --public-url or --proxy-url)"
      : 'requests must address 127.0.0.1 or localhost';
    deps.settings.onChange((changed) => {
      if (this.server && changed.some((k) => k === 'proxy.headersTimeoutMs' || k === 'proxy.requestTimeoutMs')) {
        setServerTimeouts(this.server, this.timeouts());
      }
    });
  }

  private timeouts(): InboundTimeouts {
    const v = this.deps.settings.values;
    return { headersMs: v['proxy.headersTimeoutMs'], requestMs: v['proxy.requestTimeoutMs'] };
  }

  get port(): number | null {
    const a = this.server?.address() as AddressInfo | null | undefined;
    return a ? a.port : null;
  }

  /**
   * Listens on `port`. When already listening elsewhere, the new listener is bound first and the
   * old one closed only after that succeeded, so a busy port never leaves the proxy without one.
   */
  listen(port: number): Promise<number> {
    const server = createServer({ keepAlive: true, ...timeoutServerOptions(this.timeouts()) }, (req, res) => {
      void this.handle(req, res);
    });
    server.keepAliveTimeout = 65_000;
    // A client too slow with its headers or body gets a 408 in its protocol's shape (the path says
    // which, when the headers made it); one still in its headers gets the OpenAI shape.
    answerClientErrors(server, (a, req) => {
      const path = req?.url?.split('?')[0]?.replace(/\/+$/, '') ?? '';
      const protocol = ROUTES[path]?.protocol ?? (req ? protocolForPath(path, req.headers) : 'openai-chat');
      return JSON.stringify(errorBody(protocol, new ProxyError(a.status, a.code, a.message), this.nextRequestId()));
    });
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => {
        server.off('listening', onListening);
        reject(err);
      };
      const onListening = () => {
        server.off('error', onError);
        const old = this.server;
        this.server = server;
        if (old) void closeServer(old);
        resolve((server.address() as AddressInfo).port);
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(port, this.exposure.bindHost);
    });
  }

  async close(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (s) await closeServer(s);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const d = this.deps;
    const requestId = this.nextRequestId();
    const qIndex = req.url?.indexOf('?') ?? -1;
    const path = withoutTrailingSlash(qIndex >= 0 ? req.url!.slice(0, qIndex) : (req.url ?? '/')) || '/';
    const query = qIndex >= 0 ? req.url!.slice(qIndex + 1) : '';
    let guessProtocol = protocolForPath(path, req.headers);
    try {
      if (!this.hostAllowed(req.headers.host)) throw new ProxyError(403, 'forbidden_host', this.hostRefusal);
      if (path === '/' || path === '/health' || path === '/v1') {
        if (req.method === 'GET' || req.method === 'HEAD') {
          const body = JSON.stringify({ status: 'ok', service: 'switchyard-proxy' });
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          res.end(req.method === 'HEAD' ? undefined : body);
          return;
        }
      }
      const key = d.clientKeys.authenticate(clientKeyOf(req, query));
      if (!key) {
        throw new ProxyError(
          401,
          'invalid_client_key',
          'missing or unknown client key: send a Switchyard client key as "Authorization: Bearer <key>", "x-api-key" or "x-goog-api-key"',
        );
      }
      if (LEASE_PATHS.has(path) && d.leases) {
        if (req.method !== 'POST') throw new ProxyError(405, 'method_not_allowed', `use POST for ${path}`);
        const answer = JSON.stringify(await d.leases.handle(key, parseJsonObject(await readRequestBody(req, LEASE_BODY_MAX_BYTES))));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer), 'x-switchyard-request-id': requestId });
        res.end(answer);
        return;
      }
      // @google/genai lists at /v1/models: a Google client (its key header, `?key=`, its client header) gets Google's shape.
      if ((path === '/v1/models' || path === '/models') && isGoogleClient(req, query)) guessProtocol = 'gemini';
      if ((path === '/v1/models' || path === '/models') && guessProtocol !== 'gemini') {
        if (req.method !== 'GET') throw new ProxyError(405, 'method_not_allowed', 'use GET for /v1/models');
        const body = JSON.stringify(modelsResponse(d.registry.all(), req.headers, d.startedAt, d.combos?.combos() ?? []));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      let route: Route | undefined = guessProtocol === 'gemini' ? undefined : ROUTES[path];
      let gemini: InboundCall['gemini'];
      if (!route && guessProtocol === 'gemini') {
        const listing = GEMINI_MODELS.exec(path);
        if (listing && (req.method === 'GET' || req.method === 'HEAD')) {
          const answer = geminiModelsResponse(d.registry.all(), d.combos?.combos() ?? [], listing[1] ? decodeURIComponent(listing[1]) : null);
          if (!answer) throw new ProxyError(404, 'model_not_found', `no connection serves the model ${listing[1]}`);
          const text = JSON.stringify(answer);
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(req.method === 'HEAD' ? undefined : text);
          return;
        }
        const g = geminiCall(path + (query ? `?${query}` : ''));
        if (g) {
          route = g.method === 'countTokens' ? GEMINI_COUNT_ROUTE : GEMINI_ROUTE;
          gemini = { model: g.model, stream: g.stream, sse: g.sse };
        }
      }
      if (!route) throw new ProxyError(404, 'not_found', `no such endpoint: ${req.method} ${path}`);
      if (req.method !== 'POST') throw new ProxyError(405, 'method_not_allowed', `use POST for ${path}`);
      const body = await readRequestBody(req, d.settings.values['proxy.maxBodyBytes']);
      // Fields spelled out (not `...route`): a spread makes V8 build the call object the slow way.
      const fields = {
        protocol: route.protocol,
        endpoint: route.endpoint,
        wire: route.wire,
        req,
        res,
        requestId,
        startedAt: d.clock.now(),
        startMono: d.clock.monotonic(),
        clientKeyId: key.id,
        body,
        json: null as Record<string, unknown> | null,
      };
      // An agent-sized body is read as its top level (parsedCall.ts), the members it shares with the
      // client's recent ones not checked again (memberMemory.ts), unless the client's last one was
      // translated at its first target (BodyReads); any other is parsed whole.
      const protocol = route.protocol;
      const large = readsTopLevelOnly(protocol, gemini, body);
      const topLevelOnly = large && this.bodyReads.topLevel(protocol, key.id);
      const nudge = d.youngNudge;
      nudge?.start(topLevelOnly ? byteLengthOf(body) : 0);
      try {
        let call: ParsedCall;
        if (topLevelOnly) call = ParsedCall.fromBytes(fields, this.members.of(protocol, key.id));
        else {
          fields.json = parseJsonObject(body);
          call = new ParsedCall(fields);
        }
        if (gemini) call.gemini = gemini;
        if (large) call.onRouted = (translated) => this.bodyReads.routed(protocol, key.id, translated);
        inForeground(call, d.log);
        await runPipeline(d, call);
      } finally {
        nudge?.end();
      }
    } catch (err) {
      // The socket is gone (client left, or it was too slow and got its 408): nobody to answer.
      if (res.destroyed) return;
      const protocol = ROUTES[path]?.protocol ?? guessProtocol;
      if (err instanceof ProxyError) {
        sendProxyError(res, protocol, err, requestId);
        return;
      }
      d.log.error('proxy.unhandled', { err, path });
      sendProxyError(res, protocol, new ProxyError(500, 'internal_error', 'internal error in the proxy'), requestId);
    }
  }
}

/** Stops accepting connections; streams in progress get a moment to finish, then are cut. */
function closeServer(s: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    s.close(() => resolve());
    s.closeIdleConnections();
    const t = setTimeoutUnref(() => s.closeAllConnections(), 2_000);
    s.once('close', () => clearTimeout(t));
  });
}

function setTimeoutUnref(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
  // Shutdown only: not part of any behaviour under test, so it uses the real timer.
  // eslint-disable-next-line no-restricted-syntax
  const t = setTimeout(fn, ms);
  t.unref();
  return t;
}

/** The path without its trailing slashes (a path without one, nearly every request's, is not scanned). */
const withoutTrailingSlash = (p: string): string => (p.charCodeAt(p.length - 1) === 47 ? p.replace(/\/+$/, '') : p);
