// The Overview, the landing page once a connection exists: for the chosen period (last hour, day,
// week or month) the headline figures (requests, success rate, requests rescued, tokens, estimated
// cost, latency), the charts, the breakdowns by connection, provider, model, combo and client key,
// what is held back right now with the time it lifts (the health model), the Claude subscription
// windows, and the exports. Usage re-reads as requests finish (usageStore.ts, throttled).
import { useEffect, useState } from 'react';
import { DataTable } from '../../components/DataTable';
import { LoadState } from '../../components/LoadState';
import { Tabs } from '../../components/Tabs';
import { Badge, Card, EmptyState, PageHeader } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { hrefOf } from '../../hooks/useRoute';
import { healthNow, heldTargets } from '../../lib/connectionState';
import { ExportError, exportThroughBridge, saveBlob, type ExportFormat, type ExportKind } from '../../lib/exportDownload';
import { formatClock, formatMs, formatRemaining } from '../../lib/format';
import { formatPercent, formatTokens, formatUsd, formatWhen, headlineFigures, RANGE_LABELS, successRate } from '../../lib/overview';
import { CLAUDE_KIND } from '../../../shared/model';
import { USAGE_DIMENSIONS, USAGE_RANGES, type UsageDimension, type UsageReport } from '../../../shared/usage';
import { UsageBar } from '../connections/ClaudeAccountPanel';
import { LatencyChart, ModelChart, RequestsChart, TimelineChart } from './charts';
import './overview.css';

const DIMENSION_LABELS: Record<UsageDimension, string> = {
  connection: 'Connection',
  provider: 'Provider',
  model: 'Model',
  combo: 'Combo',
  clientKey: 'Client key',
};

export function OverviewPage() {
  const d = useDashboard();
  const range = useSel(d.usage, (s) => s.range);
  const report = useSel(d.usage, (s) => s.report);
  const timeline = useSel(d.usage, (s) => s.timeline);
  const timelineError = useSel(d.usage, (s) => s.timelineError);
  const refreshError = useSel(d.usage, (s) => s.refreshError);
  const loading = useSel(d.usage, (s) => s.loading);
  useEffect(() => d.usage.getState().watch(), [d]);

  return (
    <div className="page">
      <PageHeader
        title="Overview"
        description="What your agents sent through Switchyard, what it cost, how fast it answered, and the requests Switchyard rescued by trying another connection."
        actions={<RangePicker value={range} onChange={(r) => void d.usage.getState().setRange(r)} busy={loading} />}
      />
      {report === null ? (
        <LoadState topics="usage" what="usage" />
      ) : (
        <OverviewBody report={report} timeline={timeline} timelineError={timelineError} refreshError={refreshError} />
      )}
    </div>
  );
}

function RangePicker({ value, onChange, busy }: { value: UsageReport['range']; onChange: (r: UsageReport['range']) => void; busy: boolean }) {
  return (
    <div className="range-picker" role="radiogroup" aria-label="Period" aria-busy={busy || undefined}>
      {USAGE_RANGES.map((r) => (
        <button key={r} type="button" role="radio" aria-checked={r === value} className={`btn btn-sm${r === value ? ' btn-primary' : ''}`} onClick={() => onChange(r)}>
          {RANGE_LABELS[r]}
        </button>
      ))}
    </div>
  );
}

function OverviewBody({
  report,
  timeline,
  timelineError,
  refreshError,
}: {
  report: UsageReport;
  timeline: Parameters<typeof TimelineChart>[0]['view'];
  timelineError: string | null;
  refreshError: string | null;
}) {
  const t = report.totals;
  return (
    <>
      {refreshError && (
        <p className="callout callout-info" role="status">
          Could not refresh these figures: {refreshError}. They are from {formatClock(report.to)}.
        </p>
      )}
      {t.requests === 0 && (
        <Card>
          <EmptyState title={`No requests in the ${RANGE_LABELS[report.range].toLowerCase()}`} action={<a className="btn btn-primary" href={hrefOf('agent')}>Connect your agent</a>}>
            Point your coding agent at Switchyard&apos;s address and its requests, tokens, cost and latency show up here as they finish.
          </EmptyState>
        </Card>
      )}
      <section className="figures" aria-label="Figures for the period" data-testid="overview-figures">
        {headlineFigures(t).map((f) => (
          <div key={f.id} className="figure" data-testid={`figure-${f.id}`}>
            <div className="figure-label">{f.label}</div>
            <div className="figure-value tabular">{f.value}</div>
            {f.detail && <div className="figure-detail">{f.detail}</div>}
          </div>
        ))}
      </section>
      <div className="chart-grid">
        <Card title="Requests and errors">
          <RequestsChart report={report} />
        </Card>
        <Card title="Latency">
          <LatencyChart report={report} />
        </Card>
        <Card title="Tokens and cost per model">
          <ModelChart report={report} />
        </Card>
        <Card title="Connection states">
          <TimelineChart view={timeline} report={report} error={timelineError} />
        </Card>
      </div>
      <Breakdown report={report} />
      <div className="chart-grid">
        <RightNow />
        <ClaudeWindows />
      </div>
      <ExportCard report={report} />
    </>
  );
}

