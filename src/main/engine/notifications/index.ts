// Notifications and the per-connection state timeline (issue 23), composed once by the engine:
// the feed (notificationCenter), the timeline recorder (stateTimeline), the subscriptions that
// feed them (watch), the management handlers and the coalesced `notifications` push.
import type { Handlers } from '../../../shared/contract';
import type { NotificationKind } from '../../../shared/notifications';
import type { ClaudeAccounts } from '../claude/claudeAccounts';
import type { Clock } from '../clock';
import type { ConnectionRegistry } from '../connections/registry';
import { CoalescedTopic, type EventBus } from '../events';
import type { ResilienceManagement } from '../resilience/port';
import type { SettingsService } from '../settings/settingsService';
import type { Db } from '../store/db';
import { NotificationsRepo, StateSpansRepo } from '../store/notificationsRepo';
import { NotificationCenter, type NotificationCenterOptions } from './notificationCenter';
import { StateTimeline } from './stateTimeline';
import { watchEngine } from './watch';
import { proxyBindNotice } from './words';

export type NotificationHandlers = Pick<Handlers, 'listNotifications' | 'markNotificationsRead' | 'getStateTimeline'>;

/** How often the feed is pushed at most (a burst of raises is one push). */
const PUSH_MS = 250;

export interface NotificationsDeps {
  db: Db;
  clock: Clock;
  bus: EventBus;
  settings: Pick<SettingsService, 'values' | 'onChange'>;
  registry: ConnectionRegistry;
  resilience: Pick<ResilienceManagement, 'breakers' | 'lockouts' | 'onChange'>;
  claude?: Pick<ClaudeAccounts, 'lane' | 'reset'>;
  options?: NotificationCenterOptions;
}

export function createNotifications(d: NotificationsDeps) {
  const muted = (): readonly NotificationKind[] => d.settings.values['notifications.muted'];
  const center = new NotificationCenter(new NotificationsRepo(d.db), d.clock, muted, d.options);
  const timeline = new StateTimeline(new StateSpansRepo(d.db), d.clock);
  const topic = new CoalescedTopic(d.bus, d.clock, 'notifications', () => center.feed(), PUSH_MS);
  const offs = [
    center.onChange(() => topic.touch()),
    d.settings.onChange((changed) => changed.includes('notifications.muted') && center.mutedChanged()),
    watchEngine({ clock: d.clock, bus: d.bus, registry: d.registry, resilience: d.resilience, claude: d.claude, center, timeline }),
  ];

  const handlers: NotificationHandlers = {
    listNotifications: async () => center.feed(),
    markNotificationsRead: async (input) => ({ marked: center.markRead('all' in input ? 'all' : input.ids), unread: center.feed().unread }),
    getStateTimeline: async ({ from, to }) => timeline.view({ from, to }, (id) => d.registry.get(id)?.name ?? null),
  };

  return {
    center,
    timeline,
    handlers,
    /** The proxy could not bind its port (at start or when the port setting changed). */
    proxyBindFailed: (port: number, why: string) => center.raise(proxyBindNotice(port, why)),
    close(): void {
      offs.forEach((o) => o());
      topic.dispose();
    },
  };
}

export type Notifications = ReturnType<typeof createNotifications>;
