// Team settings (team/teamSettings.ts): the command line beats the environment beats what is saved,
// and the view says which applies; the address and the key are encrypted at rest, masked in the
// view and held by the log redactor; a value set elsewhere is not changed here; a change of the
// address or team says a restart applies it.
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { SecretBox } from '../../../src/main/engine/secrets/secretBox';
import { generateTeamKey } from '../../../src/main/engine/secrets/teamKey';
import { openStore, type Db } from '../../../src/main/engine/store/db';
import { KeyValueRepo } from '../../../src/main/engine/store/keyValueRepo';
import { TeamSettings, type TeamCli } from '../../../src/main/engine/team/teamSettings';

const box = new SecretBox({ loadKey: () => Buffer.alloc(32, 7), describe: () => 'test' });
const dbs: Db[] = [];

function rig(o: { env?: Record<string, string>; cli?: TeamCli; db?: Db } = {}) {
  const db = o.db ?? openStore({ path: ':memory:', now: () => 0 });
  if (!o.db) dbs.push(db);
  const repo = new KeyValueRepo(db, () => 0);
  const redactor = new SecretRedactor();
  const log = createLogger({ sinks: [new MemorySink()], redactor, now: () => 0 });
  const s = new TeamSettings({ repo, box, env: o.env ?? {}, cli: o.cli, redactor, log, defaultDisplayName: 'host-a' });
  return { s, db, repo, redactor };
}

afterEach(() => {
  dbs.splice(0).forEach((d) => d.close());
});

describe('team settings', () => {
  it('takes the command line over the environment over what is saved, and says which applies', () => {
    const { s, db } = rig();
    s.patch({ redisUrl: 'redis://saved:6379', name: 'saved-team' });
    expect(s.address()).toEqual({ value: 'redis://saved:6379', source: 'saved', setBy: null });
    const env = rig({ db, env: { SWITCHYARD_REDIS_URL: 'redis://env:6379', SWITCHYARD_TEAM: 'env-team' } }).s;
    expect(env.address()).toMatchObject({ value: 'redis://env:6379', source: 'env', setBy: 'SWITCHYARD_REDIS_URL' });
    expect(env.team()).toMatchObject({ value: 'env-team', source: 'env' });
    const cli = rig({ db, env: { SWITCHYARD_REDIS_URL: 'redis://env:6379' }, cli: { redisUrl: 'redis://cli:6379', name: 'cli-team' } }).s;
    expect(cli.address()).toMatchObject({ value: 'redis://cli:6379', source: 'cli', setBy: '--redis' });
    expect(cli.team()).toMatchObject({ value: 'cli-team', source: 'cli', setBy: '--team' });
    // What is saved is still shown beside what applies.
    expect(cli.view().address.saved).toBe('redis://saved:6379');
    expect(rig().s.view()).toMatchObject({ address: { value: null, source: 'default' }, team: { value: 'default' }, role: { value: 'off' }, displayName: { value: 'host-a' } });
  });

  it('keeps the address and the key encrypted at rest, masked in the view and scrubbed from logs', () => {
    const { s, db, repo, redactor } = rig();
    const key = generateTeamKey();
    s.patch({ redisUrl: 'redis://:pa55word-x@redis.lan:6379/0', key });
    const raw = JSON.stringify(repo.all('team'));
    expect(raw).not.toContain('pa55word-x');
    expect(raw).not.toContain(key);
    const v = s.view();
    expect(v.address.value).toBe('redis://:***@redis.lan:6379/0');
    expect(JSON.stringify(v)).not.toContain('pa55word-x');
    expect(JSON.stringify(v)).not.toContain(key);
    expect(v.key).toMatchObject({ set: true, source: 'saved', masked: expect.stringMatching(/^…/) });
    expect(redactor.scrub(`url redis://:pa55word-x@x key ${key}`)).not.toMatch(/pa55word-x|\S{40,}=/);
    expect(s.revealKey()).toBe(key);
    // Read back after a restart.
    expect(rig({ db }).s.revealKey()).toBe(key);
  });

  it('refuses to change what the command line or the environment sets, and a bad address or key, in words', () => {
    const { s } = rig({ env: { SWITCHYARD_TEAM_ROLE: 'follow' }, cli: { redisUrl: 'redis://cli:6379' } });
    expect(() => s.patch({ redisUrl: 'redis://other:6379' })).toThrow(/set by --redis for this run/);
    expect(() => s.patch({ role: 'publish' })).toThrow(/set by SWITCHYARD_TEAM_ROLE/);
    expect(() => s.patch({ name: 'ok', key: 'short' })).toThrow(/not a team key/);
    // All or nothing: the name in the refused patch was not saved.
    expect(s.team().source).toBe('default');
    const plain = rig().s;
    expect(() => plain.patch({ redisUrl: 'http://redis:6379' })).toThrow(/redis:\/\/ or rediss:\/\//);
  });

  it('makes a key when this instance becomes the publisher without one', () => {
    const { s } = rig();
    const changed: string[][] = [];
    s.onChange((c) => changed.push(c));
    expect(s.patch({ role: 'publish' })).toEqual(['key', 'role']);
    expect(s.key().value).toHaveLength(32);
    expect(changed).toEqual([['key', 'role']]);
    const before = s.revealKey();
    s.generateKey();
    expect(s.revealKey()).not.toBe(before);
    expect(s.patch({ role: 'publish' })).toEqual([]);
  });

  it('says a restart applies a new address or team name, and nothing when it is the running one', () => {
    const { s } = rig({ cli: { name: 'acme' } });
    s.markRunning(null, 'acme');
    expect(s.view().restartNeeded).toBeNull();
    s.patch({ redisUrl: 'redis://team:6379' });
    expect(s.view().restartNeeded).toMatch(/Restart Switchyard to join the team/);
    s.markRunning('redis://team:6379', 'acme');
    expect(s.view().restartNeeded).toBeNull();
    s.patch({ redisUrl: 'redis://elsewhere:6379' });
    expect(s.view().restartNeeded).toMatch(/Restart Switchyard to use the new Redis address/);
    s.patch({ redisUrl: null });
    expect(s.view().restartNeeded).toMatch(/turns off when Switchyard restarts/);
  });
});