function Breakdown({ report }: { report: UsageReport }) {
  const [dim, setDim] = useState<UsageDimension>('connection');
  const rows = report.breakdown[dim] ?? [];
  return (
    <Card title="Breakdown" description="The same figures for each connection, provider, model, combo or client key.">
      <Tabs label="Break down by" tabs={USAGE_DIMENSIONS.map((id) => ({ id, label: DIMENSION_LABELS[id] }))} value={dim} onChange={setDim}>
        {rows.length === 0 ? (
          <EmptyState title="Nothing to break down">No requests in this period.</EmptyState>
        ) : (
          <DataTable
            label={`Usage by ${DIMENSION_LABELS[dim].toLowerCase()}`}
            columns={[DIMENSION_LABELS[dim], 'Requests', 'Success rate', 'Rescued', 'Tokens in', 'Tokens out', 'Estimated cost', 'First output (median)', 'Total time (95th)']}
          >
            {rows.map((r) => (
              <tr key={r.key || '(none)'} data-testid="breakdown-row">
                <td>{r.label || <span className="muted">none</span>}</td>
                <td className="tabular">{r.requests.toLocaleString('en-US')}</td>
                <td className="tabular">{formatPercent(successRate(r))}</td>
                <td className="tabular">{r.rescued.toLocaleString('en-US')}</td>
                <td className="tabular">{formatTokens(r.inputTokens)}</td>
                <td className="tabular">{formatTokens(r.outputTokens)}</td>
                <td className="tabular">
                  {formatUsd(r.costUsd)}
                  {r.unpricedRequests > 0 && <div className="muted small">{r.unpricedRequests.toLocaleString('en-US')} without a price</div>}
                </td>
                <td className="tabular">{formatMs(r.ttfbMs.p50)}</td>
                <td className="tabular">{formatMs(r.durationMs.p95)}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </Tabs>
    </Card>
  );
}

const HOLD_WORDS: Record<string, string> = {
  terminal: 'Needs attention',
  breaker_open: 'Breaker open',
  provider_skipped: 'Provider skipped',
  key_hold: 'Held after a failure',
  ejected: 'Ejected',
  cooling: 'Cooling down',
  paused: 'Queue paused',
  locked: 'Model locked',
  model_paused: 'Model queue paused',
};

/** What is held back right now, from the health model the resilience push carries. */
function RightNow() {
  const d = useDashboard();
  const now = useServerNow();
  const held = heldTargets(healthNow(useSel(d.resilience, (s) => s.health), now), now);
  return (
    <Card title="Right now" description="What is cooling, locked or needs you, and when it lifts.">
      {held.length === 0 ? (
        <EmptyState title="Everything is serving">No connection or model is held back.</EmptyState>
      ) : (
        <ul className="held-list" data-testid="held-now">
          {held.map((h) => (
            <li key={`${h.connectionId}/${h.model ?? ''}/${h.kind}`} className="held-item">
              <Badge tone={h.kind === 'terminal' || h.kind === 'breaker_open' ? 'danger' : 'warn'}>{HOLD_WORDS[h.kind] ?? 'Held back'}</Badge>{' '}
              <strong>{h.name}</strong>
              {h.model && <span className="muted"> · {h.model}</span>}
              <div className="muted small">{h.reason}</div>
              <div className="small tabular">
                {h.until === null ? (
                  <a href={hrefOf(h.kind === 'terminal' ? 'connections' : 'cooldowns')}>Needs a person</a>
                ) : (
                  <>
                    Lifts in {formatRemaining(h.until - now)} (at {formatClock(h.until)})
                  </>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}

/** The Claude subscription accounts' 5-hour and 7-day windows, from the claude push. */
function ClaudeWindows() {
  const d = useDashboard();
  const now = useServerNow();
  const conns = useSel(d.connections, (s) => s.list);
  const accounts = useSel(d.claude, (s) => s.byConnection);
  const claude = conns.filter((c) => c.kind === CLAUDE_KIND);
  if (claude.length === 0) return null;
  return (
    <Card title="Claude subscriptions" description="How much of each account's 5-hour and 7-day allowance is used.">
      <ul className="held-list" data-testid="claude-windows">
        {claude.map((c) => {
          const u = accounts[c.id]?.usage ?? null;
          return (
            <li key={c.id} className="held-item">
              <strong>{c.name}</strong>
              <div className="usage-bars">
                <UsageBar label="5-hour" w={u?.fiveHour ?? null} now={now} />
                <UsageBar label="7-day" w={u?.sevenDay ?? null} now={now} />
              </div>
            </li>
          );
        })}
      </ul>
    </Card>
  );
}

function ExportCard({ report }: { report: UsageReport }) {
  const d = useDashboard();
  const [format, setFormat] = useState<ExportFormat>('csv');
  const [busy, setBusy] = useState<ExportKind | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (kind: ExportKind) => {
    setError(null);
    setBusy(kind);
    try {
      saveBlob(await exportThroughBridge(d.bridge, kind, { from: report.from, to: report.to }, format));
    } catch (err) {
      setError(err instanceof ExportError ? err.message : 'Could not export: something went wrong while saving the file.');
    } finally {
      setBusy(null);
    }
  };
  return (
    <Card title="Export" description={`Usage or every logged request of the ${RANGE_LABELS[report.range].toLowerCase()} (${formatWhen(report.from, report.to)} to ${formatWhen(report.to, report.to)}), as a file.`}>
      <div className="export-row">
        <label className="export-format">
          Format{' '}
          <select value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)} aria-label="Export format">
            <option value="csv">CSV</option>
            <option value="json">JSON</option>
          </select>
        </label>
        <button type="button" className="btn" disabled={busy !== null} onClick={() => void run('usage')}>
          {busy === 'usage' ? 'Exporting…' : 'Export usage'}
        </button>
        <button type="button" className="btn" disabled={busy !== null} onClick={() => void run('logs')}>
          {busy === 'logs' ? 'Exporting…' : 'Export request log'}
        </button>
      </div>
      {error && (
        <p className="field-error" role="alert" data-testid="export-error">
          {error}
        </p>
      )}
    </Card>
  );
}
