// A team for the session pin and lease tests (issue 26): a real redis-server, one fake upstream and
// N engines in one team, each with one connection per API key (its own local ids and names) and
// the same client key: the engines start from copies of one data dir, as if the key had been
// pasted on each workstation, with the key's local id changed on each copy, so only the key's
// secret (never its id) can make a pin or a lease the same on two instances.
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../src/main/engine/store/db';
import { startTestEngine, type TestEngine } from '../../support/harness';
import { startTeamRig, type TeamRig } from '../../support/teamRig';

export interface SessionsRig extends TeamRig {
  /** The client key every engine holds (each under its own id). */
  clientKey: string;
  /** Which API key a local connection id of engine `i` holds (its index in `keys`). */
  keyIndexOf(i: number, connectionId: string | null): number;
}

let rigs = 0;

export async function startSessionsRig(o: { instances: number; keys: string[]; env?: Record<string, string> }): Promise<SessionsRig> {
  const seed = mkdtempSync(join(tmpdir(), 'switchyard-seed-'));
  const dirs: string[] = [seed];
  const removeDirs = () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  /** A copy of the seed's data dir, its client key under an id of its own. */
  const copyOfSeed = () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-team-'));
    dirs.push(dir);
    cpSync(seed, dir, { recursive: true });
    const db = openStore({ path: join(dir, 'switchyard.db'), now: () => Date.now() });
    db.prepare('UPDATE client_keys SET id = ?').run(randomUUID());
    db.close();
    return dir;
  };
  try {
    const first = await startTestEngine({ dataDir: seed, env: o.env });
    const clientKey = first.clientKey;
    await first.stop();
    const rig = await startTeamRig({ instances: o.instances, keys: o.keys, env: o.env, team: `sessions-${process.pid}-${++rigs}`, dataDir: copyOfSeed });
    return {
      ...rig,
      clientKey,
      keyIndexOf: (i, id) => rig.conns[i]!.findIndex((c) => c.id === id),
      async stop() {
        await rig.stop();
        removeDirs();
      },
    };
  } catch (err) {
    removeDirs();
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
