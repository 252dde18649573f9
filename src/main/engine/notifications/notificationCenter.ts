// The notification feed: raises an item for something that needs a person, folds a repeat of the
// same kind and subject within the folding window into the item already there (count, lastAt)
// instead of a new one, keeps a bounded feed in SQLite (it survives a restart), and drops muted
// kinds at the door. Time comes from the injected clock.
import { randomUUID } from 'node:crypto';
import type { NotificationKind, NotificationView, NotificationsFeed } from '../../../shared/notifications';
import type { Clock } from '../clock';
import type { NotificationsRepo, StoredNotification } from '../store/notificationsRepo';

/** A repeat of the same (kind, subject) within this long of its last occurrence folds into it. */
export const FOLD_WINDOW_MS = 10 * 60_000;
/** The feed keeps this many items (the newest by their last occurrence). */
export const FEED_MAX_ITEMS = 200;

export interface RaiseInput {
  kind: NotificationKind;
  /** What it is about (a connection id, a provider, a model or combo): with the kind, the folding key. */
  subject: string;
  severity: NotificationView['severity'];
  title: string;
  body: string;
  link: string;
}

/** What a raise did: a new item, or a repeat folded into an existing one. */
export interface RaiseResult {
  item: NotificationView;
  folded: boolean;
}

export interface NotificationCenterOptions {
  foldWindowMs?: number;
  maxItems?: number;
}

const view = ({ subject: _subject, ...v }: StoredNotification): NotificationView => ({ ...v });

export class NotificationCenter {
  /** Newest first (by lastAt). */
  private items: StoredNotification[];
  private readonly raisedListeners = new Set<(r: RaiseResult) => void>();
  private readonly changeListeners = new Set<() => void>();
  private readonly foldWindowMs: number;
  private readonly maxItems: number;

  constructor(
    private readonly repo: NotificationsRepo,
    private readonly clock: Clock,
    private readonly muted: () => readonly NotificationKind[],
    o: NotificationCenterOptions = {},
  ) {
    this.foldWindowMs = o.foldWindowMs ?? FOLD_WINDOW_MS;
    this.maxItems = o.maxItems ?? FEED_MAX_ITEMS;
    this.items = repo.newest(this.maxItems);
  }

  /** Raises (or folds) a notification; null when its kind is muted. */
  raise(input: RaiseInput): RaiseResult | null {
    if (this.muted().includes(input.kind)) return null;
    const now = this.clock.now();
    const i = this.items.findIndex((n) => n.kind === input.kind && n.subject === input.subject && now - n.lastAt < this.foldWindowMs);
    let result: RaiseResult;
    if (i >= 0) {
      // A repeat: the same item, counted, with the latest words and link; its read state is kept,
      // so a storm never brings the bell back by itself.
      const cur = this.items[i]!;
      const next: StoredNotification = { ...cur, lastAt: now, count: cur.count + 1, severity: input.severity, title: input.title, body: input.body, link: input.link };
      this.items.splice(i, 1);
      this.items.unshift(next);
      this.repo.save(next);
      result = { item: view(next), folded: true };
    } else {
      const next: StoredNotification = { id: randomUUID(), ...input, at: now, lastAt: now, count: 1, read: false };
      this.items.unshift(next);
      this.repo.save(next);
      if (this.items.length > this.maxItems) {
        this.items.length = this.maxItems;
        this.repo.prune(this.maxItems);
      }
      result = { item: view(next), folded: false };
    }
    for (const fn of [...this.raisedListeners]) {
      try {
        fn(result);
      } catch {
        // a failing listener (a native notification) never breaks a raise
      }
    }
    this.changed();
    return result;
  }

  feed(): NotificationsFeed {
    return {
      items: this.items.map(view),
      unread: this.items.reduce((n, x) => n + (x.read ? 0 : 1), 0),
      muted: [...this.muted()],
    };
  }

  /** Marks these items (or all) read; answers how many changed. */
  markRead(ids: readonly string[] | 'all'): number {
    const want = ids === 'all' ? null : new Set(ids);
    const hit = this.items.filter((n) => !n.read && (want === null || want.has(n.id)));
    if (hit.length === 0) return 0;
    for (const n of hit) n.read = true;
    this.repo.markRead(ids === 'all' ? 'all' : hit.map((n) => n.id));
    this.changed();
    return hit.length;
  }

  /** Every raise, with whether it folded (the desktop shows a native notification for new ones only). */
  onRaised(fn: (r: RaiseResult) => void): () => void {
    this.raisedListeners.add(fn);
    return () => this.raisedListeners.delete(fn);
  }

  /** Any change of the feed (a raise, a fold, a read). */
  onChange(fn: () => void): () => void {
    this.changeListeners.add(fn);
    return () => this.changeListeners.delete(fn);
  }

  /** The mute list changed: the feed says so. */
  mutedChanged(): void {
    this.changed();
  }

  private changed(): void {
    for (const fn of [...this.changeListeners]) {
      try {
        fn();
      } catch {
        // a failing listener never breaks a raise
      }
    }
  }
}
