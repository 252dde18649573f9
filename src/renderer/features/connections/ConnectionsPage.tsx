// Connections: every provider connection with its live state, and add / edit / test / disable /
// delete.
import { useState } from 'react';
import { LoadState } from '../../components/LoadState';
import { ConfirmDialog } from '../../components/Modal';
import { EmptyState, PageHeader } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { healthNow, NO_COUNTS } from '../../lib/connectionState';
import type { ConnectionView } from '../../../shared/model';
import { ConnectionCard } from './ConnectionCard';
import { HealthCountBadges } from '../../components/status';
import { ConnectionDialog } from './ConnectionDialog';

export function ConnectionsPage() {
  const d = useDashboard();
  const now = useServerNow();
  const list = useSel(d.connections, (s) => s.list);
  const loaded = useSel(d.connections, (s) => s.loaded);
  const cooldowns = useSel(d.resilience, (s) => s.cooldowns);
  const breakers = useSel(d.resilience, (s) => s.breakers);
  const admission = useSel(d.admission, (s) => s.byConnection);
  const [editing, setEditing] = useState<ConnectionView | 'new' | null>(null);
  const [signingIn, setSigningIn] = useState<ConnectionView | null>(null);
  const [deleting, setDeleting] = useState<ConnectionView | null>(null);
  const deletingPending = useSel(d.connections, (s) => (deleting ? !!s.pending[deleting.id] : false));

  const entryOf = (id: string) => cooldowns.find((c) => c.connectionId === id);
  // The engine's counts (the sidebar and the Cooldown manager show the same ones).
  const counts = healthNow(useSel(d.resilience, (s) => s.health), now)?.counts ?? NO_COUNTS;

  return (
    <div className="page">
      <PageHeader
        title="Connections"
        description="Accounts and API keys the proxy can route to. Lower priority goes first; equal priorities take turns."
        actions={
          <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
            Add connection
          </button>
        }
      />
      {list.length > 0 && (
        <div className="summary-row" aria-label="Connection states">
          <HealthCountBadges counts={counts} />
        </div>
      )}
      {!loaded ? (
        <LoadState topics="connections" what="connections" />
      ) : list.length === 0 ? (
        <EmptyState
          title="No connections yet"
          action={
            <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
              Add your first connection
            </button>
          }
        >
          Add an API key, a Claude subscription, or an OpenAI- or Anthropic-compatible endpoint. With two or more, the proxy fails over when one is rate-limited.
        </EmptyState>
      ) : (
        <div className="conn-list">
          {list.map((c) => (
            <ConnectionCard
              key={c.id}
              conn={c}
              entry={entryOf(c.id)}
              admission={admission[c.id]}
              breaker={breakers.find((b) => b.provider === c.provider)}
              now={now}
              onEdit={() => setEditing(c)}
              onDelete={() => setDeleting(c)}
              onSignIn={() => setSigningIn(c)}
            />
          ))}
        </div>
      )}
      {editing && <ConnectionDialog connection={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} />}
      {signingIn && <ConnectionDialog connection={signingIn} claudeTab="signin" onClose={() => setSigningIn(null)} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          confirmLabel="Delete connection"
          danger
          busy={deletingPending}
          onCancel={() => setDeleting(null)}
          onConfirm={async () => {
            if (await d.connections.getState().remove(deleting.id)) setDeleting(null);
          }}
        >
          <p>
            The proxy stops routing to it at once and its saved key is removed. Requests already running finish. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
