// The team's configuration as it travels through Redis (issue 26): one publication holding the
// publisher's connections, combos, model mappings and the saved settings that are not about one
// machine. Connection secrets and proxy credentials are encrypted with the team key; the whole body
// is sealed with it (HMAC), so a follower applies only what someone holding the key published.
// Pure functions over plain records: building a publication and opening one.
import { createHash } from 'node:crypto';
import { CLAUDE_KIND } from '../../../shared/model';
import { isSettingKey, validatePatch, type SettingKey } from '../../../shared/settings';
import type { TeamCipher } from '../secrets/teamKey';
import type { ComboRecord, ModelMappingRecord } from '../store/combosRepo';
import { connectionConfigOf, type ConnectionConfig, type ConnectionRecord } from '../store/connectionsRepo';

export const CONFIG_FORMAT = 1;

/**
 * Settings that describe this machine rather than the team: its proxy port, how long its own
 * request log is kept, and which notifications this person muted. Never published, never managed.
 */
export const MACHINE_SETTINGS: readonly SettingKey[] = ['proxy.port', 'logs.retentionDays', 'logs.maxRows', 'notifications.muted'];

export const isTeamSetting = (k: string): k is SettingKey => isSettingKey(k) && !MACHINE_SETTINGS.includes(k);

/** A connection as the team publishes it: its configuration without health, secrets encrypted. */
export type TeamConnection = { id: string } & ConnectionConfig & {
  /** The secret, encrypted with the team key. */
  secretEnc: string | null;
  /** The outbound proxy URL as shown (its password masked), or null. */
  outboundProxy: string | null;
  /** The full proxy URL, encrypted with the team key, when it carries credentials. */
  outboundProxyEnc: string | null;
  createdAt: number;
};

export interface ConfigBody {
  format: number;
  owner: { name: string; instanceId: string };
  revision: number;
  publishedAt: number;
  connections: TeamConnection[];
  combos: ComboRecord[];
  mappings: ModelMappingRecord[];
  /** Saved settings (team settings only); a key absent here means "the default" on followers. */
  settings: Record<string, unknown>;
}

/** What is written to Redis. `owner` is repeated outside the seal only to name the publisher in messages. */
export interface ConfigPublication {
  format: number;
  keyId: string;
  owner: string;
  body: string;
  mac: string;
}

/** A connection as a follower applies it: the secret and the proxy URL in the clear (in memory only). */
export interface OpenedConnection extends Omit<TeamConnection, 'secretEnc' | 'outboundProxyEnc' | 'outboundProxy'> {
  secret: string | null;
  outboundProxy: string | null;
}

export interface OpenedConfig extends Omit<ConfigBody, 'connections'> {
  connections: OpenedConnection[];
}

export interface PublishSource {
  connections: readonly ConnectionRecord[];
  secretOf(c: ConnectionRecord): string | null;
  outboundProxyOf(c: ConnectionRecord): string | null;
  combos: readonly ComboRecord[];
  mappings: readonly ModelMappingRecord[];
  /** The saved settings (all of them; machine settings are left out here). */
  settings: Partial<Record<string, unknown>>;
}

/**
 * Whether a connection goes into the publication. A Claude subscription is a sign-in whose tokens
 * rotate on every refresh: two workstations refreshing one sign-in would spend each other's token,
 * so each person signs in on their own workstation. A connection whose secret this machine cannot
 * read (a copied data folder) cannot be shared either.
 */
export function isPublishable(c: ConnectionRecord, secret: string | null): boolean {
  if (c.kind === CLAUDE_KIND) return false;
  return c.secretEnc === null || secret !== null;
}

/** The content of a publication without its stamp, for "did anything change?" (kept in memory only). */
export function contentHash(src: PublishSource): string {
  const h = createHash('sha256');
  for (const c of src.connections) {
    const secret = src.secretOf(c);
    if (!isPublishable(c, secret)) continue;
    h.update(JSON.stringify({ ...c, health: null, updatedAt: null, secretEnc: null, outboundProxyEnc: null }));
    h.update(`\u0000${secret ?? ''}\u0000${src.outboundProxyOf(c) ?? ''}\u0000`);
  }
  h.update(JSON.stringify(src.combos.map((c) => ({ ...c, updatedAt: null }))));
  h.update(JSON.stringify(src.mappings.map((m) => ({ ...m, updatedAt: null }))));
  h.update(JSON.stringify(teamSettingsOf(src.settings)));
  return h.digest('hex');
}

