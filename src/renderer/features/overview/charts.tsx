// The Overview's charts, drawn with uPlot (components/charts/UPlotChart.tsx): requests and errors
// over time, latency percentiles over time, tokens and cost per model (bars), and each
// connection's cooldowns and breaker states as horizontal spans. The data arrays come from the
// pure helpers in lib/overview.ts; this file only builds uPlot's options.
import { useMemo } from 'react';
import uPlot from 'uplot';
import { UPlotChart } from '../../components/charts/UPlotChart';
import { formatMs } from '../../lib/format';
import {
  describeRequests,
  formatTokens,
  formatUsd,
  hasLatency,
  hasTraffic,
  latencyData,
  modelBars,
  requestsData,
  SPAN_WORDS,
  timelineRows,
  type TimelineRow,
} from '../../lib/overview';
import type { StateSpanKind, StateTimelineView, UsageReport } from '../../../shared/usage';

/** A colour from the stylesheet (light or dark theme), read when a chart is built. */
function cssColor(name: string, fallback: string): string {
  if (typeof document === 'undefined') return fallback;
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

const axis = (o: Partial<uPlot.Axis> = {}): uPlot.Axis => ({
  stroke: cssColor('--muted', '#5c6673'),
  grid: { stroke: cssColor('--border', '#e2e5ea'), width: 1 },
  ticks: { stroke: cssColor('--border', '#e2e5ea'), width: 1 },
  ...o,
});

const NO_TRAFFIC = 'No requests in this period yet.';

export function RequestsChart({ report }: { report: UsageReport }) {
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(
    () => ({
      scales: { x: { time: true } },
      axes: [axis(), axis({ values: (_u, v) => v.map((n) => (Number.isInteger(n) ? String(n) : '')) })],
      series: [
        {},
        { label: 'Requests', stroke: cssColor('--accent', '#3b5bdb'), fill: 'rgba(59, 91, 219, 0.12)', width: 2, points: { show: false } },
        { label: 'Errors', stroke: cssColor('--danger', '#c0262d'), width: 2, points: { show: false } },
      ],
    }),
    [],
  );
  const data = useMemo(() => requestsData(report), [report]);
  return (
    <UPlotChart
      testId="chart-requests"
      label={`Requests and errors over time: ${describeRequests(report)}`}
      caption="Requests and errors over time"
      options={options}
      data={data as uPlot.AlignedData}
      empty={hasTraffic(report) ? null : NO_TRAFFIC}
    />
  );
}

export function LatencyChart({ report }: { report: UsageReport }) {
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => {
    const ms = (_u: uPlot, v: (number | null)[]) => v.map((n) => formatMs(n));
    const accent = cssColor('--accent', '#3b5bdb');
    const info = cssColor('--warn', '#a75a06');
    return {
      scales: { x: { time: true } },
      axes: [axis(), axis({ values: ms, size: 64 })],
      series: [
        {},
        { label: 'First output, median', stroke: accent, width: 2, value: (_u, v) => formatMs(v), points: { show: false } },
        { label: 'First output, 95th', stroke: accent, width: 1, dash: [6, 4], value: (_u, v) => formatMs(v), points: { show: false } },
        { label: 'Total, median', stroke: info, width: 2, value: (_u, v) => formatMs(v), points: { show: false } },
        { label: 'Total, 95th', stroke: info, width: 1, dash: [6, 4], value: (_u, v) => formatMs(v), points: { show: false } },
      ],
    };
  }, []);
  const data = useMemo(() => latencyData(report), [report]);
  const t = report.totals;
  return (
    <UPlotChart
      testId="chart-latency"
      label={`Latency over time: time to first output median ${formatMs(t.ttfbMs.p50)}, total time median ${formatMs(t.durationMs.p50)}`}
      caption="Latency over time (median and 95th percentile)"
      options={options}
      data={data as uPlot.AlignedData}
      empty={hasLatency(report) ? null : 'No answered requests in this period yet.'}
    />
  );
}

