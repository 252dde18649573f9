// Client key management: create (the new key is shown once in full, and can be revealed again
// later), reveal, copy, revoke.
import { useState } from 'react';
import { CopyButton } from '../../components/CopyButton';
import { DataTable } from '../../components/DataTable';
import { LoadState } from '../../components/LoadState';
import { ConfirmDialog } from '../../components/Modal';
import { Badge, Card, EmptyState, Field } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { describeError, messageForField } from '../../lib/errors';
import { formatAgo } from '../../lib/format';
import type { ClientKeyView } from '../../../shared/model';
import { KeyLeaseAccess } from './KeyLeaseAccess';

export function ClientKeys() {
  const d = useDashboard();
  const keys = useSel(d.keys, (s) => s.list);
  const loaded = useSel(d.keys, (s) => s.loaded);
  const revealed = useSel(d.keys, (s) => s.revealed);
  const pending = useSel(d.keys, (s) => s.pending);
  const now = useServerNow(30_000);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const [revoking, setRevoking] = useState<ClientKeyView | null>(null);
  const [leasing, setLeasing] = useState<ClientKeyView | null>(null);

  const create = async () => {
    const n = name.trim();
    if (!n) {
      setError('give the key a name (e.g. the agent or machine that uses it)');
      return;
    }
    setCreating(true);
    try {
      const r = await d.keys.getState().create(n);
      setCreated({ name: r.key.name, secret: r.secret });
      setName('');
      setError(undefined);
    } catch (err) {
      setError(messageForField(describeError(err)));
    } finally {
      setCreating(false);
    }
  };

  const sorted = [...keys].sort((a, b) => Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || a.createdAt - b.createdAt);

  return (
    <Card title="Client keys" description="One key per agent or machine lets you revoke one without breaking the others.">
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <Field label="New key name" error={error}>
          {(p) => (
            <input
              {...p}
              value={name}
              maxLength={100}
              placeholder="e.g. laptop Claude Code"
              onChange={(e) => {
                setName(e.target.value);
                if (error) setError(undefined);
              }}
            />
          )}
        </Field>
        <button type="submit" className="btn btn-primary" disabled={creating}>
          Create key
        </button>
      </form>

      {created && (
        <div className="callout callout-ok" role="status">
          <div>
            Key <strong>{created.name}</strong> created:
          </div>
          <div className="key-line">
            <code className="mono" data-testid="created-key">
              {created.secret}
            </code>
            <CopyButton text={created.secret} ariaLabel="Copy new key" />
            <button type="button" className="btn btn-sm btn-ghost" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      )}

      {!loaded ? (
        <LoadState topics="keys" what="client keys" />
      ) : keys.length === 0 ? (
        <EmptyState title="No client keys">Create a key to let agents use the proxy.</EmptyState>
      ) : (
        <DataTable label="Client keys" columns={['Name', 'Key', 'Created', 'Last used', 'Status', 'Leases']} actions>
          {sorted.map((k) => {
            const revoked = k.revokedAt !== null;
            return (
              <tr key={k.id} className={revoked ? 'row-muted' : undefined}>
                <td>{k.name}</td>
                <td>
                  <code className="mono">{revealed[k.id] ?? k.masked}</code>
                </td>
                <td>{formatAgo(k.createdAt, now)}</td>
                <td>{k.lastUsedAt ? formatAgo(k.lastUsedAt, now) : <span className="muted">never</span>}</td>
                <td>{revoked ? <Badge tone="neutral">Revoked</Badge> : <Badge tone="ok">Active</Badge>}</td>
                <td data-testid="key-leases">
                  {k.scopes.includes('lease:exclusive') ? (
                    <Badge tone="info">
                      {k.allowedConnections.length} connection{k.allowedConnections.length === 1 ? '' : 's'}
                    </Badge>
                  ) : (
                    <span className="muted">off</span>
                  )}
                </td>
                <td className="actions-col">
                  {!revoked && (
                    <div className="row-actions">
                      {revealed[k.id] ? (
                        <button type="button" className="btn btn-sm btn-ghost" onClick={() => d.keys.getState().hide(k.id)} aria-label={`Hide ${k.name}`}>
                          Hide
                        </button>
                      ) : (
                        <button
                          type="button"
                          className="btn btn-sm btn-ghost"
                          disabled={pending[k.id]}
                          onClick={() => void d.keys.getState().reveal(k.id)}
                          aria-label={`Show ${k.name}`}
                        >
                          Show
                        </button>
                      )}
                      <CopyButton getText={() => d.keys.getState().reveal(k.id)} ariaLabel={`Copy ${k.name}`} className="btn btn-sm btn-ghost" />
                      <button type="button" className="btn btn-sm btn-ghost" onClick={() => setLeasing(k)} aria-label={`Leases for ${k.name}`}>
                        Leases
                      </button>
                      <button type="button" className="btn btn-sm btn-ghost danger-text" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name}`}>
                        Revoke
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}

      {leasing && <KeyLeaseAccess k={leasing} onClose={() => setLeasing(null)} />}

      {revoking && (
        <ConfirmDialog
          title={`Revoke ${revoking.name}?`}
          confirmLabel="Revoke key"
          danger
          busy={pending[revoking.id]}
          onCancel={() => setRevoking(null)}
          onConfirm={async () => {
            await d.keys.getState().revoke(revoking.id);
            setRevoking(null);
          }}
        >
          <p>Agents using this key are refused from the next request on. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </Card>
  );
}
