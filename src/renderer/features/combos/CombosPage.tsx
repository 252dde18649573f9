// Combos: named routing pools of provider models. Each card shows the strategy in words, the
// targets in order with their live eligibility (from the pushed resilience state: cooling, model
// locked, breaker open), which target served the last request, and Test / Edit / Delete. Below,
// the model-id mappings that send an agent's changing model ids to a combo.
import { useState } from 'react';
import { LoadState } from '../../components/LoadState';
import { DataTable } from '../../components/DataTable';
import { ConfirmDialog } from '../../components/Modal';
import { TechName } from '../../components/TechName';
import { Badge, Card, EmptyState, Field, PageHeader, type Tone } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { hrefOf } from '../../hooks/useRoute';
import { protocolOf, targetEligibility, type TargetEligibility } from '../../lib/comboEligibility';
import { protocolName } from '../../../shared/wireProtocols';
import { STRATEGY_INFO } from '../../lib/comboStrategies';
import { describeError } from '../../lib/errors';
import { formatClock, formatRemaining } from '../../lib/format';
import { describeErrorCode } from '../../lib/reasons';
import type { ComboView, RequestLogEntry } from '../../../shared/model';
import { ComboDialog } from './ComboDialog';
import { managedOwner } from '../../stores/teamStore';
import { ManagedByTeam } from '../team/ManagedByTeam';

function EligibilityBadge({ e, now }: { e: TargetEligibility; now: number }) {
  const left = (until: number | null) => (until !== null && until > now ? ` · ${formatRemaining(until - now)}` : '');
  const [tone, text]: [Tone, string] =
    e.kind === 'ready'
      ? ['ok', `Ready${e.connections > 1 ? ` (${e.connections} connections)` : ''}`]
      : e.kind === 'cooling'
        ? ['warn', `Cooling down${left(e.until)}`]
        : e.kind === 'locked'
          ? ['warn', `Model locked${left(e.until)}`]
          : e.kind === 'breaker_open'
            ? ['danger', `Breaker open${left(e.until)}`]
            : e.kind === 'terminal'
              ? ['danger', 'Terminal']
              : e.kind === 'disabled'
                ? ['neutral', 'Disabled']
                : ['danger', 'No connection'];
  return (
    <span data-testid="target-state">
      <Badge tone={tone} dot>
        {text}
      </Badge>
    </span>
  );
}

function lastServed(entries: RequestLogEntry[], combo: ComboView): RequestLogEntry | undefined {
  return entries.find((e) => e.combo?.id === combo.id);
}

