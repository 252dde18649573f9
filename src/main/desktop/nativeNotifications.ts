// Native desktop notifications for the feed (issue 23): one per new item, never for a repeat
// folded into an item already shown; clicking one brings the window forward on the item's page.
// The Electron Notification class is passed in, so everything here runs under Node in the tests.
import type { NotificationView } from '../../shared/notifications';

export interface NativeNotice {
  title: string;
  body: string;
  /** The dashboard route to show on click (always a `#/...` hash). */
  link: string;
}

/** What to show for one raise: null for a folded repeat, or a link that is not a dashboard route. */
export function nativeNoticeFor(r: { item: NotificationView; folded: boolean }): NativeNotice | null {
  if (r.folded) return null;
  const link = /^#\/[A-Za-z]/.test(r.item.link) ? r.item.link : '#/connections';
  return { title: r.item.title, body: r.item.body, link };
}

/** The part of Electron's Notification this needs. */
export interface NotificationLike {
  on(event: 'click', fn: () => void): unknown;
  show(): void;
}
export interface NotificationClass {
  new (o: { title: string; body: string; silent?: boolean }): NotificationLike;
  isSupported(): boolean;
}

export interface NativeNotificationDeps {
  Notification: NotificationClass;
  onRaised: (fn: (r: { item: NotificationView; folded: boolean }) => void) => () => void;
  /** Shows and focuses the window on this route. */
  focusOn: (link: string) => void;
}

/** Subscribes; returns the unsubscribe. Shown notifications are kept referenced until clicked (else GC drops their click). */
export function wireNativeNotifications(d: NativeNotificationDeps): () => void {
  const alive = new Set<NotificationLike>();
  return d.onRaised((r) => {
    const notice = nativeNoticeFor(r);
    if (!notice || !d.Notification.isSupported()) return;
    const n = new d.Notification({ title: notice.title, body: notice.body });
    alive.add(n);
    if (alive.size > 20) alive.delete(alive.values().next().value!);
    n.on('click', () => {
      alive.delete(n);
      d.focusOn(notice.link);
    });
    n.show();
  });
}
