// The sidebar: navigation with live counts (what is out of routing, breakers not closed), and
// the footer with engine health, the proxy address and the state of the live link. Below 1,100 px
// it starts collapsed to a rail of icons; its toggle opens or closes it at any width.
import { useState, useSyncExternalStore, type ReactNode } from 'react';
import { useDashboard, useSel } from '../hooks/dashboardContext';
import { useServerNow } from '../hooks/useNow';
import { hrefOf, type PageId } from '../hooks/useRoute';
import { breakerStateAt, healthNow, heldTargets } from '../lib/connectionState';
import { icons } from './icons';
import { NotificationBell } from './NotificationFeed';
import { TEAM_STATE_WORDS } from '../../shared/team';

const NAV: { id: PageId; label: string; section?: string }[] = [
  { id: 'overview', label: 'Overview' },
  { id: 'agent', label: 'Connect your agent', section: 'Setup' },
  { id: 'connections', label: 'Connections' },
  { id: 'combos', label: 'Combos' },
  { id: 'cooldowns', label: 'Cooldown manager', section: 'Resilience' },
  { id: 'breakers', label: 'Provider breakers' },
  { id: 'errorRules', label: 'Error rules' },
  { id: 'settings', label: 'Resilience settings' },
  { id: 'prices', label: 'Prices' },
  { id: 'logs', label: 'Request log', section: 'Traffic' },
  { id: 'sessions', label: 'Sessions' },
  { id: 'leases', label: 'Leases' },
  { id: 'team', label: 'Team', section: 'App' },
  { id: 'app', label: 'App & token' },
];

/** Team mode's link, when it is on: a line in the footer (the Team link carries a badge while it is degraded). */
function TeamLine({ state, reason }: { state: string; reason: string | null }) {
  const tone = state === 'connected' ? 'ok' : state === 'degraded' ? 'degraded' : 'unknown';
  return (
    <div className="status-line" data-testid="team-badge" data-state={state} title={reason ?? 'The link to the team'}>
      <span className={`health-dot ${tone}`} aria-hidden="true" />
      <span>
        Team <strong>{TEAM_STATE_WORDS[state as keyof typeof TEAM_STATE_WORDS]?.toLowerCase() ?? state}</strong>
      </span>
    </div>
  );
}

function LinkIndicator() {
  const d = useDashboard();
  const link = useSel(d.app, (s) => s.link);
  const ever = useSel(d.app, (s) => s.everConnected);
  const [tone, text] =
    link === 'open'
      ? ['ok', 'Live']
      : link === 'closed'
        ? ['warn', ever ? 'Reconnecting…' : 'Connecting…']
        : link === 'unauthorized'
          ? ['danger', 'Token refused']
          : ['neutral', 'Connecting…'];
  return (
    <div className={`link link-${tone}`} data-testid="link-status" title="Live updates from the engine">
      <span className="link-dot" aria-hidden="true" />
      {text}
    </div>
  );
}

/** Below this width the sidebar starts collapsed. */
const NARROW = '(max-width: 1100px)';

function useNarrow(): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const m = window.matchMedia(NARROW);
      m.addEventListener('change', onChange);
      return () => m.removeEventListener('change', onChange);
    },
    () => window.matchMedia(NARROW).matches,
  );
}

export function Sidebar({ page }: { page: PageId | null }) {
  const d = useDashboard();
  const narrow = useNarrow();
  /** The operator's choice with the toggle; until then the width decides. */
  const [chosen, setChosen] = useState<boolean | null>(null);
  const collapsed = chosen ?? narrow;
  const now = useServerNow();
  const health = useSel(d.app, (s) => s.health);
  const info = useSel(d.app, (s) => s.info);
  const breakers = useSel(d.resilience, (s) => s.breakers);
  // The engine's health model: the same counts as the Connections page and the Cooldown manager.
  const model = healthNow(useSel(d.resilience, (s) => s.health), now);
  const held = heldTargets(model, now).length;
  const attention = model?.counts.needsAttention ?? 0;
  // The engine is live only while the live link is open; an old answer is not a live engine.
  const link = useSel(d.app, (s) => s.link);
  const ever = useSel(d.app, (s) => s.everConnected);
  const live = link === 'open';
  const engineWord = live ? (health ? health.status : '…') : link === 'unauthorized' ? 'token refused' : ever ? 'unreachable' : '…';
  const tripped = breakers.filter((b) => breakerStateAt(b, now) !== 'CLOSED').length;
  const teamState = useSel(d.team, (s) => (s.view?.enabled ? s.view.status.state : null));
  const teamReason = useSel(d.team, (s) => s.view?.status.reason ?? null);
  const counts: Partial<Record<PageId, ReactNode>> = {
    cooldowns: held ? <span className={`nav-count ${attention ? 'danger' : 'warn'}`}>{held}</span> : null,
    breakers: tripped ? <span className="nav-count danger">{tripped}</span> : null,
    team:
      teamState === 'degraded' ? (
        <span className="nav-count warn" title="The link to the team is degraded">
          !
        </span>
      ) : null,
  };
  const proxyUrl = health?.proxy.url ?? info?.proxyUrl ?? null;
  return (
    <nav className={`sidebar${collapsed ? ' collapsed' : ''}`} aria-label="Main" data-testid="sidebar">
      <div className="brand">
        <button
          type="button"
          className="sidebar-toggle"
          aria-expanded={!collapsed}
          aria-label={collapsed ? 'Expand the sidebar' : 'Collapse the sidebar'}
          title={collapsed ? 'Expand the sidebar' : 'Collapse the sidebar'}
          data-testid="sidebar-toggle"
          onClick={() => setChosen(!collapsed)}
        >
          <span aria-hidden="true">{collapsed ? '»' : '«'}</span>
        </button>
        <span className="brand-mark" aria-hidden="true">
          ⇄
        </span>
        <span className="brand-name">Switchyard</span>
        {info && <span className="brand-version">v{info.version}</span>}
        <NotificationBell />
      </div>
      <ul className="nav">
        {NAV.map((n) => (
          <li key={n.id}>
            {n.section && <div className="nav-section">{n.section}</div>}
            <a
              href={hrefOf(n.id)}
              title={collapsed ? n.label : undefined}
              className={`nav-link${page === n.id ? ' active' : ''}`}
              aria-current={page === n.id ? 'page' : undefined}
            >
              {icons[n.id]}
              <span className="nav-label">{n.label}</span>
              {counts[n.id]}
            </a>
          </li>
        ))}
      </ul>
      <div className="sidebar-footer">
        <div className="status-line">
          <span className={`health-dot ${live ? (health?.status ?? 'unknown') : ever ? 'down' : 'unknown'}`} aria-hidden="true" />
          <span>
            Engine <strong data-testid="health-status">{engineWord}</strong>
          </span>
        </div>
        {model && (
          <div className={`status-sub${live ? '' : ' muted'}`} data-testid="sidebar-counts">
            {!live && 'Last known: '}
            {model.counts.healthy} healthy · {model.counts.limited} limited · {model.counts.out} out · {model.counts.needsAttention} need attention
          </div>
        )}
        <div className="status-line proxy-line">
          <span className="muted">Proxy</span>
          <code data-testid="proxy-url" title={health?.proxy.error ?? undefined}>
            {proxyUrl ?? (health?.proxy.error ? 'not listening' : '…')}
          </code>
        </div>
        {health?.proxy.error && <div className="status-error">{health.proxy.error}</div>}
        {teamState && <TeamLine state={teamState} reason={teamReason} />}
        <LinkIndicator />
      </div>
    </nav>
  );
}
