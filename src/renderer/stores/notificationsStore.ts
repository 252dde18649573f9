// The notification feed for the bell in the sidebar and its panel: pushed by the engine when an
// item is raised, folded or read, read once on start and after the live link comes back. Marking
// read updates the feed at once and tells the engine; a refused mark reads the feed again.
import { createStore } from 'zustand/vanilla';
import type { NotificationsFeed } from '../../shared/notifications';
import { reportError, reportLoadError, Revision, type StoreContext } from './context';

export interface NotificationsState {
  feed: NotificationsFeed | null;
  apply(feed: NotificationsFeed): void;
  load(): Promise<void>;
  markRead(ids: readonly string[]): Promise<void>;
  markAllRead(): Promise<void>;
}

const readLocally = (feed: NotificationsFeed, ids: ReadonlySet<string> | null): NotificationsFeed => {
  const items = feed.items.map((n) => (!n.read && (ids === null || ids.has(n.id)) ? { ...n, read: true } : n));
  return { ...feed, items, unread: items.filter((n) => !n.read).length };
};

export function createNotificationsStore(ctx: StoreContext) {
  const rev = new Revision();
  return createStore<NotificationsState>()((set, get) => {
    const mark = async (ids: readonly string[] | null) => {
      const feed = get().feed;
      if (!feed) return;
      const want = ids === null ? null : new Set(ids);
      if (!feed.items.some((n) => !n.read && (want === null || want.has(n.id)))) return;
      rev.bump();
      set({ feed: readLocally(feed, want) });
      try {
        await (ids === null ? ctx.bridge.markNotificationsRead({ all: true }) : ctx.bridge.markNotificationsRead({ ids: [...ids] }));
      } catch (err) {
        reportError(ctx, err, 'Could not mark the notifications read');
        await get().load();
      }
    };
    return {
      feed: null,
      apply(feed) {
        rev.bump();
        set({ feed });
      },
      async load() {
        try {
          await rev.guard(
            () => ctx.bridge.listNotifications(),
            (feed) => set({ feed }),
          );
        } catch (err) {
          reportLoadError(ctx, 'notifications', err, 'Could not load notifications');
        }
      },
      markRead: (ids) => mark(ids),
      markAllRead: () => mark(null),
    };
  });
}
