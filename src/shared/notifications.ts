// Notifications (issue 23): what needs a person, raised by the engine, shown as an in-dashboard
// feed in both shells and as native notifications on the desktop. Plain data, no I/O.

export const NOTIFICATION_KINDS = [
  /** A connection turned terminal: a rejected key, an expired or revoked OAuth account. */
  'connection-terminal',
  /** Every target of a model or combo was excluded when a request asked for it. */
  'targets-exhausted',
  /** A provider breaker opened. */
  'breaker-opened',
  /** A Claude account entered or left its low-priority lane. */
  'claude-lane',
  /** A Claude account used its limit reset. */
  'claude-limit-reset',
  /** The proxy could not bind its port. */
  'proxy-bind-failed',
  /** Team mode: the link to Redis degraded, or came back. */
  'team-link',
  /** Team mode: the team's published configuration could not be applied here. */
  'team-config',
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** What a person reads for each kind, in settings' per-kind mute list. */
export const NOTIFICATION_KIND_LABELS: Record<NotificationKind, string> = {
  'connection-terminal': 'A connection stops working (rejected key, expired sign-in)',
  'targets-exhausted': 'Nothing can serve a model or combo',
  'breaker-opened': 'A provider is taken out after repeated failures',
  'claude-lane': 'A Claude account enters or leaves its slow lane',
  'claude-limit-reset': 'A Claude account uses its limit reset',
  'proxy-bind-failed': 'The proxy cannot open its port',
  'team-link': 'The link to the team is lost or comes back',
  'team-config': "The team's configuration cannot be applied here",
};

export interface NotificationView {
  id: string;
  kind: NotificationKind;
  /** When it was first raised; `lastAt` when a repeat was folded into it. */
  at: number;
  lastAt: number;
  /** Repeats folded into this one (1 when raised once). */
  count: number;
  severity: 'error' | 'warning' | 'info';
  title: string;
  body: string;
  /** The dashboard route that explains it, as a hash (`#/connections`, `#/logs?id=...`). */
  link: string;
  read: boolean;
}

export interface NotificationsFeed {
  items: NotificationView[];
  unread: number;
  muted: NotificationKind[];
}
