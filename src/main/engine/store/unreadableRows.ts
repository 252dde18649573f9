// Stored rows that could not be read (JSON that does not parse, or that is not the shape, depth or
// size the engine can serve). The repository that meets one skips it, so a list is never broken by
// one bad row, and reports it here; health lists them and a warning names table and id (never the
// row's content, which may hold anything). The row itself stays in the database untouched until
// the engine writes that key again (engine-owned state) or the user deletes it (a connection).
import type { UnreadableRecord } from '../../../shared/model';
import type { Logger } from '../logger';

/** At most this many are listed; more are counted in the log only. */
const MAX_LISTED = 100;

export class UnreadableRows {
  private readonly rows = new Map<string, UnreadableRecord>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly log: Logger | null = null) {}

  report(table: string, id: string, reason: string): void {
    const key = `${table}\u0000${id}`;
    const known = this.rows.get(key);
    if (known && known.reason === reason) return;
    this.log?.warn('store.unreadableRow', { table, id, reason });
    if (!known && this.rows.size >= MAX_LISTED) return;
    this.rows.set(key, { table, id, reason });
    this.notify();
  }

  /** The row was rewritten or deleted: it no longer needs attention. */
  resolve(table: string, id: string): void {
    if (this.rows.delete(`${table}\u0000${id}`)) this.notify();
  }

  has(table: string, id: string): boolean {
    return this.rows.has(`${table}\u0000${id}`);
  }

  list(): UnreadableRecord[] {
    return [...this.rows.values()].map((r) => ({ ...r }));
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private notify(): void {
    for (const fn of [...this.listeners]) fn();
  }
}

/** Parses a stored JSON column; the reason names the column, never its content. */
export function readJsonColumn(column: string, text: string | null): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (text === null) return { ok: false, reason: `${column} is empty` };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: `${column} is not valid JSON` };
  }
}