function ComboCard({ combo, onEdit, onDelete }: { combo: ComboView; onEdit: () => void; onDelete: () => void }) {
  const d = useDashboard();
  const now = useServerNow();
  const connections = useSel(d.connections, (s) => s.list);
  const cooldowns = useSel(d.resilience, (s) => s.cooldowns);
  const lockouts = useSel(d.resilience, (s) => s.lockouts);
  const breakers = useSel(d.resilience, (s) => s.breakers);
  const test = useSel(d.combos, (s) => s.tests[combo.id]);
  const last = useSel(d.logs, (s) => lastServed(s.entries, combo));
  // Team mode: a combo the team's publisher owns is read-only here.
  const owner = useSel(d.team, (s) => managedOwner(s.view, 'combos', combo.id));
  const info = STRATEGY_INFO[combo.strategy];
  const r = { cooldowns, lockouts, breakers };
  const titleId = `combo-${combo.id}`;
  return (
    <article className="card combo-card" aria-label={combo.name}>
      <div className="card-header">
        <div>
          <h2 id={titleId} className="card-title">
            <code className="mono">{combo.name}</code> <Badge tone="accent">{info.label}</Badge>
          </h2>
          <p className="card-description" data-testid="strategy-explained">
            {info.explain}
          </p>
          {owner && <ManagedByTeam owner={owner} />}
        </div>
        <div className="card-actions">
          <button type="button" className="btn btn-sm" disabled={test?.running} onClick={() => void d.combos.getState().test(combo.id)}>
            {test?.running ? 'Testing…' : 'Test'}
          </button>
          {!owner && (
            <>
              <button type="button" className="btn btn-sm" onClick={onEdit}>
                Edit
              </button>
              <button type="button" className="btn btn-sm btn-danger" onClick={onDelete}>
                Delete
              </button>
            </>
          )}
        </div>
      </div>
      <DataTable label={`Targets of ${combo.name}`} columns={['#', 'Target', 'Connection', info.usesWeights && 'Weight', 'Protocol', 'Now']} compact>
        {combo.targets.map((t, i) => {
          const pinned = t.connectionId ? connections.find((c) => c.id === t.connectionId) : null;
          const protocol = protocolOf(t, connections);
          return (
            <tr key={`${t.provider}/${t.model}#${t.connectionId ?? ''}`} data-testid="combo-target">
              <td className="tabular">{i + 1}</td>
              <td>
                <code className="mono">
                  {t.provider}/{t.model}
                </code>
              </td>
              <td>{t.connectionId ? (pinned?.name ?? <span className="danger-text">removed connection</span>) : <span className="muted">any</span>}</td>
              {info.usesWeights && <td className="tabular">{t.weight}</td>}
              <td>{protocol ? <Badge tone="neutral">{protocolName(protocol)}</Badge> : '—'}</td>
              <td>
                <EligibilityBadge e={targetEligibility(t, connections, r, now)} now={now} />
              </td>
            </tr>
          );
        })}
      </DataTable>
      {test?.result && (
        <div className={`callout ${test.result.ok ? 'callout-ok' : 'callout-danger'} test-result`} data-testid="combo-test-result" role="status">
          Test: {test.result.message}
        </div>
      )}
      <p className="muted small" data-testid="combo-last-served">
        {last ? (
          last.connectionName && last.status < 400 ? (
            `Last request ${formatClock(last.startedAt)}: served by ${last.connectionName} with ${last.model}`
          ) : (
            <>
              Last request {formatClock(last.startedAt)}: {last.status}
              {last.errorCode && (
                <>
                  {' — '}{describeErrorCode(last.errorCode)} <TechName name={last.errorCode} label="Show the error code" />
                </>
              )}
            </>
          )
        ) : (
          'No request has used this combo yet.'
        )}
      </p>
    </article>
  );
}

