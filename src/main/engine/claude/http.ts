// The small HTTP port the Claude account modules use for the token endpoint and the account API
// (usage, profile, limit reset). Injected, so unit tests can answer from a fake server or a stub;
// the default goes over undici with its own timeouts (never the process-global fetch).
import { Agent } from '../upstream/undici';

export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  /** Request body, already serialised (JSON). */
  body?: string;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** At most 256 KiB of the body as UTF-8. */
  text: string;
}

export type HttpFn = (req: HttpRequest) => Promise<HttpResponse>;

/** The request never got an answer (refused, reset, DNS, timeout, aborted). Always transient. */
export class HttpTransportError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'HttpTransportError';
  }
}

const MAX_BODY = 256 * 1024;

export function flattenHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** The default HttpFn: undici with a connect/headers/body timeout, body read up to 256 KiB. */
export function createUndiciHttp(opts: { timeoutMs?: number } = {}): HttpFn {
  const timeout = opts.timeoutMs ?? 30_000;
  let agent: InstanceType<typeof Agent> | null = null;
  return async (req) => {
    try {
      const url = new URL(req.url);
      const res = await (agent ??= new Agent()).request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal: req.signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        const b = chunk as Buffer;
        if (size < MAX_BODY) chunks.push(b.subarray(0, MAX_BODY - size));
        size += b.length;
      }
      return { status: res.statusCode, headers: flattenHeaders(res.headers), text: Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      const e = err as { code?: string; message?: string; cause?: { code?: string } };
      const code = e?.code ?? e?.cause?.code;
      throw new HttpTransportError(`request to ${new URL(req.url).origin} failed${code ? ` (${code})` : ''}`, code);
    }
  };
}

/** Parses a JSON body; undefined when it is not JSON. */
export function jsonBody(res: HttpResponse): unknown {
  try {
    return JSON.parse(res.text);
  } catch {
    return undefined;
  }
}
