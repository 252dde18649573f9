// Configuration sharing (issue 26). One instance of a team publishes ("publish" role): its
// connections (secrets encrypted with the team key), combos, model mappings and the saved settings
// that are not about one machine go to Redis as one sealed publication (configDoc.ts), again after
// every change (a burst of changes is one publication). The others follow ("follow" role): they
// apply it under the publisher's ids, so combos, pins and leases name the same connections
// everywhere, remove what the publisher removed, and mark what came from the team as managed by it
// (read-only here; management/teamGuard.ts refuses edits). A publication this instance cannot open
// (no key, another key, a broken seal) changes nothing: the last good configuration stays, and the
// view says why in words.
//
// The publication travels as one record of a shared table (replicator.ts): newest version wins,
// pub/sub brings it to followers at once, a publish made while Redis is down is written when it
// returns, and on every (re)connect the table is read back, so a follower that was away catches up.
import type { ComboRecord, CombosRepo, ModelMappingRecord } from '../store/combosRepo';
import { SETTING_KEYS } from '../../../shared/settings';
import type { TeamConfigView, TeamManagedView, TeamPublisherView, TeamRole } from '../../../shared/team';
import type { Clock, CancelTimer } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import { ApiError } from '../errors';
import type { Logger } from '../logger';
import type { ComboRegistry } from '../routing/combos/comboRegistry';
import { TeamCipher } from '../secrets/teamKey';
import type { SettingsService } from '../settings/settingsService';
import type { Db } from '../store/db';
import type { KeyValueRepo } from '../store/keyValueRepo';
import { buildPublication, contentHash, isTeamSetting, openPublication, type ConfigPublication, type OpenedConfig, type PublishSource } from './configDoc';
import type { Team, SharedTable } from './index';
import type { TeamSettings } from './teamSettings';

const NS = 'teamConfig';
/** The one record of the shared table "config". */
const DOC = 'current';
/** A burst of local changes within this long becomes one publication. */
export const PUBLISH_DELAY_MS = 150;

export type ManagedKind = 'connection' | 'combo' | 'mapping' | 'setting';

/** What was applied from the team, persisted so the marks survive a restart. */
interface Applied {
  publisher: TeamPublisherView;
  appliedAt: number;
  connections: string[];
  combos: string[];
  mappings: string[];
  settings: string[];
}

export interface ConfigShareDeps {
  team: Team;
  teamSettings: TeamSettings;
  registry: ConnectionRegistry;
  combos: ComboRegistry;
  combosRepo: CombosRepo;
  db: Db;
  settings: SettingsService;
  kv: KeyValueRepo;
  clock: Clock;
  log: Logger;
  publishDelayMs?: number;
}

const OPEN_WORDS = {
  format: (owner: string) => `${owner} published with a newer version of Switchyard. Update this workstation to follow it; the configuration applied before stays in use.`,
  'wrong-key': (owner: string) =>
    `This workstation's team key is not the one ${owner} published with. Copy the key from ${owner}'s Team page and paste it here; the configuration applied before stays in use.`,
  seal: (owner: string) =>
    `The configuration ${owner} published did not pass its check (it was changed after it was published), so it was not applied; the configuration applied before stays in use.`,
  unreadable: (owner: string) => `The configuration ${owner} published could not be read, so it was not applied; the configuration applied before stays in use.`,
};

export class ConfigShare {
  private readonly table: SharedTable<ConfigPublication>;
  /** The newest publication seen from another instance (kept to apply it again when the key or role changes). */
  private last: { pub: ConfigPublication; from: string } | null = null;
  private applied: Applied | null;
  /** What this instance published last (publisher role). */
  private published: { publisher: TeamPublisherView; hash: string } | null = null;
  private failure: string | null = null;
  private timer: CancelTimer | null = null;
  private readonly listeners = new Set<() => void>();
  private readonly offs: (() => void)[] = [];
  private linkState: string;

