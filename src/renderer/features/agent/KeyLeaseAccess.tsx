// The lease access of one client key: the lease:exclusive scope and the connections its leases
// may hold (R-LS-01: both are needed before the key can acquire one).
import { useState } from 'react';
import { Modal } from '../../components/Modal';
import { Switch } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { describeError, messageForField } from '../../lib/errors';
import type { ClientKeyView } from '../../../shared/model';

export function KeyLeaseAccess({ k, onClose }: { k: ClientKeyView; onClose: () => void }) {
  const d = useDashboard();
  const connections = useSel(d.connections, (s) => s.list);
  const [enabled, setEnabled] = useState(k.scopes.includes('lease:exclusive'));
  const [allowed, setAllowed] = useState<string[]>(k.allowedConnections);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const known = new Set(connections.map((c) => c.id));
  const toggle = (id: string) => setAllowed((a) => (a.includes(id) ? a.filter((x) => x !== id) : [...a, id]));

  const save = async () => {
    if (enabled && allowed.filter((id) => known.has(id)).length === 0) {
      setError('choose at least one connection this key may lease');
      return;
    }
    setSaving(true);
    try {
      await d.keys.getState().setAccess(k.id, { scopes: enabled ? ['lease:exclusive'] : [], allowedConnections: allowed.filter((id) => known.has(id)) });
      onClose();
    } catch (err) {
      setError(messageForField(describeError(err)));
    } finally {
      setSaving(false);
    }
  };

  return (
    <Modal
      title={`Leases for ${k.name}`}
      description="A managed session using this key can hold one of these connections exclusively (POST /api/v1/session-leases on the proxy port). Requests without a lease are routed as usual."
      onClose={onClose}
      footer={
        <>
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="button" className="btn btn-primary" disabled={saving} onClick={() => void save()}>
            Save
          </button>
        </>
      }
    >
      <Switch
        label="Exclusive leases (lease:exclusive)"
        checked={enabled}
        onChange={(v) => {
          setEnabled(v);
          setError(null);
        }}
      />
      <fieldset className="checklist" disabled={!enabled}>
        <legend>Allowed connections</legend>
        {connections.length === 0 ? (
          <p className="muted">Add a connection first.</p>
        ) : (
          connections.map((c) => (
            <label key={c.id} className="check-row">
              <input
                type="checkbox"
                checked={allowed.includes(c.id)}
                onChange={() => {
                  toggle(c.id);
                  setError(null);
                }}
              />
              {c.name} <span className="muted">({c.provider})</span>
            </label>
          ))
        )}
      </fieldset>
      {error && (
        <div className="field-error" role="alert">
          {error}
        </div>
      )}
    </Modal>
  );
}
