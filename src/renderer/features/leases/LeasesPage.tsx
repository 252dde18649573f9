// Leases: the exclusive connection leases managed sessions hold (which client key, which
// connection, generation, since when, until when) and a Release button. Live: the engine pushes
// the leases when one is acquired, renewed, moved or ends. Which keys may take leases, and on which
// connections, is set per key on "Connect your agent".
import { useState } from 'react';
import { LoadState } from '../../components/LoadState';
import { DataTable, RowAction } from '../../components/DataTable';
import { ConfirmDialog } from '../../components/Modal';
import { Card, EmptyState, PageHeader } from '../../components/ui';
import { useServerNow } from '../../hooks/useNow';
import { hrefOf } from '../../hooks/useRoute';
import { formatAgo, formatRemaining } from '../../lib/format';
import type { LeaseView } from '../../../shared/model';
import { useSessionsList } from '../sessions/useSessionsList';

export function LeasesPage() {
  const now = useServerNow();
  const { view, pending, store } = useSessionsList('leases');
  const [releasing, setReleasing] = useState<LeaseView | null>(null);
  const live = view ? view.leases.filter((l) => l.expiresAt > now) : [];

  return (
    <div className="page">
      <PageHeader
        title="Leases"
        description="A managed session can hold one connection exclusively through POST /api/v1/session-leases on the proxy port. Its requests present the lease; a renewed lease refuses the old generation before anything reaches the provider."
      />
      {view === null ? (
        <LoadState topics="leases" what="leases" />
      ) : (
        <Card title="Active leases">
          {live.length === 0 ? (
            <EmptyState title="No active leases">
              A client key needs exclusive leases turned on and a list of connections it may lease (set both on{' '}
              <a href={hrefOf('agent')}>Connect your agent</a>) to acquire one.
            </EmptyState>
          ) : (
            <DataTable label="Active leases" columns={['Client key', 'Connection', 'Generation', 'Acquired', 'Renewed', 'Expires in']} actions>
              {live.map((l) => (
                <tr key={l.id} data-testid="lease-row">
                  <td>
                    {l.clientKeyName ?? l.clientKeyId}
                    {l.label && <div className="muted small">{l.label}</div>}
                  </td>
                  <td>
                    <strong>{l.connectionName ?? l.connectionId}</strong>
                    {l.provider && <span className="muted"> ({l.provider})</span>}
                  </td>
                  <td className="tabular">{l.generation}</td>
                  <td>{formatAgo(l.acquiredAt, now)}</td>
                  <td>{l.renewedAt > l.acquiredAt ? formatAgo(l.renewedAt, now) : <span className="muted">never</span>}</td>
                  <td className="tabular">{formatRemaining(l.expiresAt - now)}</td>
                  <RowAction
                    variant="btn-ghost danger-text"
                    disabled={pending[l.id]}
                    onClick={() => setReleasing(l)}
                    label={`Release the lease on ${l.connectionName ?? l.connectionId}`}
                  >
                    Release
                  </RowAction>
                </tr>
              ))}
            </DataTable>
          )}
        </Card>
      )}
      {releasing && (
        <ConfirmDialog
          title={`Release the lease on ${releasing.connectionName ?? releasing.connectionId}?`}
          confirmLabel="Release lease"
          danger
          busy={pending[releasing.id]}
          onCancel={() => setReleasing(null)}
          onConfirm={async () => {
            await store.release(releasing.id);
            setReleasing(null);
          }}
        >
          <p>
            {releasing.clientKeyName ?? 'Its holder'}'s next request with this lease is refused as a lease that no longer exists, and the connection is
            free for other sessions at once.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
