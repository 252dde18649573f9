// Sessions: which agent session is pinned to which connection (or combo target), since when,
// and until when; Forget ends a pin so the session's next request is routed as new. Live: the
// engine pushes the pins when one is created, moves or ends (and their sliding expiry at a slower
// pace); the countdowns tick locally.
import { useState } from 'react';
import { LoadState } from '../../components/LoadState';
import { DataTable, RowAction } from '../../components/DataTable';
import { ConfirmDialog } from '../../components/Modal';
import { Badge, Card, EmptyState, PageHeader } from '../../components/ui';
import { useServerNow } from '../../hooks/useNow';
import { hrefOf } from '../../hooks/useRoute';
import { formatAgo, formatDuration, formatRemaining } from '../../lib/format';
import { SESSION_SOURCE_LABELS, shortSession } from '../../lib/sessionWords';
import type { SessionPinView } from '../../../shared/model';
import { useSessionsList } from './useSessionsList';

export function SessionsPage() {
  const now = useServerNow();
  const { view, pending, store } = useSessionsList('sessions');
  const [forgetting, setForgetting] = useState<SessionPinView | null>(null);
  const live = view ? view.sessions.filter((p) => view.ttlMs === 0 || p.expiresAt > now) : [];

  return (
    <div className="page">
      <PageHeader
        title="Sessions"
        description="Agents that send a session id stay on the connection that served them last while it is eligible, so the provider's prompt cache keeps working. A pin never blocks failover: a cooling or failing connection is skipped and the pin moves."
      />
      {view === null ? (
        <LoadState topics="sessions" what="sessions" />
      ) : (
        <Card
          title="Pinned sessions"
          description={
            view.ttlMs === 0 ? (
              <>
                Session affinity is off (its pin time is 0). Turn it on with <a href={hrefOf('settings')}>Session affinity</a> in the settings.
              </>
            ) : (
              <>A pin ends {formatDuration(view.ttlMs)} after its session's last request.</>
            )
          }
        >
          {live.length === 0 ? (
            <EmptyState title="No pinned sessions">
              Claude Code, Codex CLI and any client sending X-Session-Id (or X-Switchyard-Session) are pinned on their first answered request.
            </EmptyState>
          ) : (
            <DataTable label="Pinned sessions" columns={['Session', 'Client key', 'Pinned to', 'Pinned', 'Last request', 'Expires in']} actions>
              {live.map((p) => (
                <tr key={p.id} data-testid="session-row">
                  <td>
                    <code className="mono" title={p.session}>
                      {shortSession(p.session)}
                    </code>
                    <div className="muted small">{SESSION_SOURCE_LABELS[p.source] ?? p.source}</div>
                  </td>
                  <td>{p.clientKeyName ?? <span className="muted">none</span>}</td>
                  <td>
                    <strong>{p.connectionName ?? p.connectionId}</strong>
                    {p.comboName !== null || p.comboId !== null ? (
                      <div className="muted small">
                        combo {p.comboName ?? p.comboId}
                        {p.target !== null ? ` · target #${p.target + 1}` : ''}
                        {p.model ? ` · ${p.model}` : ''}
                      </div>
                    ) : (
                      p.model && <div className="muted small">{p.model}</div>
                    )}
                  </td>
                  <td>{formatAgo(p.pinnedAt, now)}</td>
                  <td>{formatAgo(p.lastUsedAt, now)}</td>
                  <td className="tabular">{view.ttlMs === 0 ? <Badge tone="neutral">affinity off</Badge> : formatRemaining(p.expiresAt - now)}</td>
                  <RowAction variant="btn-ghost" disabled={pending[p.id]} onClick={() => setForgetting(p)} label={`Forget session ${p.session}`}>
                    Forget
                  </RowAction>
                </tr>
              ))}
            </DataTable>
          )}
        </Card>
      )}
      {forgetting && (
        <ConfirmDialog
          title={`Forget session ${shortSession(forgetting.session)}?`}
          confirmLabel="Forget"
          busy={pending[forgetting.id]}
          onCancel={() => setForgetting(null)}
          onConfirm={async () => {
            await store.forget(forgetting.id);
            setForgetting(null);
          }}
        >
          <p>
            Its next request is routed like a new session and pinned to whichever connection serves it. The session's prompt cache on{' '}
            {forgetting.connectionName ?? 'its connection'} may be lost.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
