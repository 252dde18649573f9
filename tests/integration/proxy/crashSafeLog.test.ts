// kill -9 under load loses no request-log entry of a request whose answer the client fully
// received. The headless server runs as a child process (src/main/serve.ts, node with tsx's loader) against a
// fake upstream; a few clients keep sending; after a number of answered requests the child is
// killed with SIGKILL, restarted on the same data dir, and so on. In the end every answered
// request's id (x-switchyard-request-id) must be in the database. 5 kills here; RUN_CRASH_INT=1
// makes it 20. Bounded by counts (requests per round, rounds), never by sleeping.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../../support/fakeUpstream';

const KILLS = process.env.RUN_CRASH_INT === '1' ? 20 : 5;
const CLIENTS = 4;

interface Child {
  proc: ChildProcess;
  managementUrl: string;
  proxyUrl: string;
}

function launch(dataDir: string): Promise<Child> {
  // Node itself runs the server (tsx as a loader, not its CLI, which would put a process in between).
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main/serve.ts', '--port', '0', '--proxy-port', '0', '--data-dir', dataDir, '--ready-json'], {
    env: { ...process.env, SWITCHYARD_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const err: string[] = [];
  proc.stderr!.on('data', (d: Buffer) => err.push(d.toString()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout! });
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const j = JSON.parse(line) as { managementPort: number; proxyPort: number };
      resolve({ proc, managementUrl: `http://127.0.0.1:${j.managementPort}`, proxyUrl: `http://127.0.0.1:${j.proxyPort}` });
    });
    proc.once('exit', (code) => reject(new Error(`the server exited (${code}) before it was ready: ${err.join('').slice(-2000)}`)));
  });
}

function kill9(c: Child): Promise<void> {
  return new Promise((resolve) => {
    if (c.proc.exitCode !== null || c.proc.signalCode !== null) return resolve();
    c.proc.once('exit', () => resolve());
    c.proc.kill('SIGKILL');
  });
}

/** One POST; resolves with the request id only when the whole answer arrived with a 200. */
function post(url: string, path: string, headers: Record<string, string>, body: unknown): Promise<string | null> {
  const data = JSON.stringify(body);
  const u = new URL(path, url);
  return new Promise((resolve) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
      (res) => {
        const id = res.headers['x-switchyard-request-id'];
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode === 200 && res.complete && typeof id === 'string' ? id : null));
        res.on('error', () => resolve(null));
        res.on('aborted', () => resolve(null));
      },
    );
    req.on('error', () => resolve(null));
    req.end(data);
  });
}

async function api<T>(c: Child, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${c.managementUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as T;
}

describe('the request log across kill -9', () => {
  let fake: FakeUpstream;
  let dataDir: string;
  let child: Child | null = null;
  beforeAll(async () => {
    fake = await FakeUpstream.start();
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-crash-'));
  });
  afterAll(async () => {
    if (child) await kill9(child);
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`keeps the entry of every answered request over ${KILLS} kills`, { timeout: 60_000 + KILLS * 15_000 }, async () => {
    child = await launch(dataDir);
    const token = readFileSync(join(dataDir, 'management-token'), 'utf8').trim();
    await api(child, token, 'POST', '/api/providers', {
      name: 'Fake',
      kind: 'openai-compatible',
      provider: 'fake',
      baseUrl: fake.openaiUrl,
      secret: 'sk-fake-0123456789',
      models: ['crash-model'],
      passthroughModels: false,
    });
    const keys = await api<{ id: string }[]>(child, token, 'GET', '/api/keys');
    const { secret: clientKey } = await api<{ secret: string }>(child, token, 'POST', `/api/keys/${keys[0]!.id}/reveal`);
    const answered: string[] = [];

    for (let round = 0; round < KILLS; round++) {
      const c = child;
      // Kill once this round's clients have had this many answers (a different point each round).
      const killAt = 20 + ((round * 7) % 23);
      let got = 0;
      let killing: Promise<void> | null = null;
      const client = async () => {
        for (let i = 0; i < 200 && !killing; i++) {
          const id = await post(c.proxyUrl, '/v1/chat/completions', { authorization: `Bearer ${clientKey}` }, { model: 'crash-model', messages: [{ role: 'user', content: `r${round} ${i}` }] });
          if (id) {
            answered.push(id);
            got += 1;
            if (got >= killAt && !killing) killing = kill9(c);
          } else if (killing) break;
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, client));
      await (killing ?? kill9(c));
      child = await launch(dataDir);
    }
    await kill9(child);
    child = null;

    expect(answered.length).toBeGreaterThan(KILLS * 20);
    // A last start recovers the journal of the last kill; then read the store directly.
    child = await launch(dataDir);
    const db = new Database(join(dataDir, 'switchyard.db'), { readonly: true, fileMustExist: true });
    try {
      const stored = new Set((db.prepare('SELECT id FROM proxy_logs').pluck().all() as string[]));
      const lost = answered.filter((id) => !stored.has(id));
      console.log(`kill -9 x${KILLS}: ${answered.length} answered requests, ${stored.size} entries stored, ${lost.length} answered requests without an entry`);
      expect({ answered: answered.length, lost: lost.length }).toEqual({ answered: answered.length, lost: 0 });
    } finally {
      db.close();
    }
  });
});
