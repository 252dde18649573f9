// Client keys: what local agents send (Authorization: Bearer or x-api-key) to use the proxy.
// Lookup is a SHA-256 of the presented key into an in-memory map; revocation is immediate.
import { createHash, randomUUID } from 'node:crypto';
import type { ClientKeyScope, ClientKeyView } from '../../../shared/model';
import type { Clock } from '../clock';
import { notFound } from '../errors';
import type { SecretRedactor } from '../logger';
import { randomToken } from '../random';
import { maskSecret, type SecretBox } from '../secrets/secretBox';
import type { ClientKeyRecord, ClientKeysRepo } from '../store/clientKeysRepo';

export const CLIENT_KEY_PREFIX = 'sk-sy-';

const hashKey = (k: string) => createHash('sha256').update(k).digest('hex');

export class ClientKeyService {
  private readonly byHash = new Map<string, ClientKeyRecord>();
  private readonly byId = new Map<string, ClientKeyRecord>();
  private readonly lastUsedFlush = new Map<string, number>();
  /** Recently presented keys (plaintext -> record), so the hot path skips hashing. Bounded. */
  private readonly recent = new Map<string, ClientKeyRecord>();

  constructor(
    private readonly repo: ClientKeysRepo,
    private readonly box: SecretBox,
    private readonly redactor: SecretRedactor,
    private readonly clock: Clock,
  ) {
    for (const k of repo.all()) {
      this.byId.set(k.id, k);
      if (!k.revokedAt) this.byHash.set(k.keyHash, k);
      this.redactor.hold(`clientKey:${k.id}`, this.box.decrypt(k.keyEnc));
    }
  }

  /** Makes the first key at first run, so the proxy is usable without configuration. */
  ensureDefault(): void {
    if (this.byId.size === 0) this.create('Default');
  }

  create(name: string, access: ClientKeyAccess = {}): { key: ClientKeyView; secret: string } {
    const secret = `${CLIENT_KEY_PREFIX}${randomToken(24)}`;
    const rec: ClientKeyRecord = {
      id: randomUUID(),
      name,
      keyHash: hashKey(secret),
      keyEnc: this.box.encrypt(secret),
      masked: maskSecret(secret),
      createdAt: this.clock.now(),
      lastUsedAt: null,
      revokedAt: null,
      scopes: [...(access.scopes ?? [])],
      allowedConnections: [...(access.allowedConnections ?? [])],
    };
    this.repo.insert(rec);
    this.byId.set(rec.id, rec);
    this.byHash.set(rec.keyHash, rec);
    this.redactor.hold(`clientKey:${rec.id}`, secret);
    return { key: this.view(rec), secret };
  }

  /** The key record by id (revoked included), for the lease checks. */
  get(id: string | null): ClientKeyRecord | undefined {
    return id === null ? undefined : this.byId.get(id);
  }

  /** Changes a key's scopes and lease pool; omitted fields keep their value. */
  setAccess(id: string, access: ClientKeyAccess): ClientKeyView {
    const k = this.byId.get(id);
    if (!k) throw notFound('client key', id);
    const scopes = [...(access.scopes ?? k.scopes)];
    const allowed = [...(access.allowedConnections ?? k.allowedConnections)];
    this.repo.setAccess(id, scopes, allowed);
    k.scopes = scopes;
    k.allowedConnections = allowed;
    return this.view(k);
  }

  list(): ClientKeyView[] {
    return [...this.byId.values()].map((k) => this.view(k));
  }

  reveal(id: string): string {
    const k = this.byId.get(id);
    if (!k) throw notFound('client key', id);
    const plain = this.box.decrypt(k.keyEnc);
    if (!plain) throw notFound('readable client key', id);
    return plain;
  }

  revoke(id: string): boolean {
    const k = this.byId.get(id);
    if (!k) throw notFound('client key', id);
    if (k.revokedAt) return false;
    k.revokedAt = this.clock.now();
    this.repo.revoke(id, k.revokedAt);
    this.byHash.delete(k.keyHash);
    this.recent.clear();
    return true;
  }

  /** The key record for a presented key, or null. Records last use at most once a minute. */
  authenticate(presented: string | null): ClientKeyRecord | null {
    if (!presented) return null;
    let rec = this.recent.get(presented);
    if (!rec) {
      rec = this.byHash.get(hashKey(presented));
      if (!rec) return null;
      if (this.recent.size >= 64) this.recent.clear();
      this.recent.set(presented, rec);
    }
    const now = this.clock.now();
    rec.lastUsedAt = now;
    const last = this.lastUsedFlush.get(rec.id) ?? 0;
    if (now - last > 60_000) {
      this.lastUsedFlush.set(rec.id, now);
      this.repo.touch(rec.id, now);
    }
    return rec;
  }

  private view(k: ClientKeyRecord): ClientKeyView {
    return {
      id: k.id,
      name: k.name,
      masked: k.masked,
      createdAt: k.createdAt,
      lastUsedAt: k.lastUsedAt,
      revokedAt: k.revokedAt,
      scopes: [...k.scopes],
      allowedConnections: [...k.allowedConnections],
    };
  }
}

export interface ClientKeyAccess {
  scopes?: readonly ClientKeyScope[];
  allowedConnections?: readonly string[];
}
