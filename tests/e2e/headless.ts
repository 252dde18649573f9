// Starts the built headless shell (out/main/serve.js) as a child process on port 0 with a temp
// data dir, as a user would run it, and reads its ports from the --ready-json line. restart()
// stops it and starts it again on the same ports and data dir (for reconnect tests).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface Headless {
  managementUrl: string;
  proxyUrl: string;
  token: string;
  dataDir: string;
  output: string[];
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** Stops the process and starts it again on the same ports with the same data dir. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

interface Running {
  child: ChildProcess;
  managementPort: number;
  proxyPort: number;
}

function launch(
  dataDir: string,
  ports: { management: number; proxy: number },
  env: Record<string, string>,
  output: string[],
): Promise<Running> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['out/main/serve.js', '--port', String(ports.management), '--proxy-port', String(ports.proxy), '--data-dir', dataDir, '--ready-json'],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
  return new Promise<Running>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output.join('')}`)), 20_000);
    const rl = createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      output.push(line);
      try {
        const j = JSON.parse(line) as { ready?: boolean; managementPort: number; proxyPort: number };
        if (j.ready) {
          clearTimeout(timer);
          resolve({ child, managementPort: j.managementPort, proxyPort: j.proxyPort });
        }
      } catch {
        // not the ready line
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output.join('')}`)));
  });
}

function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

export async function startServe(env: Record<string, string> = {}): Promise<Headless> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-e2e-'));
  const output: string[] = [];
  let running = await launch(dataDir, { management: 0, proxy: 0 }, env, output);
  const token = readFileSync(join(dataDir, 'management-token'), 'utf8').trim();
  const managementUrl = `http://127.0.0.1:${running.managementPort}`;
  return {
    managementUrl,
    proxyUrl: `http://127.0.0.1:${running.proxyPort}`,
    token,
    dataDir,
    output,
    async api<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${managementUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as T;
      if (!res.ok) throw new Error(`${method} ${path} -> ${res.status} ${JSON.stringify(json)}`);
      return json;
    },
    async restart() {
      await terminate(running.child);
      running = await launch(dataDir, { management: running.managementPort, proxy: running.proxyPort }, env, output);
    },
    async stop() {
      await terminate(running.child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