function MappingsCard() {
  const d = useDashboard();
  const combos = useSel(d.combos, (s) => s.list);
  const mappings = useSel(d.combos, (s) => s.mappings);
  const team = useSel(d.team, (s) => s.view);
  const [pattern, setPattern] = useState('');
  const [combo, setCombo] = useState('');
  const [error, setError] = useState<{ field?: string; message: string } | null>(null);
  const chosen = combo || combos[0]?.name || '';
  const add = async () => {
    setError(null);
    try {
      await d.combos.getState().addMapping({ pattern: pattern.trim(), combo: chosen });
      setPattern('');
    } catch (e) {
      const u = describeError(e);
      setError({ field: u.field, message: u.message });
    }
  };
  return (
    <Card
      title="Model mappings"
      description={
        <>
          Send every model id that matches a pattern to a combo, e.g. <code className="mono">claude-*</code> so Claude Code&apos;s changing model ids
          (claude-sonnet-4-5-20250929, claude-opus-4-1, …) all land in one pool. <code className="mono">*</code> is any run of characters,{' '}
          <code className="mono">?</code> one; the most specific pattern wins.
        </>
      }
    >
      {mappings.length > 0 && (
        <DataTable label="Model mappings" columns={['Pattern', 'Combo', { key: 'actions', label: <span className="sr-only">Actions</span> }]} compact>
          {mappings.map((m) => (
            <tr key={m.id}>
              <td>
                <code className="mono">{m.pattern}</code>
              </td>
              <td>
                <code className="mono">{m.comboName}</code>
              </td>
              <td>
                {managedOwner(team, 'mappings', m.id) ? (
                  <ManagedByTeam owner={managedOwner(team, 'mappings', m.id)!} />
                ) : (
                  <button type="button" className="btn btn-sm" aria-label={`Delete mapping ${m.pattern}`} onClick={() => void d.combos.getState().removeMapping(m.id)}>
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {combos.length === 0 ? (
        <p className="muted">Create a combo first, then map model ids to it.</p>
      ) : (
        <form
          className="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void add();
          }}
        >
          <Field label="Pattern" error={error?.field === 'pattern' ? error.message : undefined}>
            {(p) => <input {...p} value={pattern} placeholder="claude-*" autoComplete="off" spellCheck={false} onChange={(e) => setPattern(e.target.value)} />}
          </Field>
          <Field label="Combo" error={error?.field === 'combo' ? error.message : undefined}>
            {(p) => (
              <select {...p} value={chosen} onChange={(e) => setCombo(e.target.value)}>
                {combos.map((c) => (
                  <option key={c.id} value={c.name}>
                    {c.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button type="submit" className="btn">
            Add mapping
          </button>
          {error && error.field !== 'pattern' && error.field !== 'combo' && (
            <div className="field-error" role="alert">
              {error.message}
            </div>
          )}
        </form>
      )}
    </Card>
  );
}

export function CombosPage() {
  const d = useDashboard();
  const list = useSel(d.combos, (s) => s.list);
  const loaded = useSel(d.combos, (s) => s.loaded);
  const connections = useSel(d.connections, (s) => s.list);
  const [editing, setEditing] = useState<ComboView | 'new' | null>(null);
  const [deleting, setDeleting] = useState<ComboView | null>(null);
  const busy = useSel(d.combos, (s) => (deleting ? !!s.pending[deleting.id] : false));
  const canCreate = connections.length > 0;

  return (
    <div className="page">
      <PageHeader
        title="Combos"
        description="Named pools of models across your providers. An agent asks for a combo by name; Switchyard orders its targets by the strategy and fails over to the next model or provider when one is rate-limited, down or too small for the prompt."
        actions={
          <button type="button" className="btn btn-primary" disabled={!canCreate} onClick={() => setEditing('new')}>
            New combo
          </button>
        }
      />
      {!canCreate && (
        <div className="callout callout-info">
          A combo routes to your connections. <a href={hrefOf('connections')}>Add a connection</a> first.
        </div>
      )}
      {!loaded ? (
        <LoadState topics="combos" what="combos" />
      ) : list.length === 0 ? (
        <EmptyState
          title="No combos yet"
          action={
            canCreate ? (
              <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
                Create a combo
              </button>
            ) : undefined
          }
        >
          For example a combo &quot;sonnet&quot; of anthropic/claude-sonnet-4-5 then openrouter/claude-sonnet-4.5 keeps Claude Code working when one provider
          rate-limits it.
        </EmptyState>
      ) : (
        <div className="card-stack">
          {list.map((c) => (
            <ComboCard key={c.id} combo={c} onEdit={() => setEditing(c)} onDelete={() => setDeleting(c)} />
          ))}
        </div>
      )}
      <MappingsCard />
      {editing && <ComboDialog combo={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} />}
      {deleting && (
        <ConfirmDialog
          title={`Delete ${deleting.name}?`}
          confirmLabel="Delete combo"
          danger
          busy={busy}
          onCancel={() => setDeleting(null)}
          onConfirm={() => void d.combos.getState().remove(deleting.id).then((ok) => ok && setDeleting(null))}
        >
          Requests for <code className="mono">{deleting.name}</code> will no longer be routed by this combo, and its model mappings are deleted with it.
        </ConfirmDialog>
      )}
    </div>
  );
}
