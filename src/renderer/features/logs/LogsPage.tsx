// Request log: recent requests, newest first, arriving live. Each request opens to its attempts
// (connection, status, failure reason, timings, whether it failed over) and the connections that
// were skipped, with why.
import { Fragment } from 'react';
import { LoadState } from '../../components/LoadState';
import { DataTable, type ColumnSpec } from '../../components/DataTable';
import { HttpStatus } from '../../components/status';
import { Badge, Card, EmptyState, PageHeader, Spinner, Switch } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { formatClock, formatMs, formatRemaining } from '../../lib/format';
import { STRATEGY_INFO } from '../../lib/comboStrategies';
import { describeErrorType, SKIP_REASONS } from '../../lib/reasons';
import { describeStream } from '../../lib/streamWords';
import { describeRetry } from '../../lib/retryWords';
import { translationLabel } from '../../lib/translation';
import { describeAffinity, describeLease, SESSION_SOURCE_LABELS, shortSession } from '../../lib/sessionWords';
import type { ComboTrace, RequestLogEntry, SkipReason } from '../../../shared/model';

const PROTOCOL_LABEL: Record<RequestLogEntry['protocol'], string> = {
  'anthropic-messages': 'Messages',
  'anthropic-count-tokens': 'Count tokens',
  'openai-chat': 'Chat',
  'openai-responses': 'Responses',
  models: 'Models',
};

/** The request rows' first column: the button that opens a request's details. */
const DETAILS_COLUMN: ColumnSpec = { key: 'details', className: 'expand-col', label: <span className="sr-only">Details</span> };

const VIA: Record<ComboTrace['via'], string> = { name: 'by its name', prefix: 'as combo/<name>', mapping: 'through the mapping' };

function outcomeText(o: ComboTrace['order'][number]): string {
  if (o.outcome === 'served') return 'served';
  if (o.outcome === 'not_tried') return 'not needed';
  if (o.outcome === 'skipped') return `skipped: ${SKIP_REASONS[o.reason as SkipReason] ?? o.reason ?? ''}`;
  return `failed${o.status ? ` ${o.status}` : ''}: ${describeErrorType(o.reason) ?? 'error'}`;
}

