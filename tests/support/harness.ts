// Starts the real engine (headless shell) on port 0 with a temporary data dir, and gives tests a
// typed management client (the renderer's own HTTP bridge), the proxy URL and a client key.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bridge, ConnectionCreateInput } from '../../src/shared/contract';
import type { ConnectionView } from '../../src/shared/model';
import { startHeadless } from '../../src/main/serve';
import { MemorySink } from '../../src/main/engine/logger';
import type { EngineOptions } from '../../src/main/engine';
import { createHttpBridge } from '../../src/renderer/bridge/http';

export interface TestEngineOptions {
  env?: Record<string, string | undefined>;
  engine?: Partial<EngineOptions>;
  dataDir?: string;
  /** Keep the data dir after stop (for restart tests). */
  keepDataDir?: boolean;
}

/**
 * Env for rigs whose tests look at what the engine does with one upstream answer per attempt (the
 * resilience layers, error rules): the same-target retry and the plain-model cooldown waits
 * (issue 19), which send again after a wait on the rig's fake clock, are off there.
 */
export const ONE_ANSWER_ENV = { SWITCHYARD_SAME_TARGET_RETRIES: '0', SWITCHYARD_PLAIN_MODEL_COOLDOWN_WAIT: 'false' } as const;

export async function startTestEngine(o: TestEngineOptions = {}) {
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'switchyard-test-'));
  const logs = new MemorySink();
  const app = await startHeadless({
    dataDir,
    port: 0,
    proxyPort: 0,
    rendererDir: null,
    env: o.env ?? {},
    engine: { logSinks: [logs], logLevel: 'debug', ...o.engine },
  });
  const managementUrl = `http://127.0.0.1:${app.managementPort}`;
  const api = createHttpBridge({ baseUrl: managementUrl, token: app.token, retryDelayMs: () => 50 });
  const keys = await api.listClientKeys();
  const clientKey = (await api.revealClientKey({ id: keys[0]!.id })).secret;
  const proxyUrl = `http://127.0.0.1:${app.proxyPort}`;
  return {
    app,
    engine: app.engine,
    api: api as Bridge & { close(): void },
    dataDir,
    logs,
    managementUrl,
    token: app.token,
    proxyUrl,
    clientKey,
    /** Adds a connection through the management API. */
    addConnection(input: ConnectionCreateInput): Promise<ConnectionView> {
      return api.createConnection(input);
    },
    async stop() {
      api.close();
      await app.stop();
      if (!o.keepDataDir && !o.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type TestEngine = Awaited<ReturnType<typeof startTestEngine>>;
