// The Bridge over HTTP, for the dashboard in a browser against the headless shell: each method
// maps to its REST route (derived from the contract), and pushes arrive as server-sent events read
// with fetch (so the token travels in a header or the session cookie, never in a URL), reconnecting
// with backoff.
// A `resync` event means the engine dropped pushes for this client (it had stopped reading): that
// is reported as a drop and a return of the live link, so whoever re-reads after a reconnect (the
// dashboard reads every topic) does the same now.
import { BridgeError } from '../../shared/bridge';
import { SseParser } from '../../shared/sse';
import {
  contract,
  EVENT_NAMES,
  EVENTS_PATH,
  METHOD_NAMES,
  RESYNC_EVENT,
  type Bridge,
  type EventName,
  type MethodName,
  type MethodSpec,
} from '../../shared/contract';
import { attachmentFilename, EXPORT_ROWS_HEADER, EXPORT_TRUNCATED_HEADER, type ExportFile } from '../../shared/usage';

export interface HttpBridgeOptions {
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; null: the browser's session cookie authenticates instead. */
  token: string | null;
  fetch?: typeof fetch;
  /** Called when the event stream connects or drops (for a connection indicator). */
  onStatus?: (s: 'connecting' | 'open' | 'closed' | 'unauthorized') => void;
  /** Delay before reconnecting the event stream, by attempt. */
  retryDelayMs?: (attempt: number) => number;
}

/** Builds method, URL and body for a contract call (exported for the drift test). */
export function requestFor(name: MethodName, input: Record<string, unknown> = {}) {
  const spec = contract[name] as MethodSpec;
  const rest: Record<string, unknown> = { ...input };
  const path = spec.path.replace(/:([A-Za-z_]+)/g, (_m, p: string) => {
    const v = rest[p];
    delete rest[p];
    return encodeURIComponent(String(v ?? ''));
  });
  let body: unknown = undefined;
  const query = new URLSearchParams();
  if (spec.bodyField) {
    body = rest[spec.bodyField] ?? {};
    delete rest[spec.bodyField];
  } else if (spec.http !== 'GET') {
    body = rest;
  }
  if (spec.http === 'GET' || spec.bodyField) {
    for (const [k, v] of Object.entries(rest)) if (v !== undefined && v !== null) query.set(k, String(v));
  }
  const qs = query.toString();
  return { method: spec.http, path: qs ? `${path}?${qs}` : path, body };
}

export function createHttpBridge(o: HttpBridgeOptions): Bridge & { close(): void } {
  const f = o.fetch ?? fetch.bind(globalThis);
  const base = o.baseUrl.replace(/\/+$/, '');
  const auth: Record<string, string> = o.token ? { authorization: `Bearer ${o.token}` } : {};
  const api: Record<string, unknown> = {};

  for (const name of METHOD_NAMES) {
    api[name] = async (input?: Record<string, unknown>) => {
      const r = requestFor(name, input ?? {});
      let res: Response;
      try {
        res = await f(`${base}${r.path}`, {
          method: r.method,
          headers: {
            ...auth,
            ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          body: r.body !== undefined ? JSON.stringify(r.body) : undefined,
        });
      } catch {
        throw new BridgeError('network_error', 'Switchyard is not reachable; is it still running?');
      }
      const text = await res.text();
      // An export answers with the file itself: read it back into the ExportFile the contract declares.
      const filename = res.ok && (contract[name] as MethodSpec).download ? attachmentFilename(res.headers.get('content-disposition')) : null;
      if (filename !== null) {
        const file: ExportFile = {
          filename,
          contentType: res.headers.get('content-type') ?? 'application/octet-stream',
          body: text,
          rows: Number(res.headers.get(EXPORT_ROWS_HEADER) ?? 0),
          truncated: res.headers.get(EXPORT_TRUNCATED_HEADER) === 'true',
        };
        return file;
      }
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = null;
      }
      if (!res.ok) {
        const err = (json as { error?: { code?: string; message?: string; field?: string } } | null)?.error;
        throw new BridgeError(err?.code ?? `http_${res.status}`, err?.message ?? `request failed (${res.status})`, err?.field, res.status);
      }
      return json;
    };
  }

  const listeners = new Map<EventName, Set<(p: unknown) => void>>();
  const known = new Set<string>(EVENT_NAMES);
  let controller: AbortController | null = null;
  let closed = false;
  let attempt = 0;

  const deliver = (name: string, data: string) => {
    if (name === RESYNC_EVENT) {
      o.onStatus?.('closed');
      o.onStatus?.('open');
      return;
    }
    if (!known.has(name)) return;
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      return;
    }
    for (const fn of listeners.get(name as EventName) ?? []) fn(payload);
  };

  const connect = async () => {
    if (closed) return;
    controller = new AbortController();
    o.onStatus?.('connecting');
    try {
      const res = await f(`${base}${EVENTS_PATH}`, {
        headers: { ...auth, accept: 'text/event-stream' },
        signal: controller.signal,
      });
      if (res.status === 401) {
        o.onStatus?.('unauthorized');
        return;
      }
      if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
      attempt = 0;
      o.onStatus?.('open');
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const m of parser.push(decoder.decode(value, { stream: true }))) deliver(m.event, m.data);
      }
    } catch {
      // dropped: reconnect below
    }
    if (closed) return;
    o.onStatus?.('closed');
    const delay = (o.retryDelayMs ?? ((n) => Math.min(10_000, 500 * 2 ** n)))(attempt++);
    setTimeout(() => void connect(), delay);
  };

  api.on = (event: EventName, fn: (p: unknown) => void) => {
    if (!known.has(event)) throw new Error(`unknown event ${String(event)}`);
    let set = listeners.get(event);
    if (!set) listeners.set(event, (set = new Set()));
    set.add(fn);
    if (!controller) void connect();
    return () => set!.delete(fn);
  };
  api.close = () => {
    closed = true;
    controller?.abort();
  };
  return api as unknown as Bridge & { close(): void };
}
