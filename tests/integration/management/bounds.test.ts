// Bounds on the management server: an event-stream client that stops reading is not queued for
// without limit (events are dropped past a byte bound, a resync follows once it drains, a client
// stuck too long is closed); a slow client gets a typed 408; bodies that are too deep, null, or
// carry a prototype key are a typed 400 and nothing is written.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_SPECIFIC_DATA_LIMITS, RESYNC_EVENT } from '../../../src/shared/contract';
import { MANAGEMENT_JSON_MAX_DEPTH } from '../../../src/shared/jsonBounds';
import type { RequestLogEntry } from '../../../src/shared/model';
import { ManagementToken } from '../../../src/main/engine/auth/managementToken';
import { EventBus } from '../../../src/main/engine/events';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { ManagementHttpServer } from '../../../src/main/engine/management/httpServer';
import { createHttpBridge } from '../../../src/renderer/bridge/http';
import { FakeClock } from '../../support/fakeClock';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { openRaw, parseRawResponse, type RawExchange } from '../../support/rawSocket';
import { recordingHandlers } from '../../unit/foundation/support/contractSamples';
import { rawRequest } from './http';

const MAX_BUFFERED = 64 * 1024;
const STUCK_CLOSE_MS = 30_000;
/** One push of about 16 KiB. */
const bigPush = (i: number) => [{ id: `r${i}`, errorMessage: 'x'.repeat(16 * 1024) }] as unknown as RequestLogEntry[];
const PUSH_BYTES = Buffer.byteLength(`event: logs\ndata: ${JSON.stringify(bigPush(0))}\n\n`) + 16;

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

/** Resolves once cond() holds; the limit is a safety net, not a timing assertion. */
async function waitUntil(cond: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  for (let waited = 0; !cond(); waited += 5) {
    if (waited > limitMs) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * A fetch for the renderer's HTTP bridge whose event-stream body is held back (the client reads
 * nothing) until flow() is called.
 */
function gatedEventStream() {
  let flow!: () => void;
  const flowing = new Promise<void>((r) => (flow = r));
  const gated: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!String(input).endsWith('/api/events') || !res.body) return res;
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          await flowing;
          const { value, done } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: gated, flow };
}

