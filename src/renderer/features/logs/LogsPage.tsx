// Request log: recent requests, newest first, arriving live. Each row shows the model asked for
// and the one served, the client key, the request id agents receive, and who served it (or, in
// plain words, why no one did); filters by text or id, status and time range run in the engine.
// Each request opens to its waits (with why), its attempts and the connections skipped, with why.
import { cacheText, formatUsd, tokensText } from '../prices/costText';
import { hrefOf } from '../../hooks/useRoute';
import { Fragment, useCallback, useEffect, useState } from 'react';
import { LoadState } from '../../components/LoadState';
import { DataTable, type ColumnSpec } from '../../components/DataTable';
import { HttpStatus } from '../../components/status';
import { TechName } from '../../components/TechName';
import { Badge, Card, EmptyState, PageHeader, Spinner } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { formatClock, formatMs, formatRemaining } from '../../lib/format';
import { STRATEGY_INFO } from '../../lib/comboStrategies';
import { describeErrorType, SKIP_REASONS } from '../../lib/reasons';
import { describeRequestError, describeWait, modelShown, waitSummary } from '../../lib/logWords';
import { describeStream } from '../../lib/streamWords';
import { describeRetry } from '../../lib/retryWords';
import { translationLabel } from '../../lib/translation';
import { describeAffinity, describeLease, SESSION_SOURCE_LABELS, shortSession } from '../../lib/sessionWords';
import type { ComboTrace, RequestLogEntry, SkipReason } from '../../../shared/model';
import type { LogStatusClass } from '../../../shared/logQuery';
import { isFiltered, REQUEST_ID_RE, type LogFilter, type LogRange } from '../../stores/logsStore';

