// Raw HTTP for the management API tests: node:http (not fetch) so a test can send any Host or
// Origin header, and a small server-sent-events reader for /api/events.
import { SseParser } from '../../../src/shared/sse';
import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

export function rawRequest(
  baseUrl: string,
  o: { method?: string; path: string; headers?: Record<string, string>; body?: string | object },
): Promise<RawResponse> {
  const url = new URL(o.path, baseUrl);
  const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: o.method ?? 'GET',
        // Keep the path exactly as given (no normalisation of %-escapes).
        path: o.path,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
          ...o.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown = undefined;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export interface SseEvent {
  event: string;
  data: any;
}

/**
 * Opens GET /api/events and collects events. `until` resolves once an event matching the predicate
 * has arrived (or rejects after a safety limit, which is not a timing assertion).
 */
export async function openEventStream(baseUrl: string, token: string) {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/api/events`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  const waiters: { match: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }[] = [];
  const pump = (async () => {
    if (!res.body) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        for (const m of parser.push(decoder.decode(value, { stream: true }))) {
          const e = { event: m.event, data: JSON.parse(m.data) };
          events.push(e);
          for (const w of [...waiters]) {
            if (w.match(e)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(e);
            }
          }
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    events,
    /** The first event (already received or still to come) that matches. */
    until(match: (e: SseEvent) => boolean, after = 0, limitMs = 10_000): Promise<SseEvent> {
      const seen = events.slice(after).find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no matching event; got ${events.map((e) => e.event).join(', ')}`)), limitMs);
        waiters.push({
          match,
          resolve: (e) => {
            clearTimeout(t);
            resolve(e);
          },
        });
      });
    },
    async close() {
      controller.abort();
      await pump;
    },
  };
}
