// The bell in the sidebar's header with the unread count, and the feed panel it opens: items
// newest first with their severity, time and how often they happened ("×3" when repeats were
// folded into one), each a link to the page that explains it (following it marks it read), and
// "Mark all read". Both shells show it; the desktop also raises a native notification per new item.
import { useEffect, useRef, useState } from 'react';
import { NOTIFICATION_KIND_LABELS, NOTIFICATION_KINDS, type NotificationKind, type NotificationView } from '../../shared/notifications';
import { useDashboard, useSel } from '../hooks/dashboardContext';
import { useServerNow } from '../hooks/useNow';
import { formatAgo } from '../lib/format';
import { Badge, type Tone } from './ui';
import { icons } from './icons';
import './notifications.css';

const SEVERITY: Record<NotificationView['severity'], { tone: Tone; word: string }> = {
  error: { tone: 'danger', word: 'Needs you' },
  warning: { tone: 'warn', word: 'Warning' },
  info: { tone: 'info', word: 'Info' },
};

function Item({ n, now, onOpen }: { n: NotificationView; now: number; onOpen: (n: NotificationView) => void }) {
  const s = SEVERITY[n.severity];
  return (
    <li className={`notification${n.read ? '' : ' unread'}`} data-testid="notification" data-kind={n.kind} data-read={n.read ? 'true' : 'false'}>
      <a href={n.link} className="notification-link" onClick={() => onOpen(n)}>
        <span className="notification-head">
          <Badge tone={s.tone}>{s.word}</Badge>
          <strong className="notification-title">{n.title}</strong>
          {n.count > 1 && (
            <span className="notification-count" title={`Happened ${n.count} times`} data-testid="notification-count">
              ×{n.count}
            </span>
          )}
        </span>
        <span className="notification-body">{n.body}</span>
        <span className="notification-time muted" title={new Date(n.lastAt).toLocaleString()}>
          {n.count > 1 ? `last ${formatAgo(n.lastAt, now)}, first ${formatAgo(n.at, now)}` : formatAgo(n.at, now)}
        </span>
      </a>
    </li>
  );
}

export function NotificationBell() {
  const d = useDashboard();
  const feed = useSel(d.notifications, (s) => s.feed);
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDivElement>(null);
  const now = useServerNow(open ? 10_000 : 60_000);
  const unread = feed?.unread ?? 0;

  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setOpen(false);
    document.addEventListener('mousedown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);

  const follow = (n: NotificationView) => {
    if (!n.read) void d.notifications.getState().markRead([n.id]);
    setOpen(false);
  };
  const label = unread ? `Notifications, ${unread} unread` : 'Notifications';
  return (
    <div className="notification-bell" ref={ref}>
      <button
        type="button"
        className="bell-button"
        aria-label={label}
        title={label}
        aria-expanded={open}
        aria-haspopup="dialog"
        data-testid="notification-bell"
        onClick={() => setOpen(!open)}
      >
        {icons.bell}
        {unread > 0 && (
          <span className="bell-count" data-testid="notification-unread">
            {unread > 99 ? '99+' : unread}
          </span>
        )}
      </button>
      {open && (
        <div className="notification-panel" role="dialog" aria-label="Notifications" data-testid="notification-panel">
          <div className="notification-panel-head">
            <strong>Notifications</strong>
            <button type="button" className="btn btn-sm btn-ghost" disabled={unread === 0} onClick={() => void d.notifications.getState().markAllRead()}>
              Mark all read
            </button>
          </div>
          {feed === null ? (
            <p className="muted notification-empty">Loading…</p>
          ) : feed.items.length === 0 ? (
            <p className="muted notification-empty">Nothing needs you. Rejected keys, expired sign-ins, paused providers and the like show up here.</p>
          ) : (
            <ul className="notification-list">
              {feed.items.map((n) => (
                <Item key={n.id} n={n} now={now} onOpen={follow} />
              ))}
            </ul>
          )}
          <a className="notification-settings" href="#/settings/notifications" onClick={() => setOpen(false)}>
            Choose which notifications to get
          </a>
        </div>
      )}
    </div>
  );
}

/** The setting's key whose editor is the list of kinds below (SettingRow). */
export const MUTED_SETTING = 'notifications.muted';

/** Settings: one switch per kind, in plain words; a change saves at once. */
export function NotificationMutes({ value, disabled, onChange }: { value: unknown; disabled: boolean; onChange: (muted: NotificationKind[]) => void }) {
  const saved = Array.isArray(value) ? (value as NotificationKind[]) : [];
  // The box changes at once; the saved value replaces it when the engine confirms (or refuses).
  const [pending, setPending] = useState<{ from: unknown; muted: NotificationKind[] } | null>(null);
  const muted = new Set(pending && pending.from === value ? pending.muted : saved);
  return (
    <fieldset className="mute-list" data-testid="notification-mutes" disabled={disabled}>
      <legend className="hint">Tick a kind to mute it.</legend>
      {NOTIFICATION_KINDS.map((k) => (
        <label key={k}>
          <input
            type="checkbox"
            checked={muted.has(k)}
            data-kind={k}
            onChange={(e) => {
              const next = NOTIFICATION_KINDS.filter((x) => (x === k ? e.target.checked : muted.has(x)));
              setPending({ from: value, muted: next });
              onChange(next);
            }}
          />
          {NOTIFICATION_KIND_LABELS[k]}
        </label>
      ))}
    </fieldset>
  );
}
