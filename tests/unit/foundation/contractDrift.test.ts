// Contract drift: the one contract (src/shared/contract.ts) against its three implementations,
// the IPC server + preload (desktop), the HTTP router (headless) and the renderer's HTTP bridge,
// plus the management service that implements it. Removing a route, renaming a method or changing
// how one side places an input field makes a test here fail.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  contract,
  EVENT_NAMES,
  METHOD_NAMES,
  ipcChannel,
  ipcEventChannel,
  parseInput,
  type EventName,
  type MethodName,
  type MethodSpec,
} from '../../../src/shared/contract';
import { EVENT_CHANNELS, forwardEvents, registerIpcServer } from '../../../src/main/desktop/ipc';
import { createEngine } from '../../../src/main/engine';
import { EventBus } from '../../../src/main/engine/events';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { compileRoutes, matchRoute } from '../../../src/main/engine/management/httpServer';
import { fileKeyProvider } from '../../../src/main/engine/secrets/keyFile';
import { buildApi } from '../../../src/preload/api';
import { requestFor } from '../../../src/renderer/bridge/http';
import { FakeClock } from '../../support/fakeClock';
import { recordingHandlers, sampleInput } from './support/contractSamples';
import { fakeIpcPair } from './support/fakeIpc';

/** The REST routes the issues and the dashboard rely on. Each must exist in the contract. */
const REQUIRED_ROUTES: [string, string][] = [
  ['GET', '/api/monitoring/health'],
  ['GET', '/api/settings'],
  ['PATCH', '/api/settings'],
  ['GET', '/api/resilience'],
  ['PATCH', '/api/resilience'],
  ['POST', '/api/resilience/reset'],
  ['GET', '/api/resilience/cooldowns'],
  ['POST', '/api/resilience/cooldowns'],
  ['GET', '/api/resilience/model-cooldowns'],
  ['DELETE', '/api/resilience/model-cooldowns'],
  ['GET', '/api/providers'],
  ['POST', '/api/providers'],
  ['GET', '/api/providers/:id'],
  ['PUT', '/api/providers/:id'],
  ['PATCH', '/api/providers/:id'],
  ['DELETE', '/api/providers/:id'],
  ['POST', '/api/providers/:id/test'],
  ['GET', '/api/rate-limits'],
  ['POST', '/api/rate-limits'],
  // Combos (issue 10).
  ['GET', '/api/combos'],
  ['POST', '/api/combos'],
  ['GET', '/api/combos/:id'],
  ['PUT', '/api/combos/:id'],
  ['PATCH', '/api/combos/:id'],
  ['DELETE', '/api/combos/:id'],
  // Used by the dashboard and scripts (foundation).
  ['GET', '/api/app'],
  ['GET', '/api/keys'],
  ['POST', '/api/keys'],
  ['POST', '/api/keys/:id/reveal'],
  ['DELETE', '/api/keys/:id'],
  // Session affinity and leases (issue 14).
  ['PATCH', '/api/keys/:id'],
  ['GET', '/api/sessions'],
  ['DELETE', '/api/sessions/:id'],
  ['GET', '/api/leases'],
  ['DELETE', '/api/leases/:id'],
];

const spec = (name: MethodName) => contract[name] as MethodSpec;
const log = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => 0 });

/** The path of a method with its ":param" segments filled from the input. */
function concretePath(name: MethodName, input: Record<string, unknown>): string {
  return spec(name).path.replace(/:([A-Za-z_]+)/g, (_m, p: string) => encodeURIComponent(String(input[p])));
}

/** What a handler receives for this raw input after boundary validation. */
function parsed(name: MethodName, raw: unknown): unknown {
  const r = parseInput(name, raw);
  if (!r.ok) throw new Error(`${name}: ${r.error.message}`);
  return r.value;
}

