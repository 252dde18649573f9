// session_pins (migration 5): which connection (and, for a combo, which target) a client session
// is pinned to. The session affinity module keeps the pins in memory and writes through here on
// change; the sliding lastUsedAt is written at most once a minute per pin.
import { SESSION_SOURCES, type SessionSource } from '../../../shared/model';
import type { Db } from './db';

export interface PinRecord {
  id: string;
  /** '' when the request carried no client key id. */
  clientKeyId: string;
  /** '' for plain routing, else the combo's id. */
  scope: string;
  session: string;
  source: SessionSource;
  connectionId: string;
  /** The combo target's stable key (provider/model#connection) and index, for combo pins. */
  targetKey: string | null;
  targetIndex: number | null;
  /** The upstream model that served last. */
  model: string | null;
  createdAt: number;
  pinnedAt: number;
  lastUsedAt: number;
}

interface Row {
  id: string;
  client_key_id: string;
  scope: string;
  session_id: string;
  source: string;
  connection_id: string;
  target_key: string | null;
  target_index: number | null;
  model: string | null;
  created_at: number;
  pinned_at: number;
  last_used_at: number;
}

const fromRow = (r: Row): PinRecord => ({
  id: r.id,
  clientKeyId: r.client_key_id,
  scope: r.scope,
  session: r.session_id,
  source: (SESSION_SOURCES as readonly string[]).includes(r.source) ? (r.source as SessionSource) : 'x-session-id',
  connectionId: r.connection_id,
  targetKey: r.target_key,
  targetIndex: r.target_index,
  model: r.model,
  createdAt: r.created_at,
  pinnedAt: r.pinned_at,
  lastUsedAt: r.last_used_at,
});

export class SessionPinsRepo {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      all: db.prepare('SELECT * FROM session_pins ORDER BY last_used_at'),
      upsert: db.prepare(
        `INSERT INTO session_pins (id, client_key_id, scope, session_id, source, connection_id, target_key, target_index,
           model, created_at, pinned_at, last_used_at)
         VALUES (@id, @clientKeyId, @scope, @session, @source, @connectionId, @targetKey, @targetIndex, @model, @createdAt,
           @pinnedAt, @lastUsedAt)
         ON CONFLICT(client_key_id, scope, session_id) DO UPDATE SET id = excluded.id, source = excluded.source,
           connection_id = excluded.connection_id, target_key = excluded.target_key, target_index = excluded.target_index,
           model = excluded.model, pinned_at = excluded.pinned_at, last_used_at = excluded.last_used_at`,
      ),
      touch: db.prepare('UPDATE session_pins SET last_used_at = ?, model = ? WHERE id = ?'),
      delete: db.prepare('DELETE FROM session_pins WHERE id = ?'),
      expire: db.prepare('DELETE FROM session_pins WHERE last_used_at <= ?'),
    };
  }

  all(): PinRecord[] {
    return (this.stmts.all.all() as Row[]).map(fromRow);
  }

  save(p: PinRecord): void {
    this.stmts.upsert.run({
      id: p.id,
      clientKeyId: p.clientKeyId,
      scope: p.scope,
      session: p.session,
      source: p.source,
      connectionId: p.connectionId,
      targetKey: p.targetKey,
      targetIndex: p.targetIndex,
      model: p.model,
      createdAt: p.createdAt,
      pinnedAt: p.pinnedAt,
      lastUsedAt: p.lastUsedAt,
    });
  }

  /** The sliding part of a pin: when it was last used, and the model that served then. */
  touch(id: string, lastUsedAt: number, model: string | null): void {
    this.stmts.touch.run(lastUsedAt, model, id);
  }

  delete(id: string): void {
    this.stmts.delete.run(id);
  }

  /** Deletes the pins last used at or before `cutoff`. */
  expire(cutoff: number): number {
    return this.stmts.expire.run(cutoff).changes;
  }
}
