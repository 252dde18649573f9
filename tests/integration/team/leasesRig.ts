// A team for the session pin and lease tests (issue 26): a real redis-server, one fake upstream and
// N engines in one team, each with one connection per API key (its own local ids and names) and
// the same client key: the engines start from copies of one data dir, as if the key had been
// pasted on each workstation, with the key's local id changed on each copy, so only the key's
// secret (never its id) can make a pin or a lease the same on two instances.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionView } from '../../../src/shared/model';
import { openStore } from '../../../src/main/engine/store/db';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { RedisServer } from '../../support/redisServer';

export interface SessionsRig {
  redis: RedisServer;
  upstream: FakeUpstream;
  engines: TestEngine[];
  /** conns[engine][key index] */
  conns: ConnectionView[][];
  /** The client key every engine holds (each under its own id). */
  clientKey: string;
  team: string;
  /** Which API key a local connection id of engine `i` holds (its index in `keys`). */
  keyIndexOf(i: number, connectionId: string | null): number;
  stop(): Promise<void>;
}

let rigs = 0;

export async function startSessionsRig(o: { instances: number; keys: string[]; env?: Record<string, string> }): Promise<SessionsRig> {
  const redis = await RedisServer.start();
  const upstream = await FakeUpstream.start();
  const team = `sessions-${process.pid}-${++rigs}`;
  const seed = mkdtempSync(join(tmpdir(), 'switchyard-seed-'));
  const dirs: string[] = [seed];
  const engines: TestEngine[] = [];
  const conns: ConnectionView[][] = [];
  const stop = async () => {
    await Promise.allSettled(engines.map((e) => e.stop()));
    await upstream.close();
    await redis.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  try {
    const first = await startTestEngine({ dataDir: seed, env: o.env });
    const clientKey = first.clientKey;
    await first.stop();
    for (let i = 0; i < o.instances; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'switchyard-team-'));
      dirs.push(dir);
      cpSync(seed, dir, { recursive: true });
      const db = openStore({ path: join(dir, 'switchyard.db'), now: () => Date.now() });
      db.prepare('UPDATE client_keys SET id = ?').run(randomUUID());
      db.close();
      const e = await startTestEngine({ dataDir: dir, env: o.env, engine: { team: { redisUrl: redis.url, name: team, instanceId: `instance-${i}` } } });
      engines.push(e);
      const mine: ConnectionView[] = [];
      for (let k = 0; k < o.keys.length; k++) {
        mine.push(
          await e.addConnection({
            name: `key ${k} on instance ${i}`,
            kind: 'openai-compatible',
            provider: 'openai',
            baseUrl: upstream.openaiUrl,
            secret: o.keys[k]!,
            models: ['gpt-team'],
          } as Parameters<TestEngine['addConnection']>[0]),
        );
      }
      conns.push(mine);
    }
    return {
      redis,
      upstream,
      engines,
      conns,
      clientKey,
      team,
      keyIndexOf: (i, id) => conns[i]!.findIndex((c) => c.id === id),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Waits (bounded) for a condition: propagation between instances takes a moment. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface Served {
  status: number;
  /** The local connection id that served (x-switchyard-selected-connection-id). */
  selected: string | null;
  code: string | null;
}

/** One chat completion on an engine's proxy, with extra headers (a session, a lease). */
export async function chat(e: TestEngine, clientKey: string, headers: Record<string, string> = {}): Promise<Served> {
  const res = await fetch(`${e.proxyUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${clientKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-team', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await res.json()) as { error?: { code?: string } };
  return { status: res.status, selected: res.headers.get('x-switchyard-selected-connection-id'), code: body.error?.code ?? null };
}
