// "Route model ids" on the Connect your agent page: an agent asks for its own model ids (Claude
// Code: claude-…), which a connection of another vendor does not list. One click sends every id
// matching a pattern to a chosen connection and model (a one-target combo and a mapping, which
// the Combos page then shows). A second click for the same pattern re-points it.
import { useState } from 'react';
import { Card, Field } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { describeError } from '../../lib/errors';

export function RouteAgentModels() {
  const d = useDashboard();
  const connections = useSel(d.connections, (s) => s.list).filter((c) => c.enabled);
  const mappings = useSel(d.combos, (s) => s.mappings);
  const [pattern, setPattern] = useState('claude-*');
  const [connectionId, setConnectionId] = useState('');
  const [model, setModel] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ field?: string; message: string } | null>(null);
  const conn = connections.find((c) => c.id === connectionId) ?? connections[0] ?? null;
  const chosenModel = model ?? conn?.models[0] ?? '';
  const current = mappings.find((m) => m.pattern.toLowerCase() === pattern.trim().toLowerCase()) ?? null;
  if (connections.length === 0) return null;

  const route = async () => {
    if (!conn) return;
    setError(null);
    setBusy(true);
    try {
      await d.combos.getState().routeAgent({ pattern: pattern.trim(), connectionId: conn.id, model: chosenModel.trim() });
    } catch (e) {
      const u = describeError(e);
      setError({ field: u.field, message: u.message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card
      title="Route model ids"
      description={
        <>
          An agent asks for its own model ids (Claude Code asks for <code className="mono">claude-…</code>), which a connection of another vendor does
          not list. Send every id that matches a pattern to one of your connections and one of its models.
        </>
      }
    >
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void route();
        }}
      >
        <Field label="Model ids" error={error?.field === 'pattern' ? error.message : undefined} hint="* is any run of characters">
          {(p) => <input {...p} className="mono" value={pattern} onChange={(e) => setPattern(e.target.value)} />}
        </Field>
        <Field label="Connection" error={error?.field === 'connectionId' ? error.message : undefined}>
          {(p) => (
            <select
              {...p}
              value={conn?.id ?? ''}
              onChange={(e) => {
                setConnectionId(e.target.value);
                setModel(null);
              }}
            >
              {connections.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Model" error={error?.field === 'model' ? error.message : undefined}>
          {(p) => <input {...p} className="mono" value={chosenModel} placeholder="model id" onChange={(e) => setModel(e.target.value)} />}
        </Field>
        <button type="submit" className="btn btn-primary" disabled={busy || !pattern.trim() || !chosenModel.trim()}>
          {current ? 'Re-route' : 'Route'}
        </button>
      </form>
      {current && (
        <p className="hint">
          <code className="mono">{current.pattern}</code> goes to combo {current.comboName} now (Combos page).
        </p>
      )}
      {error && !['pattern', 'connectionId', 'model'].includes(error.field ?? '') && (
        <div className="field-error" role="alert">
          {error.message}
        </div>
      )}
    </Card>
  );
}