function ComboDetails({ c }: { c: ComboTrace }) {
  return (
    <>
      <h4>Combo</h4>
      <p data-testid="log-combo">
        <code className="mono">{c.name}</code> ({STRATEGY_INFO[c.strategy]?.label ?? c.strategy}), chosen {VIA[c.via]}
        {c.pattern && (
          <>
            {' '}
            <code className="mono">{c.pattern}</code>
          </>
        )}
        .{c.waits.length > 0 && ` Waited ${c.waits.map((w) => formatMs(w.ms)).join(' + ')} for a cooldown to lift.`}
      </p>
      <DataTable label="Combo order" columns={['Order', 'Target', 'Connection', 'Outcome']} compact>
        {c.order.map((o, i) => (
          <tr key={`${o.target}-${o.connectionId ?? i}`}>
            <td className="tabular">{i + 1}</td>
            <td>
              <span className="muted">#{o.target + 1}</span>{' '}
              <code className="mono">
                {o.provider}/{o.model}
              </code>
            </td>
            <td>{o.connectionName ?? <span className="muted">none</span>}</td>
            <td className={o.outcome === 'served' ? 'ok-text' : o.outcome === 'failed' ? 'danger-text' : undefined}>{outcomeText(o)}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

/** What the request's session pin or exclusive lease did. */
function SessionDetails({ e }: { e: RequestLogEntry }) {
  if (!e.affinity && !e.lease) return null;
  return (
    <>
      <h4>{e.lease ? 'Lease' : 'Session'}</h4>
      {e.affinity && (
        <p data-testid="log-affinity">
          Session <code className="mono" title={e.affinity.session}>{shortSession(e.affinity.session)}</code>{' '}
          <span className="muted">({SESSION_SOURCE_LABELS[e.affinity.source] ?? e.affinity.source})</span>: {describeAffinity(e.affinity, e.connectionName)}
        </p>
      )}
      {e.lease && <p data-testid="log-lease">{describeLease(e.lease, e.connectionName)}</p>}
    </>
  );
}

/** A short tag for the request row: how the session or lease routed it. */
function routeTag(e: RequestLogEntry): string | null {
  if (e.lease) return e.lease.result === 'held' ? 'lease' : e.lease.result === 'moved' ? 'lease moved' : e.lease.result === 'refused' ? 'lease refused' : null;
  const a = e.affinity;
  if (!a) return null;
  if (a.result === 'created') return 'new session';
  if (a.result === 'moved') return 're-pinned';
  return a.pin === 'followed' ? 'followed pin' : null;
}

function Details({ e, now }: { e: RequestLogEntry; now: number }) {
  return (
    <div className="log-details">
      {e.errorMessage && (
        <div className="callout callout-danger">
          {e.errorCode && <code className="mono">{e.errorCode}</code>} {e.errorMessage}
        </div>
      )}
      {e.combo && <ComboDetails c={e.combo} />}
      <SessionDetails e={e} />
      <h4>Attempts</h4>
      {e.attempts.length === 0 ? (
        <p className="muted">No upstream was called.</p>
      ) : (
        <DataTable label="Attempts" columns={['#', 'Connection', 'Model', 'Status', 'Outcome', 'Queued', 'First byte', 'Total']} compact>
          {e.attempts.map((a, i) => {
            const sw = describeStream(a, e.attempts[i + 1]);
            return (
            <tr key={a.attempt}>
              <td className="tabular">{a.attempt}</td>
              <td>
                {a.connectionName} <span className="muted">({a.provider})</span>
                {a.via && <div className="small muted">{a.via === 'pin' ? 'tried first: the session\'s pin' : 'under the exclusive lease'}</div>}
                {a.retry && <div className="small" data-testid="attempt-retry">{describeRetry(a)}</div>}
                {a.egressIp && <div className="muted small">via {a.egressIp}</div>}
              </td>
              <td>
                <code className="mono">{a.model}</code>
                {a.translated && (
                  <div className="small muted" data-testid="attempt-translated">
                    translated {translationLabel(a.translated)}
                  </div>
                )}
                {a.dropped && a.dropped.length > 0 && (
                  <div className="small muted" title={a.dropped.join('\n')}>
                    not sent: {a.dropped.map((d) => d.split(':')[0]).join(', ')}
                  </div>
                )}
              </td>
              <td>
                <HttpStatus status={a.status} />
              </td>
              <td>
                {a.errorClass ? (
                  <>
                    {describeErrorType(a.errorClass)}
                    {a.errorMessage && <div className="muted small">{a.errorMessage}</div>}
                    {sw.watchdog && <div className="small warn-text" data-testid="attempt-watchdog">{sw.watchdog}</div>}
                    {a.failedOver && !a.continuedElsewhere && <div className="small warn-text">failed over to the next connection</div>}
                  </>
                ) : (
                  <span className="ok-text">served</span>
                )}
                {sw.continuation && <div className="small" data-testid="attempt-continuation">{sw.continuation}</div>}
                {sw.figures && <div className="muted small" data-testid="attempt-stream">{sw.figures}</div>}
              </td>
              <td className="tabular">{formatMs(a.queuedMs)}</td>
              <td className="tabular">{formatMs(a.ttfbMs)}</td>
              <td className="tabular">{formatMs(a.durationMs)}</td>
            </tr>
            );
          })}
        </DataTable>
      )}
      <h4>Skipped</h4>
      {e.skipped.length === 0 ? (
        <p className="muted">No connection was skipped.</p>
      ) : (
        <ul className="skip-list">
          {e.skipped.map((s, i) => (
            <li key={`${s.connectionId}-${i}`}>
              <strong>{s.connectionName}</strong> <span className="muted">({s.provider})</span>
              {s.model && (
                <>
                  {' '}
                  <code className="mono">{s.model}</code>
                </>
              )}
              : {SKIP_REASONS[s.reason] ?? s.reason}
              {s.until && s.until > e.startedAt && <span className="muted"> · until {formatClock(s.until)}{s.until > now ? ` (${formatRemaining(s.until - now)} left)` : ''}</span>}
              {s.detail && <span className="muted"> · {s.detail}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function LogsPage() {
  const d = useDashboard();
  const now = useServerNow();
  const entries = useSel(d.logs, (s) => s.entries);
  const loaded = useSel(d.logs, (s) => s.loaded);
  const loading = useSel(d.logs, (s) => s.loading);
  const loadingMore = useSel(d.logs, (s) => s.loadingMore);
  const nextBefore = useSel(d.logs, (s) => s.nextBefore);
  const filter = useSel(d.logs, (s) => s.filter);
  const expanded = useSel(d.logs, (s) => s.expanded);
  const link = useSel(d.app, (s) => s.link);
  const connections = useSel(d.connections, (s) => s.list);
  const store = d.logs.getState();

  return (
    <div className="page">
      <PageHeader
        title="Request log"
        description="Every request through the proxy: which connection served it, each attempt, and why other connections were skipped."
        actions={link === 'open' ? <Badge tone="ok" dot>Live</Badge> : <Badge tone="warn" dot>Paused until reconnected</Badge>}
      />
      <div className="filters">
        <Switch compact label="Errors only" checked={filter.errorsOnly} onChange={(v) => void store.setFilter({ errorsOnly: v })} />
        <label className="inline-label">
          Connection
          <select value={filter.connectionId ?? ''} onChange={(e) => void store.setFilter({ connectionId: e.target.value || null })}>
            <option value="">All connections</option>
            {connections.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        {loading && <Spinner label="Loading requests" />}
      </div>
      {!loaded ? (
        <LoadState topics="logs" what="requests" />
      ) : entries.length === 0 ? (
        <EmptyState title={filter.errorsOnly || filter.connectionId ? 'No request matches' : 'No requests yet'}>
          {filter.errorsOnly || filter.connectionId
            ? 'Change the filters to see more.'
            : 'Requests appear here as your agents send them, live.'}
        </EmptyState>
      ) : (
        <Card>
          <DataTable label="Requests" columns={[DETAILS_COLUMN, 'Time', 'Status', 'Model', 'API', 'Served by', 'Attempts', 'First byte', 'Total', 'Tokens']} className="log-table">
            {entries.map((e) => {
              const open = expanded === e.id;
              const failovers = e.attempts.filter((a) => a.failedOver).length;
              return (
                <Fragment key={e.id}>
                  <tr className={`log-row${open ? ' open' : ''}${e.status >= 400 ? ' error' : ''}`} data-testid="log-row">
                    <td className="expand-col">
                      <button
                        type="button"
                        className="btn btn-ghost btn-icon"
                        aria-expanded={open}
                        aria-label={`Details of the ${formatClock(e.startedAt)} request`}
                        onClick={() => store.toggleExpanded(e.id)}
                      >
                        {open ? '▾' : '▸'}
                      </button>
                    </td>
                    <td className="tabular">{formatClock(e.startedAt)}</td>
                    <td>
                      <HttpStatus status={e.status} />
                    </td>
                    <td>
                      <code className="mono">{e.model ?? e.requestedModel ?? '—'}</code>
                      {e.stream && <span className="muted small"> stream</span>}
                      {e.combo && <div className="muted small">via combo {e.combo.name}</div>}
                    </td>
                    <td>{PROTOCOL_LABEL[e.protocol] ?? e.path}</td>
                    <td>
                      {e.connectionName ?? <span className="muted">{e.errorCode ?? '—'}</span>}
                      {routeTag(e) && <div className="muted small" data-testid="log-route-tag">{routeTag(e)}</div>}
                    </td>
                    <td className="tabular">
                      {e.attempts.length}
                      {failovers > 0 && <span className="warn-text small"> · {failovers} failover{failovers > 1 ? 's' : ''}</span>}
                      {e.skipped.length > 0 && <span className="muted small"> · {e.skipped.length} skipped</span>}
                    </td>
                    <td className="tabular">{formatMs(e.ttfbMs)}</td>
                    <td className="tabular">{formatMs(e.durationMs)}</td>
                    <td className="tabular">
                      {e.inputTokens !== null || e.outputTokens !== null ? `${e.inputTokens ?? '?'} / ${e.outputTokens ?? '?'}` : '—'}
                    </td>
                  </tr>
                  {open && (
                    <tr className="log-detail-row">
                      <td colSpan={10}>
                        <Details e={e} now={now} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </DataTable>
          {nextBefore !== null && (
            <div className="load-more">
              <button type="button" className="btn" disabled={loadingMore} onClick={() => void store.loadMore()}>
                {loadingMore ? 'Loading…' : 'Load older requests'}
              </button>
            </div>
          )}
        </Card>
      )}
    </div>
  );
}
