// The three upstream timeouts of a connection (its own override, else the setting), resolved once
// per connection record and settings snapshot instead of on every attempt.
import type { ResolvedSettings } from '../settings/resolve';
import { effectiveFor } from '../settings/resolve';
import type { ConnectionRecord } from '../store/connectionsRepo';

export interface UpstreamTimeouts {
  connectMs: number;
  headersMs: number;
  idleMs: number;
}

export class TimeoutResolver {
  private readonly cache = new WeakMap<ConnectionRecord, { snap: ResolvedSettings; t: UpstreamTimeouts }>();

  constructor(private readonly snapshot: () => ResolvedSettings) {}

  of(conn: ConnectionRecord): UpstreamTimeouts {
    const snap = this.snapshot();
    const hit = this.cache.get(conn);
    if (hit && hit.snap === snap) return hit.t;
    const t = {
      connectMs: effectiveFor(snap, 'upstream.connectTimeoutMs', conn).value,
      headersMs: effectiveFor(snap, 'upstream.headersTimeoutMs', conn).value,
      idleMs: effectiveFor(snap, 'upstream.idleTimeoutMs', conn).value,
    };
    this.cache.set(conn, { snap, t });
    return t;
  }
}