  constructor(private readonly d: ConfigShareDeps) {
    this.applied = d.kv.get<Applied>(NS, 'applied') ?? null;
    this.table = d.team.table<ConfigPublication>('config', (key, value, from) => this.receive(key, value, from));
    this.offs.push(
      d.registry.onChange((kind) => kind === 'config' && this.schedule()),
      d.combos.onChange(() => this.schedule()),
      d.settings.onChange((changed) => changed.some(isTeamSetting) && this.schedule()),
      d.teamSettings.onChange((changed) => this.settingsChanged(changed)),
      d.team.onStatus((st) => this.linkChanged(st.state)),
    );
    this.linkState = d.team.status().state;
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of [...this.listeners]) {
      try {
        fn();
      } catch (err) {
        this.d.log.warn('team.config.listenerFailed', { err });
      }
    }
  }

  private get role(): TeamRole {
    return this.d.teamSettings.role().value;
  }

  /** Joined the team: a publisher publishes what it has (Redis keeps it until the link is up). */
  start(): void {
    if (this.role === 'publish') this.publish(true);
  }

  close(): void {
    this.timer?.();
    this.timer = null;
    this.offs.splice(0).forEach((o) => o());
  }

  // ---- publishing --------------------------------------------------------------------------------

  /**
   * Back after an outage: Redis may have lost the publication (a restart without persistence), so
   * the publisher writes it again; followers find nothing changed and apply nothing.
   */
  private linkChanged(state: string): void {
    const was = this.linkState;
    this.linkState = state;
    if (state === 'connected' && was === 'degraded' && this.role === 'publish') this.publish(true);
  }

  private schedule(): void {
    if (this.timer || this.role !== 'publish' || !this.d.team.enabled) return;
    this.timer = this.d.clock.setTimer(() => {
      this.timer = null;
      this.publish(false);
    }, this.d.publishDelayMs ?? PUBLISH_DELAY_MS);
  }

  private source(): PublishSource {
    const { registry, combos, settings } = this.d;
    return {
      connections: registry.all(),
      secretOf: (c) => registry.secretOf(c),
      outboundProxyOf: (c) => registry.outboundProxyOf(c),
      combos: combos.list(),
      mappings: combos.mappingViews().map(({ comboName: _n, ...m }) => m),
      settings: settings.snapshot.persisted,
    };
  }

  /** "Publish now" (the management API): refused with a plain reason when it cannot be done. */
  publishNow(): void {
    if (!this.d.team.enabled) throw new ApiError(409, 'team_off', 'Team mode is off: set a Redis address first (and restart Switchyard to join the team).');
    if (this.role !== 'publish') throw new ApiError(409, 'not_publisher', 'Only the instance whose role is "Publish" publishes the configuration. Choose that role first.');
    this.publish(true);
  }

  /** Publishes the configuration (`force`: even when nothing changed since the last publication). */
  private publish(force: boolean): void {
    if (this.role !== 'publish' || !this.d.team.enabled) return;
    const key = this.d.teamSettings.key().value;
    if (!key) {
      this.failure = 'Generate or paste a team key: it encrypts the connection keys before they are published.';
      this.changed();
      return;
    }
    const src = this.source();
    const hash = contentHash(src);
    if (!force && this.published?.hash === hash) return;
    const revision = (this.d.kv.get<number>(NS, 'revision') ?? 0) + 1;
    this.d.kv.set(NS, 'revision', revision);
    const publisher: TeamPublisherView = {
      name: this.d.teamSettings.displayName().value,
      instanceId: this.d.team.instanceId,
      revision,
      publishedAt: this.d.clock.now(),
    };
    const pub = buildPublication(src, { owner: { name: publisher.name, instanceId: publisher.instanceId }, revision, publishedAt: publisher.publishedAt }, new TeamCipher(key));
    this.table.publish(DOC, pub);
    this.published = { publisher, hash };
    this.failure = null;
    this.d.log.info('team.config.published', { revision, connections: src.connections.length });
    this.changed();
  }

  // ---- following ---------------------------------------------------------------------------------

  private receive(key: string, value: ConfigPublication | null, from: string): void {
    if (key !== DOC || value === null || typeof value !== 'object') return;
    this.last = { pub: value, from };
    if (this.role === 'follow') this.apply(value);
    this.changed();
  }

  private fail(message: string): void {
    this.failure = message;
    this.d.log.warn('team.config.notApplied', { reason: message });
  }

  private apply(pub: ConfigPublication): void {
    const owner = typeof pub.owner === 'string' && pub.owner ? pub.owner : 'the publisher';
    const key = this.d.teamSettings.key().value;
    if (!key) return this.fail(`No team key on this workstation yet. Copy the key from ${owner}'s Team page and paste it here.`);
    const opened = openPublication(pub, new TeamCipher(key));
    if (!opened.ok) return this.fail(OPEN_WORDS[opened.why](owner));
    try {
      this.write(opened.config);
      this.failure = null;
    } catch (err) {
      this.d.log.error('team.config.applyFailed', { err });
      this.fail(`The configuration ${owner} published could not be applied here (${(err as Error).message}).`);
    }
  }

  /** Applies an opened publication: connections, then combos and mappings, then what went, then settings. */
  private write(cfg: OpenedConfig): void {
    const before = this.applied;
    const ids = new Set(cfg.connections.map((c) => c.id));
    for (const c of cfg.connections) this.d.registry.adoptFromTeam(c);
    this.writeCombos(cfg, before);
    for (const id of before?.connections ?? []) if (!ids.has(id) && this.d.registry.get(id)) this.d.registry.delete(id);
    const settings = this.writeSettings(cfg);
    this.applied = {
      publisher: { name: cfg.owner.name, instanceId: cfg.owner.instanceId, revision: cfg.revision, publishedAt: cfg.publishedAt },
      appliedAt: this.d.clock.now(),
      connections: [...ids],
      combos: cfg.combos.map((c) => c.id),
      mappings: cfg.mappings.filter((m) => cfg.combos.some((c) => c.id === m.comboId)).map((m) => m.id),
      settings,
    };
    this.d.kv.set(NS, 'applied', this.applied);
    this.d.log.info('team.config.applied', { revision: cfg.revision, from: cfg.owner.name, connections: ids.size, combos: cfg.combos.length });
  }

  /**
   * The team's combos and mappings replace the ones it published before; a local one with the
   * same name (or pattern) gives way to the team's. Written in one transaction, then read again.
   */
  private writeCombos(cfg: OpenedConfig, before: Applied | null): void {
    const repo = this.d.combosRepo;
    const combos = new Map(cfg.combos.map((c) => [c.id, c]));
    const names = new Set(cfg.combos.map((c) => c.name.toLowerCase()));
    const mappings = new Map(cfg.mappings.filter((m) => combos.has(m.comboId)).map((m) => [m.id, m]));
    const patterns = new Set([...mappings.values()].map((m) => m.pattern.toLowerCase()));
    const managedCombos = new Set(before?.combos ?? []);
    const managedMappings = new Set(before?.mappings ?? []);
    const same = (a: ComboRecord | ModelMappingRecord, b: ComboRecord | ModelMappingRecord) => JSON.stringify({ ...a, updatedAt: 0 }) === JSON.stringify({ ...b, updatedAt: 0 });
    let dirty = false;
    this.d.db.transaction(() => {
      const current = repo.combos();
      const currentById = new Map(current.map((c) => [c.id, c]));
      for (const c of current) {
        if (combos.has(c.id)) continue;
        if (managedCombos.has(c.id) || names.has(c.name.toLowerCase())) {
          repo.deleteCombo(c.id);
          dirty = true;
        }
      }
      for (const m of repo.mappings()) {
        const want = mappings.get(m.id);
        if (want ? want.pattern.toLowerCase() !== m.pattern.toLowerCase() : managedMappings.has(m.id) || patterns.has(m.pattern.toLowerCase())) {
          repo.deleteMapping(m.id);
          dirty = true;
        }
      }
      // A renamed combo first takes a name nobody uses, so two combos that swap names never clash.
      for (const c of cfg.combos) {
        const cur = currentById.get(c.id);
        if (cur && cur.name.toLowerCase() !== c.name.toLowerCase()) repo.saveCombo({ ...c, name: `${c.id}\u0000renaming` });
      }
      for (const c of cfg.combos) {
        const cur = currentById.get(c.id);
        if (cur && same(cur, c)) continue;
        repo.saveCombo(c);
        dirty = true;
      }
      const currentMappings = new Map(repo.mappings().map((m) => [m.id, m]));
      for (const m of mappings.values()) {
        const cur = currentMappings.get(m.id);
        if (cur && same(cur, m)) continue;
        repo.saveMapping(m);
        dirty = true;
      }
    })();
    if (dirty) this.d.combos.reload();
  }

  /** The team's saved settings replace this instance's (a setting the publisher left at its default goes back to it). */
  private writeSettings(cfg: OpenedConfig): string[] {
    const snap = this.d.settings.snapshot;
    const managed = SETTING_KEYS.filter((k) => isTeamSetting(k) && snap.sources[k] !== 'cli');
    const patch: Record<string, unknown> = {};
    for (const k of managed) {
      const want = Object.prototype.hasOwnProperty.call(cfg.settings, k) ? cfg.settings[k] : null;
      const have = Object.prototype.hasOwnProperty.call(snap.persisted, k) ? snap.persisted[k] : null;
      if (JSON.stringify(want) !== JSON.stringify(have)) patch[k] = want;
    }
    if (Object.keys(patch).length === 0) return managed;
    try {
      this.d.settings.patch(patch);
    } catch {
      // One value this instance refuses (e.g. against a value its environment sets) holds back only itself.
      for (const [k, v] of Object.entries(patch)) {
        try {
          this.d.settings.patch({ [k]: v });
        } catch (err) {
          this.d.log.warn('team.config.settingNotApplied', { key: k, err });
        }
      }
    }
    return managed;
  }

  // ---- role and key ------------------------------------------------------------------------------

  private settingsChanged(changed: readonly string[]): void {
    const role = this.role;
    if (changed.includes('role')) {
      // No longer following: what came from the team stays here as this instance's own.
      if (role !== 'follow' && this.applied) {
        this.applied = null;
        this.d.kv.delete(NS, 'applied');
      }
      this.failure = null;
      if (role === 'follow' && this.last) this.apply(this.last.pub);
      if (role !== 'publish') this.published = null;
    } else if (changed.includes('key') && role === 'follow' && this.last) {
      this.apply(this.last.pub);
    }
    if (role === 'publish' && changed.some((f) => f === 'role' || f === 'key' || f === 'displayName')) this.publish(true);
    this.changed();
  }

  // ---- what the dashboard and the guard read ----------------------------------------------------

  /** The publisher's name when this item is managed by the team here (null: it is this instance's own). */
  ownerOf(kind: ManagedKind, id: string): string | null {
    const a = this.applied;
    if (!a || this.role !== 'follow') return null;
    const list = kind === 'connection' ? a.connections : kind === 'combo' ? a.combos : kind === 'mapping' ? a.mappings : a.settings;
    return list.includes(id) ? a.publisher.name : null;
  }

  managedView(): TeamManagedView {
    const a = this.role === 'follow' ? this.applied : null;
    return {
      owner: a?.publisher.name ?? null,
      connections: a?.connections.filter((id) => this.d.registry.get(id)) ?? [],
      combos: a?.combos ?? [],
      mappings: a?.mappings ?? [],
      settings: a?.settings ?? [],
    };
  }

  view(): TeamConfigView {
    const role = this.role;
    const seen = this.last ? seenPublisher(this.last) : null;
    if (!this.d.team.enabled || role === 'off') {
      return { state: 'off', message: null, publisher: seen ?? this.applied?.publisher ?? null, appliedAt: null, appliedRevision: null };
    }
    if (role === 'publish') {
      // Another instance published after this one: two publishers, the newest wins on followers.
      const other = seen && this.published && seen.publishedAt > this.published.publisher.publishedAt ? seen : null;
      const message =
        this.failure ?? (other ? `${other.name} also publishes the team's configuration; followers use the newest publication. Keep one publisher per team.` : null);
      return { state: this.failure ? 'failed' : 'published', message, publisher: this.published?.publisher ?? null, appliedAt: null, appliedRevision: null };
    }
    const a = this.applied;
    if (this.failure) return { state: 'failed', message: this.failure, publisher: seen ?? a?.publisher ?? null, appliedAt: a?.appliedAt ?? null, appliedRevision: a?.publisher.revision ?? null };
    if (!a) {
      return { state: 'waiting', message: 'Nothing has been published to this team yet: choose "Publish" on the workstation that owns the configuration.', publisher: null, appliedAt: null, appliedRevision: null };
    }
    return { state: 'following', message: null, publisher: a.publisher, appliedAt: a.appliedAt, appliedRevision: a.publisher.revision };
  }
}

/** What a publication says about its publisher before it is opened (for messages only). */
function seenPublisher(last: { pub: ConfigPublication; from: string }): TeamPublisherView | null {
  try {
    const b = JSON.parse(last.pub.body) as { owner?: { name?: unknown }; revision?: unknown; publishedAt?: unknown };
    return {
      name: typeof b.owner?.name === 'string' ? b.owner.name : last.pub.owner,
      instanceId: last.from,
      revision: typeof b.revision === 'number' ? b.revision : 0,
      publishedAt: typeof b.publishedAt === 'number' ? b.publishedAt : 0,
    };
  } catch {
    return null;
  }
}
