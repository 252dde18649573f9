// Who a connection is to the team (issue 26). Each workstation has its own connection rows, with
// its own ids, but the thing a provider rate-limits is the credential: two workstations holding the
// same API key for the same endpoint hold the same account, whatever they named it. So a
// connection's team id is a keyed hash of (provider, endpoint, credential): equal on every instance
// that holds that key, useless to anyone who reads Redis without the key (the credential never
// leaves this process). A Claude subscription is its organisation (its tokens rotate). A connection
// without a credential is shared only when its endpoint is not this machine's own (a local model
// server on each workstation is a different server); those get no team id and stay local.
import { createHmac } from 'node:crypto';
import { CLAUDE_KIND } from '../../../shared/model';
import type { ConnectionRegistry } from '../connections/registry';
import type { ConnectionRecord } from '../store/connectionsRepo';

const LOOPBACK_HOST = /^(localhost|127\.\d+\.\d+\.\d+|\[?::1\]?|0\.0\.0\.0)$/i;

export class TeamIdentity {
  private readonly ids = new WeakMap<ConnectionRecord, string | null>();
  private index: Map<string, string[]> | null = null;

  constructor(
    private readonly registry: Pick<ConnectionRegistry, 'all' | 'get' | 'secretOf' | 'onChange'>,
    private readonly teamName: string,
  ) {
    registry.onChange((kind) => {
      if (kind === 'config') this.index = null;
    });
  }

  /** The team id of a connection (null: it is not shared). Computed once per connection record. */
  of(conn: ConnectionRecord): string | null {
    if (this.ids.has(conn)) return this.ids.get(conn)!;
    const id = this.compute(conn);
    this.ids.set(conn, id);
    return id;
  }

  /** The team id of a connection by its local id. */
  ofId(connectionId: string): string | null {
    const c = this.registry.get(connectionId);
    return c ? this.of(c) : null;
  }

  /** The local connections that hold this team id (usually one; none when this instance lacks the key). */
  localIds(teamId: string): readonly string[] {
    if (!this.index) {
      const index = new Map<string, string[]>();
      for (const c of this.registry.all()) {
        const t = this.of(c);
        if (t) index.set(t, [...(index.get(t) ?? []), c.id]);
      }
      this.index = index;
    }
    return this.index.get(teamId) ?? [];
  }

  private compute(conn: ConnectionRecord): string | null {
    let credential: string | null;
    if (conn.kind === CLAUDE_KIND) {
      const org = conn.providerSpecificData.organizationUUID;
      credential = typeof org === 'string' && org ? `claude-org:${org}` : null;
      if (!credential) return null;
    } else {
      credential = this.registry.secretOf(conn);
      if (!credential && isLoopback(conn.baseUrl)) return null;
    }
    const h = createHmac('sha256', `switchyard-team:${this.teamName}`);
    h.update(`${conn.provider}\u0000${conn.baseUrl.replace(/\/+$/, '').toLowerCase()}\u0000${credential ?? ''}`);
    return `c_${h.digest('base64url').slice(0, 22)}`;
  }
}

function isLoopback(url: string): boolean {
  try {
    return LOOPBACK_HOST.test(new URL(url).hostname);
  } catch {
    return false;
  }
}
