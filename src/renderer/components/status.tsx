// Status badges shared by the pages: a connection's live state, a breaker state, a setting's
// source, an HTTP status.
import type { ConnectionHealthItem, HealthCounts } from '../../shared/health';
import type { BreakerState } from '../../shared/model';
import { isTerminalStatus } from '../../shared/model';
import type { SettingSource } from '../../shared/settings';
import { healthTone, type LiveState } from '../lib/connectionState';
import { formatRemaining } from '../lib/format';
import { describeErrorType, TERMINAL_LABELS } from '../lib/reasons';
import { Badge } from './ui';

export function LiveStateBadge({ state }: { state: LiveState }) {
  switch (state.kind) {
    case 'healthy':
      return (
        <Badge tone="ok" dot>
          Healthy
        </Badge>
      );
    case 'disabled':
      return <Badge tone="neutral">Disabled</Badge>;
    case 'cooling':
      return (
        <Badge tone="warn" dot title={`Cooling down until ${new Date(state.until).toLocaleTimeString()}`}>
          Cooling down · <span className="tabular">{formatRemaining(state.remainingMs)}</span>
        </Badge>
      );
    case 'terminal':
      return (
        <Badge tone="danger" dot>
          {TERMINAL_LABELS[state.status]}
        </Badge>
      );
  }
}

/** The badge text of a health item at `now`: its label, the terminal state's name, and the countdown when it lifts by time. */
export function healthBadgeText(item: ConnectionHealthItem, now: number): string {
  const terminal = item.state === 'terminal' ? item.conditions.find((c) => c.kind === 'terminal')?.cause : null;
  const label = terminal && isTerminalStatus(terminal) ? TERMINAL_LABELS[terminal] : item.label;
  return item.liftsAt !== null && item.liftsAt > now && item.state !== 'limited' ? `${label} · ${formatRemaining(item.liftsAt - now)}` : label;
}

/** A connection's state from the health model (the same on every page). */
export function HealthBadge({ item, now }: { item: ConnectionHealthItem; now: number }) {
  return (
    <Badge
      tone={healthTone(item.state)}
      dot={item.state !== 'disabled'}
      title={item.liftsAt !== null ? `Back in full at ${new Date(item.liftsAt).toLocaleTimeString()}` : undefined}
    >
      <span data-health-state={item.state}>{healthBadgeText(item, now)}</span>
    </Badge>
  );
}

/** The engine's connection counts, the same on the Connections page, the Cooldown manager and the sidebar. */
export function HealthCountBadges({ counts }: { counts: HealthCounts }) {
  return (
    <>
      <Badge tone="ok" dot>
        <span data-testid="count-healthy">{counts.healthy}</span> healthy
      </Badge>
      <Badge tone="warn" dot title="Serving, with a model held back or recent failures">
        <span data-testid="count-limited">{counts.limited}</span> limited
      </Badge>
      <Badge tone="warn" dot title="Out of routing for now; back by themselves">
        <span data-testid="count-out">{counts.out}</span> out of routing
      </Badge>
      <Badge tone="danger" dot title="Only you can bring these back (new credentials, a top-up)">
        <span data-testid="count-attention">{counts.needsAttention}</span> need attention
      </Badge>
      {counts.disabled > 0 && <Badge tone="neutral">{counts.disabled} disabled</Badge>}
    </>
  );
}

/** The reason line under a state badge ("Rate limited · 429 · Too many requests"). */
export function reasonText(state: LiveState): string | null {
  if (state.kind === 'cooling' || state.kind === 'terminal') {
    const parts = [describeErrorType(state.reason), state.kind === 'cooling' ? state.errorCode : null, state.detail].filter(
      (p): p is string => !!p,
    );
    return parts.length ? [...new Set(parts)].join(' · ') : null;
  }
  return null;
}

const BREAKER_TONE: Record<BreakerState, 'ok' | 'warn' | 'danger' | 'info'> = {
  CLOSED: 'ok',
  DEGRADED: 'warn',
  OPEN: 'danger',
  HALF_OPEN: 'info',
};

export function BreakerBadge({ state }: { state: BreakerState }) {
  return (
    <Badge tone={BREAKER_TONE[state]} dot>
      {state.replace('_', '-')}
    </Badge>
  );
}

export function SourceBadge({ source }: { source: SettingSource }) {
  const label = source === 'persisted' ? 'saved' : source === 'cli' ? 'command line' : source;
  const tone = source === 'persisted' ? 'accent' : source === 'env' || source === 'cli' ? 'info' : 'neutral';
  return (
    <Badge tone={tone} title={`Value comes from: ${label}`}>
      {label}
    </Badge>
  );
}

export function HttpStatus({ status }: { status: number | null }) {
  if (status === null) return <Badge tone="neutral">—</Badge>;
  const tone = status < 300 ? 'ok' : status < 400 ? 'info' : status === 429 ? 'warn' : 'danger';
  return <Badge tone={tone}>{status}</Badge>;
}