const PROTOCOL_LABEL: Record<RequestLogEntry['protocol'], string> = {
  'anthropic-messages': 'Messages',
  'anthropic-count-tokens': 'Count tokens',
  'openai-chat': 'Chat',
  'openai-responses': 'Responses',
  gemini: 'Gemini',
  'gemini-count-tokens': 'Gemini count tokens',
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

const capitalise = (t: string | null): string => (t ? t[0]!.toUpperCase() + t.slice(1) : '');

/** Every wait the request took before an attempt, or before walking its targets again, with why. */
function WaitDetails({ e }: { e: RequestLogEntry }) {
  if (!e.waits || e.waits.length === 0) return null;
  return (
    <>
      <h4>Waits</h4>
      <ul className="skip-list">
        {e.waits.map((w, i) => (
          <li key={i} data-testid="log-wait">
            {describeWait(w)}
            {w.attempt ? <span className="muted"> · before attempt {w.attempt}</span> : null}
          </li>
        ))}
      </ul>
    </>
  );
}

/** The model column: the model the client asked for, and the one served when they differ. */
function ModelCell({ e }: { e: RequestLogEntry }) {
  const m = modelShown(e);
  return (
    <td data-testid="log-model">
      <code className="mono">{m.requested ?? '—'}</code>
      {m.served && (
        <>
          {' '}
          <span aria-label="served as">→</span> <code className="mono">{m.served}</code>
        </>
      )}
      {e.stream && <span className="muted small"> stream</span>}
      <div className="muted small">
        {PROTOCOL_LABEL[e.protocol] ?? e.path}
        {e.combo && <> · via combo {e.combo.name}</>}
      </div>
    </td>
  );
}

/** Who served the request, or in plain words why no one did; and what it waited for. */
function ServedByCell({ e }: { e: RequestLogEntry }) {
  const waited = waitSummary(e.waits);
  const reason = e.connectionName ? null : describeRequestError(e.errorCode);
  return (
    <td data-testid="log-served-by">
      {e.connectionName ?? (
        <span className="muted">
          {reason ? capitalise(reason) : '—'}
          {e.errorCode && <TechName name={e.errorCode} />}
        </span>
      )}
      {routeTag(e) && <div className="muted small" data-testid="log-route-tag">{routeTag(e)}</div>}
      {waited && <div className="small warn-text" data-testid="log-wait-summary">{waited}</div>}
    </td>
  );
}

const STATUS_OPTIONS: { value: LogStatusClass; label: string }[] = [
  { value: 'ok', label: 'Succeeded' },
  { value: 'failed', label: 'Failed (any error)' },
  { value: 'rate_limited', label: 'Rate limited' },
  { value: 'client_error', label: 'Refused (request errors)' },
  { value: 'server_error', label: 'Server errors' },
  { value: 'cancelled', label: 'Cancelled by the client' },
];

const RANGE_OPTIONS: { value: LogRange; label: string; ms?: number }[] = [
  { value: 'all', label: 'Any time' },
  { value: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'Last hour', ms: 60 * 60_000 },
  { value: '24h', label: 'Last 24 hours', ms: 24 * 60 * 60_000 },
  { value: 'custom', label: 'Custom range' },
];

const pad = (n: number) => String(n).padStart(2, '0');
/** Epoch ms as a datetime-local value (local wall clock, to the second). */
function toLocalInput(at: number | null): string {
  if (at === null) return '';
  const d = new Date(at);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
function fromLocalInput(v: string): number | null {
  if (!v) return null;
  const t = new Date(v).getTime();
  return Number.isFinite(t) ? t : null;
}

/** Text or request-id search, the status class, the time range and the connection. */
function Filters({ filter, offset, set }: { filter: LogFilter; offset: number; set: (f: Partial<LogFilter>) => void }) {
  const d = useDashboard();
  const connections = useSel(d.connections, (s) => s.list);
  const [text, setText] = useState(filter.requestId ?? filter.search);
  const [custom, setCustom] = useState({ from: toLocalInput(filter.from === null ? null : filter.from - offset), to: toLocalInput(filter.to === null ? null : filter.to - offset) });
  const [rangeError, setRangeError] = useState<string | null>(null);

  // Typing settles for a moment before the engine is asked.
  useEffect(() => {
    const t = setTimeout(() => {
      const v = text.trim();
      if (REQUEST_ID_RE.test(v)) set({ requestId: v, search: '' });
      else set({ requestId: null, search: v });
    }, 250);
    return () => clearTimeout(t);
  }, [text, set]);

  const applyCustom = (next: { from: string; to: string }) => {
    setCustom(next);
    const from = fromLocalInput(next.from);
    const to = fromLocalInput(next.to);
    if (from !== null && to !== null && from > to) {
      setRangeError('The start of the range is after its end.');
      return;
    }
    setRangeError(null);
    set({ range: 'custom', from: from === null ? null : from + offset, to: to === null ? null : to + offset });
  };

  return (
    <div className="filters log-filters">
      <label className="inline-label">
        Search
        <input
          type="search"
          className="search"
          placeholder="Request id, model, connection, key or error"
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </label>
      <label className="inline-label">
        Status
        <select value={filter.status ?? ''} onChange={(e) => set({ status: (e.target.value || null) as LogStatusClass | null, errorsOnly: false })}>
          <option value="">Every status</option>
          {STATUS_OPTIONS.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
      <label className="inline-label">
        Time
        <select
          value={filter.range}
          onChange={(e) => {
            const r = RANGE_OPTIONS.find((o) => o.value === e.target.value) ?? RANGE_OPTIONS[0]!;
            setRangeError(null);
            if (r.value === 'custom') applyCustom(custom);
            else set({ range: r.value, from: r.ms ? Date.now() + offset - r.ms : null, to: null });
          }}
        >
          {RANGE_OPTIONS.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
      {filter.range === 'custom' && (
        <>
          <label className="inline-label">
            From
            <input type="datetime-local" step={1} value={custom.from} onChange={(e) => applyCustom({ ...custom, from: e.target.value })} />
          </label>
          <label className="inline-label">
            To
            <input type="datetime-local" step={1} value={custom.to} onChange={(e) => applyCustom({ ...custom, to: e.target.value })} />
          </label>
          {rangeError && (
            <span className="danger-text small" role="alert">
              {rangeError}
            </span>
          )}
        </>
      )}
      <label className="inline-label">
        Connection
        <select value={filter.connectionId ?? ''} onChange={(e) => set({ connectionId: e.target.value || null })}>
          <option value="">All connections</option>
          {connections.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

function Details({ e, now }: { e: RequestLogEntry; now: number }) {
  return (
    <div className="log-details">
      {(e.errorMessage || e.errorCode) && (
        <div className="callout callout-danger" data-testid="log-error">
          {e.errorCode && (
            <>
              <strong>{capitalise(describeRequestError(e.errorCode))}.</strong> <TechName name={e.errorCode} />{' '}
            </>
          )}
          {e.errorMessage}
        </div>
      )}
      <WaitDetails e={e} />
      {cacheText(e) && (
        <p className="small" data-testid="log-cache">
          {cacheText(e)}
          {e.costUsd != null && <> Estimated cost {formatUsd(e.costUsd)}, from the <a href={hrefOf('prices')}>price list</a> when the request finished.</>}
        </p>
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
  const offset = useSel(d.app, (s) => s.clockOffsetMs);
  const store = d.logs.getState();
  const setFilter = useCallback((f: Partial<LogFilter>) => void d.logs.getState().setFilter(f), [d.logs]);
  const filtered = isFiltered(filter);

  return (
    <div className="page">
      <PageHeader
        title="Request log"
        description="Every request through the proxy: the model asked for and the one served, the client key that sent it, which connection served it, what it waited for and why, each attempt, and why other connections were skipped."
        actions={link === 'open' ? <Badge tone="ok" dot>Live</Badge> : <Badge tone="warn" dot>Paused until reconnected</Badge>}
      />
      <Filters filter={filter} offset={offset} set={setFilter} />
      {loading && <Spinner label="Loading requests" />}
      {!loaded ? (
        <LoadState topics="logs" what="requests" />
      ) : entries.length === 0 ? (
        <EmptyState title={filtered ? 'No request matches' : 'No requests yet'}>
          {filtered
            ? 'Change the filters to see more.'
            : 'Requests appear here as your agents send them, live.'}
        </EmptyState>
      ) : (
        <Card>
          <DataTable label="Requests" columns={[DETAILS_COLUMN, 'Time', 'Status', 'Model', 'Client key', 'Request id', 'Served by', 'Attempts', 'Duration', 'Tokens']} className="log-table">
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
                    <ModelCell e={e} />
                    <td data-testid="log-key">
                      {e.clientKeyName ?? <span className="muted">{e.clientKeyId ? 'unknown key' : 'none'}</span>}
                      {e.clientKeyRevoked && <div className="muted small">revoked since</div>}
                    </td>
                    <td data-testid="log-request-id">
                      <code className="mono small" data-tech-name>
                        {e.id}
                      </code>
                    </td>
                    <ServedByCell e={e} />
                    <td className="tabular">
                      {e.attempts.length}
                      {failovers > 0 && <span className="warn-text small"> · {failovers} failover{failovers > 1 ? 's' : ''}</span>}
                      {e.skipped.length > 0 && <span className="muted small"> · {e.skipped.length} skipped</span>}
                    </td>
                    <td className="tabular nowrap">
                      {formatMs(e.durationMs)}
                      {e.ttfbMs !== null && <div className="muted small">first byte {formatMs(e.ttfbMs)}</div>}
                    </td>
                    <td className="tabular nowrap" data-testid="log-tokens">
                      {tokensText(e) ?? '—'}
                      {e.model && e.costUsd === null && e.status < 400 && (e.inputTokens !== null || e.outputTokens !== null) && (
                        <div className="muted small">
                          no price for this model (<a href={hrefOf('prices')}>Prices</a>)
                        </div>
                      )}
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
