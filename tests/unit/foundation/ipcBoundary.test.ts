// The desktop IPC boundary: input validated against the contract, answers as {ok, value} or
// {ok:false, error:{code, message, field}}, untrusted senders refused, no stack traces.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipcChannel } from '../../../src/shared/contract';
import { registerIpcServer } from '../../../src/main/desktop/ipc';
import { createEngine, type Engine } from '../../../src/main/engine';
import { ApiError } from '../../../src/main/engine/errors';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { fileKeyProvider } from '../../../src/main/engine/secrets/keyFile';
import { FakeClock } from '../../support/fakeClock';
import { recordingHandlers } from './support/contractSamples';
import { fakeIpcPair, senderEvent } from './support/fakeIpc';

const OUR_PAGE = 'app://switchyard/index.html';
const trusted = (e: { senderFrame?: { url?: string } | null }) => e.senderFrame?.url === OUR_PAGE;

describe('IPC boundary with the real management service', () => {
  let dataDir: string;
  let engine: Engine;
  let ipc: ReturnType<typeof fakeIpcPair>;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-ipc-'));
    engine = await createEngine({
      dataDir,
      shell: 'desktop',
      keyProvider: fileKeyProvider(dataDir),
      env: {},
      clock: new FakeClock(),
      logSinks: [new MemorySink()],
    });
    ipc = fakeIpcPair(senderEvent(OUR_PAGE));
    registerIpcServer({ ipcMain: ipc.ipcMain, handlers: engine.handlers, log: engine.log, isTrustedSender: trusted as never });
  });
  afterAll(async () => {
    await engine.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers {ok:true, value} for good input', async () => {
    const r = (await ipc.ipcMain.invoke(ipcChannel('getHealth'), {})) as { ok: boolean; value: { version: string } };
    expect(r.ok).toBe(true);
    expect(r.value.version).toBe(engine.version);
    const created = (await ipc.ipcMain.invoke(ipcChannel('createClientKey'), { name: 'Codex' })) as {
      ok: true;
      value: { key: { name: string }; secret: string };
    };
    expect(created).toMatchObject({ ok: true, value: { key: { name: 'Codex' } } });
  });

  it.each([
    ['createConnection', { name: 'X' }, 'kind'],
    ['createConnection', { name: 'X', kind: 'martian' }, 'kind'],
    ['createConnection', { name: 'X', kind: 'local', colour: 'red' }, 'colour'],
    ['createClientKey', { name: '' }, 'name'],
    ['setRateLimitProtection', { connectionId: 'c', enabled: 'yes' }, 'enabled'],
    ['updateConnection', { id: 'c', patch: { priority: -1 } }, 'priority'],
    ['getHealth', { unexpected: 1 }, 'unexpected'],
  ] as const)('answers invalid_input naming the field for %s(%j)', async (method, input, field) => {
    const r = await ipc.ipcMain.invoke(ipcChannel(method), input);
    expect(r).toEqual({ ok: false, error: { code: 'invalid_input', message: expect.any(String), field } });
  });

  it('answers invalid_input for input that is not an object', async () => {
    const r = await ipc.ipcMain.invoke(ipcChannel('createClientKey'), 'Codex');
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
  });

  it('names the settings field of a bad settings patch and writes nothing', async () => {
    const before = engine.settings.values['requestQueue.maxWaitMs'];
    const r = await ipc.ipcMain.invoke(ipcChannel('patchSettings'), {
      patch: { 'requestQueue.maxWaitMs': 5, requestQueue: { maxQueueDepth: 'deep' } },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'requestQueue.maxQueueDepth' } });
    expect(engine.settings.values['requestQueue.maxWaitMs']).toBe(before);
  });

  it('keeps the domain error code of a failing handler (not found)', async () => {
    const r = await ipc.ipcMain.invoke(ipcChannel('getConnection'), { id: 'nope' });
    expect(r).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('refuses a sender that is not our own page', async () => {
    const r = await ipc.ipcMain.invoke(ipcChannel('getManagementToken'), {}, senderEvent('https://evil.example/'));
    expect(r).toEqual({ ok: false, error: { code: 'forbidden', message: expect.any(String) } });
    expect(JSON.stringify(r)).not.toContain(engine.token.value);
  });
});

describe('IPC boundary with fake handlers', () => {
  const log = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => 0 });

  it('never calls the handler for an untrusted sender', async () => {
    const { handlers, calls } = recordingHandlers();
    const ipc = fakeIpcPair(senderEvent('https://evil.example/'));
    registerIpcServer({ ipcMain: ipc.ipcMain, handlers, log, isTrustedSender: trusted as never });
    await ipc.ipcMain.invoke(ipcChannel('createClientKey'), { name: 'x' });
    expect(calls).toEqual([]);
  });

  it('hides an unexpected error behind internal_error, without its message or stack', async () => {
    const { handlers } = recordingHandlers();
    handlers.getHealth = async () => {
      throw new Error('database is locked at /secret/path');
    };
    handlers.getAppInfo = async () => {
      throw new ApiError(409, 'conflict', 'already there', 'name');
    };
    const ipc = fakeIpcPair();
    registerIpcServer({ ipcMain: ipc.ipcMain, handlers, log, isTrustedSender: () => true });
    const r = await ipc.ipcMain.invoke(ipcChannel('getHealth'), {});
    expect(r).toEqual({ ok: false, error: { code: 'internal_error', message: expect.any(String) } });
    expect(JSON.stringify(r)).not.toMatch(/secret\/path|at .*\.ts/);
    expect(await ipc.ipcMain.invoke(ipcChannel('getAppInfo'), {})).toEqual({
      ok: false,
      error: { code: 'conflict', message: 'already there', field: 'name' },
    });
  });
});