describe('the contract', () => {
  it.each(REQUIRED_ROUTES)('declares %s %s', (method, path) => {
    const owners = METHOD_NAMES.filter((n) => spec(n).http === method && spec(n).path === path);
    expect(owners, `${method} ${path} is missing from src/shared/contract.ts`).toHaveLength(1);
  });

  it('has one method per route (no two methods share a method and path)', () => {
    const seen = new Map<string, MethodName>();
    const dupes: string[] = [];
    for (const n of METHOD_NAMES) {
      const k = `${spec(n).http} ${spec(n).path}`;
      if (seen.has(k)) dupes.push(`${k}: ${seen.get(k)} and ${n}`);
      seen.set(k, n);
    }
    expect(dupes).toEqual([]);
  });

  it('declares every route under /api and every path parameter as an input field', () => {
    for (const n of METHOD_NAMES) {
      expect(spec(n).path, n).toMatch(/^\/api\//);
      for (const [, p] of spec(n).path.matchAll(/:([A-Za-z_]+)/g)) {
        const shape = (spec(n).input as unknown as { shape?: Record<string, unknown> }).shape;
        expect(shape && p! in shape, `${n}: ${p} is a path parameter but not an input field`).toBe(true);
      }
    }
  });

  it.each(METHOD_NAMES)('has a valid sample input for %s (drift tests below call every method)', (name) => {
    const r = parseInput(name, sampleInput(name));
    expect(r.ok ? 'valid' : r.error.message, `add a sample for ${name} in support/contractSamples.ts`).toBe('valid');
  });
});

describe('the HTTP router (headless shell)', () => {
  const routes = compileRoutes();

  it('compiles one route per contract method', () => {
    expect(routes.map((r) => r.name).sort()).toEqual([...METHOD_NAMES].sort());
  });

  it.each(METHOD_NAMES)('maps the route of %s back to that method with its path parameters', (name) => {
    const input = sampleInput(name);
    const m = matchRoute(routes, spec(name).http, concretePath(name, input));
    expect(typeof m === 'object' && m !== null ? m.route.name : m).toBe(name);
    if (typeof m !== 'object' || m === null) return;
    for (const [k, v] of Object.entries(m.params)) expect(v).toBe(input[k]);
  });

  it('answers method_not_allowed for a known path with another method and null for an unknown path', () => {
    expect(matchRoute(routes, 'DELETE', '/api/monitoring/health')).toBe('method_not_allowed');
    expect(matchRoute(routes, 'GET', '/api/no-such-thing')).toBeNull();
  });

  it('answers invalid_path for a malformed %-escape in a path parameter', () => {
    expect(matchRoute(routes, 'GET', '/api/providers/%E0%A4%A')).toBe('invalid_path');
  });
});

describe('the renderer HTTP bridge', () => {
  it.each(METHOD_NAMES)('requests %s on a route the server maps back to it, with the same input', (name) => {
    const input = sampleInput(name);
    const req = requestFor(name, input);
    const url = new URL(req.path, 'http://127.0.0.1');
    const m = matchRoute(compileRoutes(), req.method, url.pathname);
    expect(typeof m === 'object' && m !== null ? m.route.name : m).toBe(name);
    if (typeof m !== 'object' || m === null) return;
    // The server's assembly rule: query fields, then the body (whole, or under bodyField), then path params.
    const rebuilt: Record<string, unknown> = Object.fromEntries(url.searchParams);
    const body = req.body === undefined ? undefined : JSON.parse(JSON.stringify(req.body));
    if (spec(name).bodyField) rebuilt[spec(name).bodyField!] = body ?? {};
    else if (body !== undefined) Object.assign(rebuilt, body);
    Object.assign(rebuilt, m.params);
    expect(parsed(name, rebuilt)).toEqual(parsed(name, input));
  });

  it('sends no body on GET routes', () => {
    for (const n of METHOD_NAMES.filter((x) => spec(x).http === 'GET')) {
      expect(requestFor(n, sampleInput(n)).body, n).toBeUndefined();
    }
  });
});

describe('the IPC server (desktop main)', () => {
  it('registers exactly one handler per contract method and removes them all on dispose', () => {
    const { ipcMain } = fakeIpcPair();
    const { handlers } = recordingHandlers();
    const dispose = registerIpcServer({ ipcMain, handlers, log, isTrustedSender: () => true });
    expect(ipcMain.registrations.sort()).toEqual(METHOD_NAMES.map(ipcChannel).sort());
    expect(new Set(ipcMain.registrations).size).toBe(METHOD_NAMES.length);
    dispose();
    expect(ipcMain.handlers.size).toBe(0);
  });

  it.each(METHOD_NAMES)('routes the %s channel to the handler of the same name', async (name) => {
    const { ipcMain } = fakeIpcPair();
    const { handlers, calls } = recordingHandlers();
    registerIpcServer({ ipcMain, handlers, log, isTrustedSender: () => true });
    const input = sampleInput(name);
    const answer = await ipcMain.invoke(ipcChannel(name), input);
    expect(answer).toEqual({ ok: true, value: { answeredBy: name } });
    expect(calls).toEqual([{ name, input: parsed(name, input) }]);
  });

  it('forwards every push event on its own channel', () => {
    const bus = new EventBus();
    const sent: [string, unknown][] = [];
    const off = forwardEvents(bus, (channel, payload) => sent.push([channel, payload]));
    for (const e of EVENT_NAMES) bus.emit(e, { probe: e } as never);
    expect(sent).toEqual(EVENT_NAMES.map((e) => [ipcEventChannel(e), { probe: e }]));
    expect([...EVENT_CHANNELS].sort()).toEqual(EVENT_NAMES.map(ipcEventChannel).sort());
    off();
    bus.emit('health', {} as never);
    expect(sent).toHaveLength(EVENT_NAMES.length);
  });
});

describe('the preload (window.api)', () => {
  it('exposes exactly the contract methods plus on(), and nothing generic', () => {
    const { ipcRenderer } = fakeIpcPair();
    const api = buildApi(ipcRenderer);
    expect(Object.keys(api).sort()).toEqual([...METHOD_NAMES, 'on'].sort());
    expect(Object.isFrozen(api)).toBe(true);
  });

  it.each(METHOD_NAMES)('invokes the %s channel and reaches the main-process handler of the same name', async (name) => {
    const { ipcMain, ipcRenderer } = fakeIpcPair();
    const { handlers, calls } = recordingHandlers();
    registerIpcServer({ ipcMain, handlers, log, isTrustedSender: () => true });
    const api = buildApi(ipcRenderer);
    const input = sampleInput(name);
    const answer = await (api[name] as (i: unknown) => Promise<unknown>)(input);
    expect(ipcRenderer.invoked.map((i) => i.channel)).toEqual([ipcChannel(name)]);
    expect(answer).toEqual({ ok: true, value: { answeredBy: name } });
    expect(calls).toEqual([{ name, input: parsed(name, input) }]);
  });

  it.each(EVENT_NAMES)('delivers the %s push from the engine bus to on() listeners, and stops after unsubscribe', (event) => {
    const { ipcRenderer, webContents } = fakeIpcPair();
    const bus = new EventBus();
    forwardEvents(bus, (channel, payload) => webContents.send(channel, payload));
    const api = buildApi(ipcRenderer);
    const got: unknown[] = [];
    const off = api.on(event as EventName, (p) => got.push(p));
    bus.emit(event, { probe: event } as never);
    off();
    bus.emit(event, { probe: 'after' } as never);
    expect(got).toEqual([{ probe: event }]);
    expect(ipcRenderer.listenerCount(ipcEventChannel(event))).toBe(0);
  });

  it('refuses to subscribe to an event the contract does not declare', () => {
    const { ipcRenderer } = fakeIpcPair();
    const api = buildApi(ipcRenderer);
    expect(() => api.on('no-such-event' as EventName, () => {})).toThrow(/unknown event/);
  });
});

describe('the management service', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-drift-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('implements every contract method', async () => {
    const engine = await createEngine({
      dataDir,
      shell: 'headless',
      keyProvider: fileKeyProvider(dataDir),
      env: {},
      clock: new FakeClock(),
      logSinks: [new MemorySink()],
    });
    try {
      const missing = METHOD_NAMES.filter((n) => typeof (engine.handlers as Record<string, unknown>)[n] !== 'function');
      expect(missing).toEqual([]);
      // And it answers a method through them (not just a placeholder object).
      const health = await engine.handlers.getHealth({});
      expect(health.version).toBe(engine.version);
    } finally {
      await engine.stop();
    }
  });
});
