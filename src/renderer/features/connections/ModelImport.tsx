// Model import (issue 22): a connection test that lists the upstream's models offers to add them
// to the connection's model list. The user ticks the ones to add (all new ones to start with);
// models already listed are not offered again.
import { useState } from 'react';
import { useDashboard } from '../../hooks/dashboardContext';
import type { ConnectionView } from '../../../shared/model';

/** The listed models the connection does not list yet, in the upstream's order. */
export const newModelsOf = (conn: Pick<ConnectionView, 'models'>, found: readonly string[]): string[] => {
  const have = new Set(conn.models);
  return [...new Set(found)].filter((m) => !have.has(m));
};

export function ModelImport({ conn, found, disabled }: { conn: ConnectionView; found: readonly string[]; disabled?: boolean }) {
  const d = useDashboard();
  const fresh = newModelsOf(conn, found);
  const [open, setOpen] = useState(false);
  const [unticked, setUnticked] = useState<Set<string>>(new Set());
  const [busy, setBusy] = useState(false);
  if (found.length === 0) return null;
  if (fresh.length === 0) return <span className="muted small"> · all listed on this connection</span>;
  const chosen = fresh.filter((m) => !unticked.has(m));
  const add = async () => {
    setBusy(true);
    const ok = await d.connections.getState().patch(conn.id, { models: [...conn.models, ...chosen] }, 'the models');
    setBusy(false);
    if (ok) {
      d.toasts.getState().push('success', `Added ${chosen.length === 1 ? '1 model' : `${chosen.length} models`} to ${conn.name}`);
      setOpen(false);
      setUnticked(new Set());
    }
  };
  if (!open) {
    return (
      <button type="button" className="btn btn-sm" onClick={() => setOpen(true)} aria-label={`Add models to ${conn.name}`}>
        Add {fresh.length === 1 ? 'it' : 'them'} to this connection…
      </button>
    );
  }
  return (
    <fieldset className="model-import">
      <legend>Models to add to {conn.name}</legend>
      <div className="model-import-list">
        {fresh.map((m) => (
          <label key={m} className="model-import-item">
            <input
              type="checkbox"
              checked={!unticked.has(m)}
              onChange={(e) =>
                setUnticked((s) => {
                  const next = new Set(s);
                  if (e.target.checked) next.delete(m);
                  else next.add(m);
                  return next;
                })
              }
            />
            <span className="mono">{m}</span>
          </label>
        ))}
      </div>
      <div className="row-actions">
        <button type="button" className="btn btn-sm" onClick={() => setUnticked(chosen.length === fresh.length ? new Set(fresh) : new Set())}>
          {chosen.length === fresh.length ? 'Select none' : 'Select all'}
        </button>
        <button type="button" className="btn btn-sm btn-primary" disabled={busy || disabled || chosen.length === 0} onClick={() => void add()}>
          {chosen.length === 1 ? 'Add 1 model' : `Add ${chosen.length} models`}
        </button>
        <button type="button" className="btn btn-sm btn-ghost" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </fieldset>
  );
}
