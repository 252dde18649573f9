// Team settings (issue 26): the Redis address, the team's name, the team key, this instance's role
// and its display name. Each value is taken from the command line (`--redis`, `--team`), else the
// environment (SWITCHYARD_REDIS_URL, SWITCHYARD_TEAM, SWITCHYARD_TEAM_KEY, SWITCHYARD_TEAM_ROLE),
// else what is saved here (key_value, namespace "team"), and the view says which applies. The
// address (it may hold a password) and the key are secrets: encrypted at rest with the machine's
// data key like connection secrets, held by the log redactor, and masked in every view.
import { hostname } from 'node:os';
import { TEAM_ROLES, type TeamRole, type TeamSettingsView, type TeamValueSource, type TeamValueView } from '../../../shared/team';
import { ApiError, badInput } from '../errors';
import { urlPassword, type Logger, type SecretRedactor } from '../logger';
import type { SecretBox } from '../secrets/secretBox';
import { generateTeamKey, maskTeamKey, parseTeamKey, teamKeyFingerprint } from '../secrets/teamKey';
import type { Env } from '../settings/resolve';
import type { KeyValueRepo } from '../store/keyValueRepo';
import { checkRedisUrl, maskRedisUrl } from './redisUrl';
import { DEFAULT_TEAM_NAME, teamKeyName } from './index';

const NS = 'team';

export const TEAM_ENV = {
  redisUrl: 'SWITCHYARD_REDIS_URL',
  name: 'SWITCHYARD_TEAM',
  key: 'SWITCHYARD_TEAM_KEY',
  role: 'SWITCHYARD_TEAM_ROLE',
} as const;

export type TeamSettingField = 'redisUrl' | 'name' | 'key' | 'role' | 'displayName';

/** Values given on the command line for this run (`serve --redis --team`, or a test's engine options). */
export interface TeamCli {
  redisUrl?: string | null;
  name?: string | null;
}

export interface TeamSettingsPatch {
  redisUrl?: string | null;
  name?: string | null;
  /** A pasted key (base64 or hex of 32 bytes); null removes it. */
  key?: string | null;
  role?: TeamRole;
  displayName?: string | null;
}

interface Resolved<T> {
  value: T;
  source: TeamValueSource;
  setBy: string | null;
}

interface Saved {
  redisUrl: string | null;
  name: string | null;
  key: Buffer | null;
  role: TeamRole | null;
  displayName: string | null;
}

export interface TeamSettingsOptions {
  repo: KeyValueRepo;
  box: SecretBox;
  env: Env;
  cli?: TeamCli;
  redactor: SecretRedactor;
  log: Logger;
  /** The display name when none is saved (default: the host's name). */
  defaultDisplayName?: string;
}

const FLAGS: Partial<Record<TeamSettingField, string>> = { redisUrl: '--redis', name: '--team' };
const WORDS: Record<TeamSettingField, string> = {
  redisUrl: 'The Redis address',
  name: "The team's name",
  key: 'The team key',
  role: "This instance's role",
  displayName: 'The display name',
};

export class TeamSettings {
  private saved: Saved;
  private running: { redisUrl: string | null; name: string } | null = null;
  private readonly listeners = new Set<(changed: TeamSettingField[]) => void>();
  private readonly envKey: Buffer | null;
  private readonly envRole: TeamRole | null;

  constructor(private readonly o: TeamSettingsOptions) {
    this.saved = this.load();
    const rawKey = o.env[TEAM_ENV.key];
    this.envKey = rawKey ? parseTeamKey(rawKey) : null;
    if (rawKey && !this.envKey) o.log.warn('team.envKeyIgnored', { detail: `${TEAM_ENV.key} is not a 32-byte key (base64 or hex); ignored` });
    const rawRole = o.env[TEAM_ENV.role];
    this.envRole = rawRole && (TEAM_ROLES as readonly string[]).includes(rawRole) ? (rawRole as TeamRole) : null;
    if (rawRole && !this.envRole) o.log.warn('team.envRoleIgnored', { detail: `${TEAM_ENV.role} must be one of ${TEAM_ROLES.join(', ')}; ignored` });
    this.holdSecrets();
  }

