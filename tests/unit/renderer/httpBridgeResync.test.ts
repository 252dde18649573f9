// The HTTP bridge and the engine's `resync` event: the engine sends it when it dropped pushes for
// a client that had stopped reading. The bridge reports it as a drop and a return of the live link,
// so the dashboard reads every topic again, as after a reconnect, while the stream stays open.
import { describe, expect, it } from 'vitest';
import { contract, EVENTS_PATH, METHOD_NAMES, RESYNC_EVENT, type MethodSpec } from '../../../src/shared/contract';
import { createHttpBridge } from '../../../src/renderer/bridge/http';
import { createDashboard } from '../../../src/renderer/stores/dashboard';
import { connection } from './builders';
import { fakeBridge } from './fakeBridge';

/**
 * A fetch that answers each REST route from a fake Bridge (so calls can be counted) and serves an
 * event stream the test writes to.
 */
function fakeEngine() {
  const answers = fakeBridge();
  const encoder = new TextEncoder();
  let push!: (text: string) => void;
  let eventStreams = 0;
  const fetchFn: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    if (url.pathname === EVENTS_PATH) {
      eventStreams++;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => controller.enqueue(encoder.encode(text));
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    }
    const name = METHOD_NAMES.find((m) => {
      const spec = contract[m] as MethodSpec;
      return spec.http === method && spec.path === url.pathname;
    });
    if (!name) return new Response(JSON.stringify({ error: { code: 'not_found', message: url.pathname } }), { status: 404 });
    const value = await (answers[name] as (i?: unknown) => Promise<unknown>)();
    return new Response(JSON.stringify(value), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { answers, fetch: fetchFn, push: (text: string) => push(text), eventStreams: () => eventStreams };
}

/** Yields to queued tasks until cond() holds (bounded by a count, not by time). */
async function settle(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 0));
}

describe('HTTP bridge: resync', () => {
  it('reports a resync as a drop and a return of the live link, and keeps the stream', async () => {
    const engine = fakeEngine();
    const statuses: string[] = [];
    const bridge = createHttpBridge({ baseUrl: 'http://127.0.0.1:1', token: 't', fetch: engine.fetch, onStatus: (s) => statuses.push(s) });
    const pushed: unknown[] = [];
    bridge.on('connections', (p) => pushed.push(p));
    await settle(() => statuses.includes('open'));
    engine.push(`event: ${RESYNC_EVENT}\ndata: {"dropped":12}\n\n`);
    engine.push(`event: connections\ndata: []\n\n`);
    await settle(() => pushed.length > 0);
    expect(statuses).toEqual(['connecting', 'open', 'closed', 'open']);
    expect(pushed).toEqual([[]]);
    expect(engine.eventStreams()).toBe(1);
    bridge.close();
  });

  it('makes the dashboard read every topic again', async () => {
    const engine = fakeEngine();
    const dash = createDashboard({
      connect: (onStatus) => createHttpBridge({ baseUrl: 'http://127.0.0.1:1', token: 't', fetch: engine.fetch, onStatus }),
    });
    await dash.start();
    await settle(() => dash.app.getState().link === 'open');
    const { answers } = engine;
    expect(answers.listLogs).toHaveBeenCalledTimes(1);
    expect(answers.listConnections).toHaveBeenCalledTimes(1);
    answers.listConnections.mockResolvedValue([connection({ name: 'Changed while dropped' })]);
    engine.push(`event: ${RESYNC_EVENT}\ndata: {"dropped":3}\n\n`);
    await settle(() => dash.connections.getState().list.length > 0);
    for (const read of [answers.listLogs, answers.listConnections, answers.getSettings, answers.getAdmission, answers.listBreakers]) {
      expect(read).toHaveBeenCalledTimes(2);
    }
    expect(dash.connections.getState().list.map((c) => c.name)).toEqual(['Changed while dropped']);
    expect(dash.app.getState().link).toBe('open');
    dash.stop();
  });
});
