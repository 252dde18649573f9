// Status badges shared by the pages: a connection's live state, a breaker state, a setting's
// source, an HTTP status.
import type { BreakerState } from '../../shared/model';
import type { SettingSource } from '../../shared/settings';
import type { LiveState } from '../lib/connectionState';
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