export function ModelChart({ report }: { report: UsageReport }) {
  const bars = useMemo(() => modelBars(report), [report]);
  const key = bars.labels.join('\n');
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => {
    const labels = key ? key.split('\n') : [];
    const barsOf = (align: -1 | 1) => uPlot.paths.bars!({ size: [0.35, 60], align, gap: 2 });
    return {
      scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] }, tokens: {}, usd: {} },
      axes: [
        axis({ splits: () => labels.map((_, i) => i), values: (_u, v) => v.map((i) => labels[i] ?? ''), grid: { show: false }, size: 40 }),
        axis({ scale: 'tokens', values: (_u, v) => v.map((n) => formatTokens(n)) }),
        axis({ scale: 'usd', side: 1, grid: { show: false }, values: (_u, v) => v.map((n) => formatUsd(n)), size: 70 }),
      ],
      series: [
        { value: (_u, i) => (i === null ? '' : (labels[i] ?? '')) },
        { label: 'Tokens', scale: 'tokens', fill: cssColor('--accent', '#3b5bdb'), stroke: cssColor('--accent', '#3b5bdb'), paths: barsOf(-1), points: { show: false }, value: (_u, v) => (v === null ? '—' : formatTokens(v)) },
        { label: 'Estimated cost', scale: 'usd', fill: cssColor('--ok', '#16794a'), stroke: cssColor('--ok', '#16794a'), paths: barsOf(1), points: { show: false }, value: (_u, v) => (v === null ? '—' : formatUsd(v)) },
      ],
    };
  }, [key]);
  const described = bars.labels.map((l, i) => `${l}: ${formatTokens(bars.data[1][i] ?? 0)} tokens, ${formatUsd(bars.data[2][i] ?? 0)}`).join('; ');
  return (
    <UPlotChart
      testId="chart-models"
      label={bars.labels.length ? `Tokens and estimated cost per model: ${described}` : 'Tokens and estimated cost per model'}
      caption="Tokens and estimated cost per model"
      options={options}
      data={bars.data as uPlot.AlignedData}
      empty={bars.labels.length ? null : NO_TRAFFIC}
    />
  );
}

const SPAN_COLORS: Record<StateSpanKind, [string, string]> = {
  cooldown: ['--warn', '#a75a06'],
  'breaker-open': ['--danger', '#c0262d'],
  'breaker-half-open': ['--info', '#1b67ad'],
  lockout: ['--accent', '#3b5bdb'],
  terminal: ['--danger', '#c0262d'],
  disabled: ['--faint', '#8a94a1'],
};

const ROW_PX = 30;

/** Each connection's held periods as horizontal spans over the range (uPlot draws the axes, a draw hook the spans). */
export function TimelineChart({ view, report, error }: { view: StateTimelineView | null; report: UsageReport; error: string | null }) {
  const rows = useMemo(() => timelineRows(view, report.from, report.to), [view, report.from, report.to]);
  // The spans are drawn by the options' hook, so new spans build a new plot (at most one per re-read).
  const options = useMemo<Omit<uPlot.Options, 'width' | 'height'>>(() => {
    const names = rows.map((r) => r.name);
    const n = names.length;
    const colors = Object.fromEntries(Object.entries(SPAN_COLORS).map(([k, [v, f]]) => [k, cssColor(v, f)])) as Record<StateSpanKind, string>;
    return {
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: true }, y: { range: [0, Math.max(1, n)] } },
      axes: [
        axis(),
        axis({ splits: () => names.map((_, i) => n - i - 0.5), values: (_u, v) => v.map((y) => names[Math.round(n - y - 0.5)] ?? ''), grid: { show: false }, size: 110 }),
      ],
      series: [{}, { show: false }],
      hooks: {
        draw: [
          (u: uPlot) => {
            const all: TimelineRow[] = rows;
            const c = u.ctx;
            c.save();
            all.forEach((row, i) => {
              const yTop = u.valToPos(n - i - 0.15, 'y', true);
              const yBot = u.valToPos(n - i - 0.85, 'y', true);
              for (const b of row.bars) {
                const x0 = u.valToPos(b.from / 1000, 'x', true);
                const x1 = Math.max(x0 + 2, u.valToPos(b.to / 1000, 'x', true));
                c.fillStyle = colors[b.kind];
                c.globalAlpha = b.kind === 'breaker-half-open' || b.kind === 'disabled' ? 0.6 : 0.85;
                c.fillRect(x0, yTop, x1 - x0, yBot - yTop);
              }
            });
            c.restore();
          },
        ],
      },
    };
  }, [rows]);
  const data = useMemo(() => [[report.from / 1000, report.to / 1000], [null, null]] as uPlot.AlignedData, [report.from, report.to]);
  const label = rows.length
    ? `Cooldowns and breaker states per connection: ${rows.map((r) => `${r.name}: ${r.bars.map((b) => SPAN_WORDS[b.kind].toLowerCase()).join(', ')}`).join('; ')}`
    : 'Cooldowns and breaker states per connection';
  const empty = error ? `Could not load the state timeline: ${error}` : rows.length ? null : 'No connection was held back in this period.';
  return (
    <>
      <UPlotChart
        testId="chart-timeline"
        label={label}
        caption="Cooldowns and breaker states per connection"
        options={options}
        data={data}
        height={40 + ROW_PX * Math.max(1, rows.length)}
        empty={empty}
      />
      {rows.length > 0 && (
        <ul className="chart-legend" aria-label="What the colours mean">
          {(Object.keys(SPAN_WORDS) as StateSpanKind[]).map((k) => (
            <li key={k}>
              <span className="chart-swatch" style={{ background: cssColor(SPAN_COLORS[k][0], SPAN_COLORS[k][1]) }} aria-hidden="true" />
              {SPAN_WORDS[k]}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
