// Push events over HTTP: GET /api/events (server-sent events, token required) sends a snapshot on
// connect and a push when state changes; the renderer's HTTP bridge delivers them through on().
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../../../src/shared/contract';
import type { ConnectionView, SettingsView } from '../../../src/shared/model';
import { createHttpBridge } from '../../../src/renderer/bridge/http';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { openEventStream, rawRequest } from './http';

/** Resolves with the first payload for which `match` holds (a safety limit, not a timing assertion). */
function nextPush<T>(subscribe: (fn: (p: T) => void) => () => void, match: (p: T) => boolean, limitMs = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error('no matching push arrived'));
    }, limitMs);
    const off = subscribe((p) => {
      if (!match(p)) return;
      clearTimeout(timer);
      off();
      resolve(p);
    });
  });
}

describe('GET /api/events', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('needs the management token', async () => {
    const r = await rawRequest(t.managementUrl, { path: '/api/events' });
    expect(r.status).toBe(401);
  });

  it('sends a snapshot of every stateful topic on connect', async () => {
    const stream = await openEventStream(t.managementUrl, t.token);
    try {
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/text\/event-stream/);
      const health = await stream.until((e) => e.event === 'health');
      expect(health.data).toMatchObject({ version: t.engine.version, proxy: { listening: true } });
      const names = stream.events.map((e) => e.event);
      expect(names).toEqual(expect.arrayContaining(['connections', 'resilience', 'admission', 'settings', 'health']));
      expect(names.every((n) => (EVENT_NAMES as string[]).includes(n))).toBe(true);
      expect(stream.events.find((e) => e.event === 'connections')!.data).toEqual(await t.api.listConnections());
    } finally {
      await stream.close();
    }
  });

  it('pushes the connection list after a connection is created', async () => {
    const stream = await openEventStream(t.managementUrl, t.token);
    try {
      await stream.until((e) => e.event === 'health');
      const after = stream.events.length;
      const created = await t.api.createConnection({ name: 'Pushed', kind: 'local', baseUrl: 'http://127.0.0.1:9/v1' });
      const push = await stream.until(
        (e) => e.event === 'connections' && (e.data as ConnectionView[]).some((c) => c.id === created.id),
        after,
      );
      expect((push.data as ConnectionView[]).find((c) => c.id === created.id)).toMatchObject({ name: 'Pushed', kind: 'local' });
      await t.api.deleteConnection({ id: created.id });
    } finally {
      await stream.close();
    }
  });

  it('pushes settings after a settings change', async () => {
    const stream = await openEventStream(t.managementUrl, t.token);
    try {
      await stream.until((e) => e.event === 'health');
      const after = stream.events.length;
      await t.api.patchSettings({ patch: { 'logs.retentionDays': 3 } });
      const push = await stream.until(
        (e) => e.event === 'settings' && (e.data as SettingsView).settings.some((s) => s.key === 'logs.retentionDays' && s.value === 3),
        after,
      );
      expect(push.data.values.logs.retentionDays).toBe(3);
      await t.api.patchSettings({ patch: { 'logs.retentionDays': null } });
    } finally {
      await stream.close();
    }
  });
});

describe('the renderer HTTP bridge', () => {
  let t: TestEngine;
  beforeAll(async () => {
    t = await startTestEngine();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('delivers pushes through on(), and stops delivering after unsubscribe', async () => {
    const statuses: string[] = [];
    const bridge = createHttpBridge({ baseUrl: t.managementUrl, token: t.token, onStatus: (s) => statuses.push(s) });
    try {
      const subscribe = (fn: (p: ConnectionView[]) => void) => bridge.on('connections', fn);
      // The snapshot arrives first.
      const snapshot = await nextPush(subscribe, () => true);
      expect(snapshot).toEqual(await t.api.listConnections());
      expect(statuses).toContain('open');

      const pushed = nextPush(subscribe, (list) => list.some((c) => c.name === 'Via bridge'));
      const created = await bridge.createConnection({ name: 'Via bridge', kind: 'local', baseUrl: 'http://127.0.0.1:9/v1' });
      expect((await pushed).find((c) => c.id === created.id)).toMatchObject({ name: 'Via bridge' });

      const late: ConnectionView[][] = [];
      const off = bridge.on('connections', (p) => late.push(p));
      off();
      const stillListening = nextPush(subscribe, (list) => !list.some((c) => c.id === created.id));
      await bridge.deleteConnection({ id: created.id });
      await stillListening;
      expect(late).toEqual([]);
    } finally {
      bridge.close();
    }
  });

  it('reports unauthorized for a wrong token instead of retrying forever', async () => {
    const statuses: string[] = [];
    const bridge = createHttpBridge({ baseUrl: t.managementUrl, token: 'wrong', onStatus: (s) => statuses.push(s) });
    try {
      const done = new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (statuses.includes('unauthorized')) {
            clearInterval(check);
            resolve();
          }
        }, 10);
      });
      bridge.on('health', () => {});
      await done;
      expect(statuses).toEqual(['connecting', 'unauthorized']);
      const err = await bridge.getHealth().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'unauthorized', status: 401 });
    } finally {
      bridge.close();
    }
  });
});