function teamSettingsOf(saved: Partial<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(saved).sort()) if (isTeamSetting(k)) out[k] = saved[k];
  return out;
}

export function buildPublication(
  src: PublishSource,
  stamp: { owner: { name: string; instanceId: string }; revision: number; publishedAt: number },
  cipher: TeamCipher,
): ConfigPublication {
  const connections: TeamConnection[] = [];
  for (const c of src.connections) {
    const secret = src.secretOf(c);
    if (!isPublishable(c, secret)) continue;
    const proxy = src.outboundProxyOf(c);
    const proxyHasCredentials = c.outboundProxyEnc !== null && proxy !== null;
    connections.push({
      id: c.id,
      ...connectionConfigOf(c),
      secretEnc: secret !== null ? cipher.encrypt(secret) : null,
      outboundProxy: c.outboundProxy,
      outboundProxyEnc: proxyHasCredentials ? cipher.encrypt(proxy) : null,
      createdAt: c.createdAt,
    });
  }
  const body: ConfigBody = {
    format: CONFIG_FORMAT,
    owner: stamp.owner,
    revision: stamp.revision,
    publishedAt: stamp.publishedAt,
    connections,
    combos: src.combos.map((c) => ({ ...c })),
    mappings: src.mappings.map((m) => ({ ...m })),
    settings: teamSettingsOf(src.settings),
  };
  const text = JSON.stringify(body);
  return { format: CONFIG_FORMAT, keyId: cipher.keyId, owner: stamp.owner.name, body: text, mac: cipher.seal(text) };
}

export type OpenResult = { ok: true; config: OpenedConfig } | { ok: false; why: 'format' | 'wrong-key' | 'seal' | 'unreadable' };

/** Checks and decrypts a publication; nothing is applied unless every part of it opens. */
export function openPublication(pub: ConfigPublication, cipher: TeamCipher): OpenResult {
  if (!pub || typeof pub.body !== 'string' || typeof pub.mac !== 'string') return { ok: false, why: 'unreadable' };
  if (pub.format !== CONFIG_FORMAT) return { ok: false, why: 'format' };
  if (pub.keyId !== cipher.keyId) return { ok: false, why: 'wrong-key' };
  if (!cipher.verify(pub.body, pub.mac)) return { ok: false, why: 'seal' };
  let body: ConfigBody;
  try {
    body = JSON.parse(pub.body) as ConfigBody;
  } catch {
    return { ok: false, why: 'unreadable' };
  }
  if (body.format !== CONFIG_FORMAT || !Array.isArray(body.connections) || !Array.isArray(body.combos) || !Array.isArray(body.mappings)) {
    return { ok: false, why: 'unreadable' };
  }
  const connections: OpenedConnection[] = [];
  for (const c of body.connections) {
    const secret = c.secretEnc !== null ? cipher.decrypt(c.secretEnc) : null;
    if (c.secretEnc !== null && secret === null) return { ok: false, why: 'wrong-key' };
    const proxy = c.outboundProxyEnc !== null ? cipher.decrypt(c.outboundProxyEnc) : c.outboundProxy;
    if (c.outboundProxyEnc !== null && proxy === null) return { ok: false, why: 'wrong-key' };
    const { secretEnc: _s, outboundProxyEnc: _p, ...rest } = c;
    connections.push({ ...rest, secret, outboundProxy: proxy });
  }
  const settings: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body.settings ?? {})) {
    // A setting this version does not know, or a value it would refuse, is left out (the rest applies).
    if (isTeamSetting(k) && validatePatch({ [k]: v }).ok) settings[k] = v;
  }
  return { ok: true, config: { ...body, connections, settings } };
}
