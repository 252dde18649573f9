// notifications and state_spans (migration 13): the notification feed and the per-connection
// state timeline, each bounded by the engine (notifications/).
import type { NotificationKind, NotificationView } from '../../../shared/notifications';
import type { StateSpanKind } from '../../../shared/usage';
import type { Db } from './db';

export interface StoredNotification extends NotificationView {
  /** What the notification is about (a connection id, a provider, a model); folding key with the kind. */
  subject: string;
}

interface NotificationRow {
  id: string;
  kind: string;
  subject: string;
  at: number;
  last_at: number;
  count: number;
  severity: string;
  title: string;
  body: string;
  link: string;
  read: number;
}

const fromRow = (r: NotificationRow): StoredNotification => ({
  id: r.id,
  kind: r.kind as NotificationKind,
  subject: r.subject,
  at: r.at,
  lastAt: r.last_at,
  count: r.count,
  severity: r.severity === 'error' || r.severity === 'warning' ? r.severity : 'info',
  title: r.title,
  body: r.body,
  link: r.link,
  read: r.read === 1,
});

export class NotificationsRepo {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      newest: db.prepare('SELECT * FROM notifications ORDER BY last_at DESC, at DESC LIMIT ?'),
      upsert: db.prepare(
        `INSERT INTO notifications (id, kind, subject, at, last_at, count, severity, title, body, link, read)
         VALUES (@id, @kind, @subject, @at, @lastAt, @count, @severity, @title, @body, @link, @read)
         ON CONFLICT(id) DO UPDATE SET last_at = excluded.last_at, count = excluded.count, severity = excluded.severity,
           title = excluded.title, body = excluded.body, link = excluded.link, read = excluded.read`,
      ),
      markRead: db.prepare('UPDATE notifications SET read = 1 WHERE id = ?'),
      markAllRead: db.prepare('UPDATE notifications SET read = 1 WHERE read = 0'),
      prune: db.prepare('DELETE FROM notifications WHERE id NOT IN (SELECT id FROM notifications ORDER BY last_at DESC, at DESC LIMIT ?)'),
    };
  }

  /** The newest `limit` items, newest first. */
  newest(limit: number): StoredNotification[] {
    return (this.stmts.newest.all(limit) as NotificationRow[]).map(fromRow);
  }

  save(n: StoredNotification): void {
    this.stmts.upsert.run({ ...n, read: n.read ? 1 : 0 });
  }

  markRead(ids: readonly string[] | 'all'): void {
    if (ids === 'all') this.stmts.markAllRead.run();
    else this.db.transaction(() => ids.forEach((id) => this.stmts.markRead.run(id)))();
  }

  /** Keeps the newest `keep` items. */
  prune(keep: number): void {
    this.stmts.prune.run(keep);
  }
}

export interface StoredSpan {
  id: number;
  connectionId: string;
  /** The span's identity among a connection's open spans (kind, plus the model for a lockout). */
  key: string;
  kind: StateSpanKind;
  reason: string;
  startedAt: number;
  endedAt: number | null;
  /** When it was due to lift by itself; a span still open past it ended there. */
  untilHint: number | null;
}

interface SpanRow {
  id: number;
  connection_id: string;
  span_key: string;
  kind: string;
  reason: string;
  started_at: number;
  ended_at: number | null;
  until_hint: number | null;
}

const spanFromRow = (r: SpanRow): StoredSpan => ({
  id: r.id,
  connectionId: r.connection_id,
  key: r.span_key,
  kind: r.kind as StateSpanKind,
  reason: r.reason,
  startedAt: r.started_at,
  endedAt: r.ended_at,
  untilHint: r.until_hint,
});

export class StateSpansRepo {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      open: db.prepare('SELECT * FROM state_spans WHERE ended_at IS NULL'),
      insert: db.prepare(
        'INSERT INTO state_spans (connection_id, span_key, kind, reason, started_at, ended_at, until_hint) VALUES (?, ?, ?, ?, ?, NULL, ?)',
      ),
      hint: db.prepare('UPDATE state_spans SET until_hint = ?, reason = ? WHERE id = ?'),
      end: db.prepare('UPDATE state_spans SET ended_at = ? WHERE id = ?'),
      range: db.prepare(
        'SELECT * FROM state_spans WHERE started_at < ? AND (ended_at IS NULL OR ended_at >= ?) ORDER BY started_at, id',
      ),
      prune: db.prepare('DELETE FROM state_spans WHERE ended_at IS NOT NULL AND ended_at < ?'),
    };
  }

  open(): StoredSpan[] {
    return (this.stmts.open.all() as SpanRow[]).map(spanFromRow);
  }

  insert(s: Omit<StoredSpan, 'id' | 'endedAt'>): StoredSpan {
    const r = this.stmts.insert.run(s.connectionId, s.key, s.kind, s.reason, s.startedAt, s.untilHint);
    return { ...s, id: Number(r.lastInsertRowid), endedAt: null };
  }

  updateHint(id: number, untilHint: number | null, reason: string): void {
    this.stmts.hint.run(untilHint, reason, id);
  }

  end(id: number, at: number): void {
    this.stmts.end.run(at, id);
  }

  /** Spans overlapping [from, to), oldest first. */
  range(from: number, to: number): StoredSpan[] {
    return (this.stmts.range.all(to, from) as SpanRow[]).map(spanFromRow);
  }

  /** Deletes spans that ended before `before`. */
  prune(before: number): void {
    this.stmts.prune.run(before);
  }
}