  onChange(fn: (changed: TeamSettingField[]) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  address(): Resolved<string | null> {
    const cli = this.o.cli?.redisUrl;
    if (cli) return { value: cli, source: 'cli', setBy: FLAGS.redisUrl! };
    const env = this.o.env[TEAM_ENV.redisUrl];
    if (env) return { value: env, source: 'env', setBy: TEAM_ENV.redisUrl };
    if (this.saved.redisUrl) return { value: this.saved.redisUrl, source: 'saved', setBy: null };
    return { value: null, source: 'default', setBy: null };
  }

  team(): Resolved<string> {
    const cli = this.o.cli?.name?.trim();
    if (cli) return { value: cli, source: 'cli', setBy: FLAGS.name! };
    const env = this.o.env[TEAM_ENV.name]?.trim();
    if (env) return { value: env, source: 'env', setBy: TEAM_ENV.name };
    if (this.saved.name) return { value: this.saved.name, source: 'saved', setBy: null };
    return { value: DEFAULT_TEAM_NAME, source: 'default', setBy: null };
  }

  key(): Resolved<Buffer | null> {
    if (this.envKey) return { value: this.envKey, source: 'env', setBy: TEAM_ENV.key };
    if (this.saved.key) return { value: this.saved.key, source: 'saved', setBy: null };
    return { value: null, source: 'default', setBy: null };
  }

  role(): Resolved<TeamRole> {
    if (this.envRole) return { value: this.envRole, source: 'env', setBy: TEAM_ENV.role };
    if (this.saved.role) return { value: this.saved.role, source: 'saved', setBy: null };
    return { value: 'off', source: 'default', setBy: null };
  }

  displayName(): Resolved<string> {
    if (this.saved.displayName) return { value: this.saved.displayName, source: 'saved', setBy: null };
    return { value: this.o.defaultDisplayName ?? (hostname() || 'this workstation'), source: 'default', setBy: null };
  }

  /** What this run connected with (a later change of these needs a restart). */
  markRunning(redisUrl: string | null, name: string): void {
    this.running = { redisUrl, name };
  }

  /** The full key as text, for copying it to another workstation (null: none). */
  revealKey(): string | null {
    return this.key().value?.toString('base64') ?? null;
  }

  view(): TeamSettingsView {
    const mask = (url: string | null) => (url ? maskRedisUrl(url) : null);
    const address = this.address();
    const key = this.key();
    return {
      address: { ...address, value: mask(address.value), saved: mask(this.saved.redisUrl) },
      team: { ...this.team(), saved: this.saved.name },
      key: {
        set: key.value !== null,
        source: key.source,
        setBy: key.setBy,
        masked: key.value ? maskTeamKey(key.value) : null,
        fingerprint: key.value ? teamKeyFingerprint(key.value) : null,
      },
      role: { ...this.role(), saved: this.saved.role } as TeamValueView<TeamRole>,
      displayName: { ...this.displayName(), saved: this.saved.displayName },
      restartNeeded: this.restartNeeded(),
    };
  }

  private restartNeeded(): string | null {
    if (!this.running) return null;
    const url = this.address().value;
    const sameUrl = url === this.running.redisUrl;
    const sameTeam = teamKeyName(this.team().value) === teamKeyName(this.running.name);
    if (sameUrl && (sameTeam || url === null)) return null;
    if (url === null) return 'Team mode turns off when Switchyard restarts.';
    if (this.running.redisUrl === null) return 'Restart Switchyard to join the team: team mode starts when it connects to Redis at start.';
    return 'Restart Switchyard to use the new Redis address and team name; until then it stays connected as before.';
  }

  /** Saves a change (all or nothing); answers what changed. */
  patch(p: TeamSettingsPatch): TeamSettingField[] {
    const next: Saved = { ...this.saved };
    const refuse = (f: TeamSettingField, r: Resolved<unknown>) => {
      if (r.source === 'cli' || r.source === 'env') {
        throw new ApiError(409, 'set_elsewhere', `${WORDS[f]} is set by ${r.setBy} for this run; start without it to change it here.`, f);
      }
    };
    if (p.redisUrl !== undefined) {
      refuse('redisUrl', this.address());
      const url = p.redisUrl?.trim() || null;
      if (url) {
        const c = checkRedisUrl(url);
        if (!c.ok) throw badInput('redisUrl', `The Redis address ${c.message}`);
      }
      next.redisUrl = url;
    }
    if (p.name !== undefined) {
      refuse('name', this.team());
      next.name = p.name?.trim() || null;
    }
    if (p.key !== undefined) {
      refuse('key', this.key());
      if (p.key === null || p.key.trim() === '') next.key = null;
      else {
        const k = parseTeamKey(p.key);
        if (!k) throw badInput('key', 'This is not a team key: paste the whole key (44 characters) copied from the workstation that made it.');
        next.key = k;
      }
    }
    if (p.role !== undefined) {
      refuse('role', this.role());
      next.role = p.role;
      // Publishing needs a key to encrypt the connection secrets with: made here when there is none.
      if (p.role === 'publish' && !next.key && !this.envKey) next.key = Buffer.from(generateTeamKey(), 'base64');
    }
    if (p.displayName !== undefined) next.displayName = p.displayName?.trim() || null;
    return this.save(next);
  }

  /** Replaces the saved key with a new random one. */
  generateKey(): TeamSettingField[] {
    const k = this.key();
    if (k.source === 'env') throw new ApiError(409, 'set_elsewhere', `The team key is set by ${k.setBy} for this run; start without it to change it here.`, 'key');
    return this.save({ ...this.saved, key: Buffer.from(generateTeamKey(), 'base64') });
  }

  private save(next: Saved): TeamSettingField[] {
    const changed: TeamSettingField[] = [];
    const same = (a: unknown, b: unknown) => (Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : a === b);
    for (const f of ['redisUrl', 'name', 'key', 'role', 'displayName'] as const) if (!same(this.saved[f], next[f])) changed.push(f);
    if (changed.length === 0) return [];
    this.o.repo.transaction(() => {
      for (const f of changed) {
        const v = next[f];
        if (v === null) this.o.repo.delete(NS, f);
        else if (f === 'redisUrl') this.o.repo.set(NS, f, this.o.box.encrypt(v as string));
        else if (f === 'key') this.o.repo.set(NS, f, this.o.box.encrypt((v as Buffer).toString('base64')));
        else this.o.repo.set(NS, f, v);
      }
    });
    this.saved = next;
    this.holdSecrets();
    for (const fn of [...this.listeners]) fn(changed);
    return changed;
  }

  private load(): Saved {
    const text = (k: string) => {
      const v = this.o.repo.get<unknown>(NS, k);
      return typeof v === 'string' && v.trim() ? v.trim() : null;
    };
    const secret = (k: string) => {
      const enc = text(k);
      if (!enc) return null;
      const plain = this.o.box.decrypt(enc);
      // Saved with another machine's data key (a copied data folder): as if not saved.
      if (plain === null) this.o.log.warn('team.savedSecretUnreadable', { field: k });
      return plain;
    };
    const role = text('role');
    const key = secret('key');
    return {
      redisUrl: secret('redisUrl'),
      name: text('name'),
      key: key ? parseTeamKey(key) : null,
      role: role && (TEAM_ROLES as readonly string[]).includes(role) ? (role as TeamRole) : null,
      displayName: text('displayName'),
    };
  }

  /** The log redactor scrubs the addresses' passwords and the key wherever they would appear. */
  private holdSecrets(): void {
    this.o.redactor.hold('team:redis-saved', urlPassword(this.saved.redisUrl));
    this.o.redactor.hold('team:redis-in-force', urlPassword(this.address().value));
    this.o.redactor.hold('team:key', this.key().value?.toString('base64') ?? null);
  }
}