describe('event stream: a client that stops reading', () => {
  const bus = new EventBus();
  const clock = new FakeClock();
  const token = new ManagementToken('sym_bounds-test-token-0123456789');
  const sink = new MemorySink();
  const server = new ManagementHttpServer({
    handlers: recordingHandlers().handlers,
    token,
    bus,
    clock,
    log: createLogger({ sinks: [sink], redactor: new SecretRedactor(), now: () => clock.now() }),
    rendererDir: null,
    eventStream: { maxBufferedBytes: MAX_BUFFERED, stuckCloseMs: STUCK_CLOSE_MS },
  });
  let url = '';
  const clients: RawExchange[] = [];

  beforeAll(async () => {
    url = `http://127.0.0.1:${await server.listen(0)}`;
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.socket.destroy();
  });
  afterAll(async () => {
    await server.close();
  });

  /** Opens /api/events with a raw socket that reads nothing until the test resumes it. */
  async function stalledClient(): Promise<RawExchange> {
    const c = await openRaw(url);
    clients.push(c);
    c.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token.value}\r\n\r\n`);
    await c.until(': connected');
    c.socket.pause();
    await waitUntil(() => server.eventStreams().length === clients.length, 'the stream is registered');
    return c;
  }

  /** Emits big pushes until the server drops for every open stream; returns the most bytes ever buffered. */
  async function emitUntilDropping(maxPushes = 20_000): Promise<{ maxBuffered: number; pushes: number }> {
    let maxBuffered = 0;
    let pushes = 0;
    while (pushes < maxPushes) {
      bus.emit('logs', bigPush(pushes++));
      const stats = server.eventStreams();
      for (const s of stats) maxBuffered = Math.max(maxBuffered, s.bufferedBytes);
      if (stats.every((s) => s.dropping && s.dropped >= 100)) break;
      // Let the socket hand what it can to the kernel, as it would between real pushes.
      if (pushes % 16 === 0) await nextTurn();
    }
    return { maxBuffered, pushes };
  }

  it('stops queueing past the bound, then resyncs once the client reads again', async () => {
    const c = await stalledClient();
    const { maxBuffered, pushes } = await emitUntilDropping();
    const [stats] = server.eventStreams();
    expect(stats!.dropping).toBe(true);
    expect(stats!.dropped).toBeGreaterThanOrEqual(100);
    // Bounded by the limit plus the one push that crossed it, however many were emitted.
    expect(maxBuffered).toBeLessThanOrEqual(MAX_BUFFERED + PUSH_BYTES);
    expect(pushes * PUSH_BYTES).toBeGreaterThan(10 * (MAX_BUFFERED + PUSH_BYTES));

    // (While the kernel's socket buffers still took data the stream may have drained and resynced
    // already; what matters is that it ends up dropping, bounded, and recovers.)
    const resyncsBefore = stats!.resyncs;
    c.socket.resume();
    await waitUntil(() => !server.eventStreams()[0]!.dropping, 'the client drains');
    expect(server.eventStreams()[0]).toMatchObject({ dropped: 0, resyncs: resyncsBefore + 1 });
    // Live again: the next push arrives after the resync.
    bus.emit('logs', [{ id: 'after-resync' }] as unknown as RequestLogEntry[]);
    await c.until('"after-resync"');
    expect(c.received().lastIndexOf(`event: ${RESYNC_EVENT}\n`)).toBeGreaterThan(c.received().lastIndexOf('event: logs\ndata: [{"id":"r'));
    expect(c.received().indexOf('"after-resync"')).toBeGreaterThan(c.received().lastIndexOf(`event: ${RESYNC_EVENT}\n`));
  });

  it('closes a client that stays stuck past the bound and forgets it', async () => {
    await stalledClient();
    await emitUntilDropping();
    expect(server.eventStreams()).toHaveLength(1);
    const listening = bus.hasListeners('logs');
    expect(listening).toBe(true);
    const c = clients[0]!;
    clock.advance(STUCK_CLOSE_MS - 1);
    await nextTurn();
    expect(server.eventStreams()).toHaveLength(1);
    clock.advance(1);
    await waitUntil(() => server.eventStreams().length === 0, 'the server forgets the stream');
    // The client sees the connection end once it reads what was already on its way.
    c.socket.resume();
    await c.closed;
    expect(bus.hasListeners('logs')).toBe(false);
    expect(sink.lines.join('')).toContain('eventStream.stuckClientClosed');
  });

  it("the renderer's HTTP bridge reads everything again after a resync", async () => {
    const { fetch: gatedFetch, flow } = gatedEventStream();
    const statuses: string[] = [];
    const pushed: unknown[] = [];
    const bridge = createHttpBridge({ baseUrl: url, token: token.value, fetch: gatedFetch, onStatus: (s) => statuses.push(s) });
    try {
      bridge.on('logs', (p) => pushed.push(p));
      await waitUntil(() => server.eventStreams().length === 1, 'the bridge connects');
      const { pushes } = await emitUntilDropping();
      flow();
      await waitUntil(() => !server.eventStreams()[0]!.dropping, 'the bridge drains');
      await waitUntil(() => statuses.includes('closed'), 'the bridge handles the resync');
      // Each resync is reported as a drop and a return of the live link (the dashboard re-reads
      // every topic on that), and the stream itself stays up.
      expect(statuses.slice(0, 2)).toEqual(['connecting', 'open']);
      expect(statuses.slice(2).join(',')).toMatch(/^(closed,open,?)+$/);
      expect(server.eventStreams()).toHaveLength(1);
      expect(pushed.length).toBeLessThan(pushes);
    } finally {
      bridge.close();
    }
  });
});

describe('management server: slow clients', () => {
  const clock = new FakeClock();
  const token = new ManagementToken('sym_bounds-test-token-0123456789');
  const server = new ManagementHttpServer({
    handlers: recordingHandlers().handlers,
    token,
    bus: new EventBus(),
    clock,
    log: createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => clock.now() }),
    rendererDir: null,
    timeouts: { headersMs: 1_000, requestMs: 1_000 },
  });
  let url = '';
  beforeAll(async () => {
    url = `http://127.0.0.1:${await server.listen(0)}`;
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers headers that never finish with a typed 408 and closes the socket', async () => {
    const c = await openRaw(url);
    c.write('GET /api/providers HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const r = parseRawResponse(await c.closed);
    expect(r.status).toBe(408);
    expect(r.json).toEqual({ error: { code: 'request_timeout', message: expect.any(String) } });
  });

  it('answers a body that stops short with a typed 408 and closes the socket', async () => {
    const c = await openRaw(url);
    c.write(
      `POST /api/keys HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token.value}\r\n` +
        'content-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":',
    );
    const r = parseRawResponse(await c.closed);
    expect(r.status).toBe(408);
    expect(r.json).toMatchObject({ error: { code: 'request_timeout' } });
  });
});

