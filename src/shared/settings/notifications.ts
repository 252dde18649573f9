// Notifications (issue 23): which kinds are muted. A muted kind is not raised at all: no feed item,
// no native notification, nothing stored; items raised before the mute stay in the feed.
import { z } from 'zod';
import { NOTIFICATION_KINDS, type NotificationKind } from '../notifications';
import { json } from './define';

export const notificationSettings = {
  'notifications.muted': json<NotificationKind[]>({
    group: 'notifications',
    label: 'Muted notifications',
    description: 'Kinds of notification Switchyard does not raise: nothing appears in the feed or on the desktop for them. Ones already raised stay.',
    default: [],
    schema: z
      .array(z.enum(NOTIFICATION_KINDS))
      .max(NOTIFICATION_KINDS.length)
      .refine((a) => new Set(a).size === a.length, 'lists a kind twice'),
    shape: `list of kinds: ${NOTIFICATION_KINDS.join(', ')}`,
  }),
} as const;