describe('management bodies', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.stop();
  });

  const send = (method: string, path: string, body: string) =>
    rawRequest(t.managementUrl, { method, path, headers: { authorization: `Bearer ${t.token}` }, body });
  const savedSettings = () => t.engine.db.prepare("SELECT key FROM key_value WHERE namespace = 'settings'").all();
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it(`refuses a body nested deeper than ${MANAGEMENT_JSON_MAX_DEPTH} levels with a typed 400`, async () => {
    const before = (await t.api.listConnections()).length;
    for (const depth of [MANAGEMENT_JSON_MAX_DEPTH, 100_000]) {
      const r = await send('POST', '/api/providers', `{"name":"deep","kind":"local","x":${nested(depth)}}`);
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_json', field: '(body)' });
      expect(r.json.error.message).toContain(`deeper than ${MANAGEMENT_JSON_MAX_DEPTH} levels`);
    }
    expect(await t.api.listConnections()).toHaveLength(before);
  });

  it('refuses a null settings body with a 400 naming the body, and writes nothing', async () => {
    for (const path of ['/api/settings', '/api/resilience']) {
      const r = await send('PATCH', path, 'null');
      expect(r.status).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_input', field: '(body)' });
    }
    expect(savedSettings()).toEqual([]);
  });

  it.each([
    ['{"__proto__": {"logs.retentionDays": 3}}', '__proto__'],
    ['{"logs": {"__proto__": {"retentionDays": 3}}}', 'logs.__proto__'],
    ['{"constructor": {"prototype": {"x": 1}}}', 'constructor'],
    ['{"prototype": 1}', 'prototype'],
  ])('refuses the settings body %s with a 400 naming %s, and writes nothing', async (body, field) => {
    const r = await send('PATCH', '/api/settings', body);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_input', field });
    expect(savedSettings()).toEqual([]);
    expect(({} as Record<string, unknown>).retentionDays).toBeUndefined();
  });

  it('refuses a connection whose providerSpecificData carries a prototype key', async () => {
    const r = await send('POST', '/api/providers', '{"name":"p","kind":"local","providerSpecificData":{"__proto__":{"enabled":false}}}');
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'invalid_input', field: 'providerSpecificData.__proto__' });
    expect((await t.api.listConnections()).some((c) => c.name === 'p')).toBe(false);
  });

  it('refuses providerSpecificData that is too deep or too large, naming the field', async () => {
    let deep: unknown = 1;
    for (let i = 0; i <= PROVIDER_SPECIFIC_DATA_LIMITS.maxDepth; i++) deep = { d: deep };
    const tooDeep = await t.api.createConnection({ name: 'deep psd', kind: 'local', providerSpecificData: deep as never }).catch((e: unknown) => e);
    expect(tooDeep).toMatchObject({ code: 'invalid_input', field: 'providerSpecificData' });
    expect((tooDeep as Error).message).toContain(`deeper than ${PROVIDER_SPECIFIC_DATA_LIMITS.maxDepth} levels`);

    const big = { note: 'x'.repeat(PROVIDER_SPECIFIC_DATA_LIMITS.maxChars) };
    const tooBig = await t.api.createConnection({ name: 'big psd', kind: 'local', providerSpecificData: big }).catch((e: unknown) => e);
    expect(tooBig).toMatchObject({ code: 'invalid_input', field: 'providerSpecificData' });

    const ok = await t.api.createConnection({ name: 'fine psd', kind: 'local', providerSpecificData: { lowPriorityMode: true, extra: { a: [1, 2] } } });
    const patched = await t.api.updateConnection({ id: ok.id, patch: { providerSpecificData: deep as never } }).catch((e: unknown) => e);
    expect(patched).toMatchObject({ code: 'invalid_input', field: 'providerSpecificData' });
    expect((await t.api.getConnection({ id: ok.id })).providerSpecificData).toEqual({ lowPriorityMode: true, extra: { a: [1, 2] } });
    const names = (await t.api.listConnections()).map((c) => c.name);
    expect(names).not.toContain('deep psd');
    expect(names).not.toContain('big psd');
  });

  it('refuses rateLimitOverrides with more model caps than a connection can list', async () => {
    const modelConcurrency = Object.fromEntries(Array.from({ length: 2_001 }, (_, i) => [`m${i}`, 1]));
    const r = await t.api.createConnection({ name: 'caps', kind: 'local', rateLimitOverrides: { modelConcurrency } }).catch((e: unknown) => e);
    expect(r).toMatchObject({ code: 'invalid_input', field: 'rateLimitOverrides.modelConcurrency' });
  });
});
