// The Overview's pure helpers: figures in words (with the unpriced caveat), a report's series
// filled per bucket and turned into uPlot's columns, the per-model bars, the state timeline
// clipped to the period, the export's address and file name, and the landing rule.
import { describe, expect, it } from 'vitest';
import { exportFailure, exportFileName, exportPath, fetchExport } from '../../../src/renderer/lib/exportDownload';
import {
  fillSeries,
  formatTokens,
  formatUsd,
  hasLatency,
  hasTraffic,
  headlineFigures,
  latencyData,
  modelBars,
  requestsData,
  timelineRows,
} from '../../../src/renderer/lib/overview';
import { landingPage, pageFromHash } from '../../../src/renderer/hooks/useRoute';
import { findJargon } from '../../e2e/jargon';
import { usagePoint, usageReport, usageRow, usageTotals } from './builders';

const MIN = 60_000;
/** The last hour ending at minute 100 (buckets of one minute). */
const hour = (p: Parameters<typeof usageReport>[0] = {}) => usageReport({ range: 'hour', to: 100 * MIN, ...p });

describe('figures', () => {
  it('puts the totals in words, with the requests that had no price', () => {
    const figs = headlineFigures(
      usageTotals({
        requests: 1200,
        successes: 1170,
        errors: 30,
        rescued: 12,
        inputTokens: 1_234_567,
        outputTokens: 45_600,
        costUsd: 3.456,
        unpricedRequests: 7,
        ttfbMs: { p50: 420, p95: 1_800 },
        durationMs: { p50: 2_500, p95: 12_000 },
      }),
    );
    const by = Object.fromEntries(figs.map((f) => [f.id, f]));
    expect(by.requests).toMatchObject({ value: '1,200', detail: '30 failed' });
    expect(by.success?.value).toBe('97.5%');
    expect(by.rescued?.value).toBe('12');
    expect(by.tokens?.value).toBe('1.2M / 46k');
    expect(by.cost).toMatchObject({ value: '$3.46', detail: '7 requests without a price' });
    expect(by.ttfb?.value).toBe('420 ms / 1.80 s');
    expect(by.duration?.value).toBe('2.50 s / 12.0 s');
    for (const f of figs) expect(findJargon(`${f.label} ${f.value} ${f.detail ?? ''}`)).toEqual([]);
  });

  it('with no requests: a dash for the rate and latency, no price caveat', () => {
    const by = Object.fromEntries(headlineFigures(usageTotals()).map((f) => [f.id, f]));
    expect(by.success?.value).toBe('—');
    expect(by.cost).toEqual({ id: 'cost', label: 'Estimated cost', value: '$0.00', detail: undefined });
    expect(by.ttfb?.value).toBe('— / —');
    expect(headlineFigures(usageTotals({ requests: 1, successes: 1, unpricedRequests: 1 })).find((f) => f.id === 'cost')?.detail).toBe('1 request without a price');
  });

  it('formats tokens and dollars compactly', () => {
    expect([0, 999, 1_000, 12_345, 999_999, 4_500_000, 2_000_000_000].map(formatTokens)).toEqual(['0', '999', '1k', '12k', '1M', '4.5M', '2B']);
    expect([0, 0.00421, 0.5, 12.345, 4_321.9].map(formatUsd)).toEqual(['$0.00', '$0.0042', '$0.50', '$12.35', '$4,322']);
  });
});

describe('series for uPlot', () => {
  it('fills the buckets the engine left out with zero requests and no latency, x in seconds', () => {
    const r = hour({
      series: [
        usagePoint({ t: 41 * MIN, requests: 3, errors: 1, ttfbMs: { p50: 200, p95: 400 }, durationMs: { p50: 900, p95: 1_500 } }),
        usagePoint({ t: 99 * MIN, requests: 1 }),
      ],
    });
    const pts = fillSeries(r);
    expect(pts).toHaveLength(61); // minute 40 through minute 100
    expect(pts[0]!.t).toBe(40 * MIN);
    const [x, req, err] = requestsData(r);
    expect(x.slice(0, 3)).toEqual([2_400, 2_460, 2_520]);
    expect(req.slice(0, 3)).toEqual([0, 3, 0]);
    expect(err.slice(0, 3)).toEqual([0, 1, 0]);
    expect(req[59]).toBe(1);
    const [, t50, t95, d50, d95] = latencyData(r);
    expect([t50[1], t95[1], d50[1], d95[1]]).toEqual([200, 400, 900, 1_500]);
    expect([t50[0], d95[2]]).toEqual([null, null]);
    expect(hasTraffic(r)).toBe(true);
    expect(hasLatency(r)).toBe(true);
  });

  it('an empty report has nothing to draw', () => {
    expect(hasTraffic(hour())).toBe(false);
    expect(hasLatency(hour())).toBe(false);
    expect(hasTraffic(null)).toBe(false);
  });

  it('never builds more than a bounded number of buckets', () => {
    expect(fillSeries({ from: 0, to: 1e12, bucketMs: 1, series: [] }).length).toBeLessThanOrEqual(5_000);
  });

  it('bars per model: the busiest first, tokens in + out, cost', () => {
    const r = hour({
      breakdown: {
        connection: [],
        provider: [],
        combo: [],
        clientKey: [],
        model: [
          usageRow({ key: 'small', requests: 9, inputTokens: 100, outputTokens: 50, costUsd: 0.01 }),
          usageRow({ key: 'big', label: 'claude-big', requests: 2, inputTokens: 9_000, outputTokens: 1_000, costUsd: 1.5 }),
          usageRow({ key: 'idle', requests: 0 }),
        ],
      },
    });
    const b = modelBars(r);
    expect(b.labels).toEqual(['claude-big', 'small']);
    expect(b.data).toEqual([
      [0, 1],
      [10_000, 150],
      [1.5, 0.01],
    ]);
  });
});

describe('state timeline', () => {
  it('clips spans to the period, runs a span that still holds to its end, and leaves out rows without spans', () => {
    const rows = timelineRows(
      {
        from: 0,
        to: 0,
        connections: [
          {
            connectionId: 'b',
            name: 'Beta',
            spans: [
              { kind: 'cooldown', from: 10, to: 30, reason: 'rate limited' },
              { kind: 'breaker-open', from: 90, to: null, reason: 'failing' },
              { kind: 'lockout', from: 1, to: 5, reason: 'before the period' },
            ],
          },
          { connectionId: 'a', name: 'Alpha', spans: [{ kind: 'terminal', from: 0, to: 200, reason: 'key rejected' }] },
          { connectionId: 'c', name: 'Calm', spans: [] },
        ],
      },
      8,
      100,
    );
    expect(rows.map((r) => r.name)).toEqual(['Alpha', 'Beta']);
    expect(rows[0]!.bars).toEqual([{ kind: 'terminal', from: 8, to: 100, open: true, reason: 'key rejected' }]);
    expect(rows[1]!.bars).toEqual([
      { kind: 'cooldown', from: 10, to: 30, open: false, reason: 'rate limited' },
      { kind: 'breaker-open', from: 90, to: 100, open: true, reason: 'failing' },
    ]);
    expect(timelineRows(null, 0, 1)).toEqual([]);
  });
});

describe('export', () => {
  const range = { from: Date.UTC(2025, 0, 1, 12, 0), to: Date.UTC(2025, 0, 2, 12, 0) };

  it('asks the export route for the range and format', () => {
    expect(exportPath('usage', range, 'csv')).toBe(`/api/export/usage?from=${range.from}&to=${range.to}&format=csv`);
    expect(exportPath('logs', range, 'json')).toBe(`/api/export/logs?from=${range.from}&to=${range.to}&format=json`);
  });

  it("names the file after the engine's name, else after the range", () => {
    expect(exportFileName('logs', range, 'json', 'attachment; filename="log-a.json"')).toBe('log-a.json');
    expect(exportFileName('usage', range, 'csv', null)).toBe('switchyard-usage-20250101-1200-20250102-1200.csv');
    expect(exportFileName('logs', range, 'json')).toBe('switchyard-request-log-20250101-1200-20250102-1200.json');
  });

  it('a missing export route is a clear error, not a stack trace', async () => {
    const f = (async () => new Response('{"error":{"code":"not_found","message":"no route"}}', { status: 404 })) as unknown as typeof fetch;
    await expect(fetchExport('usage', range, 'csv', { fetch: f })).rejects.toThrow('Could not export usage: this Switchyard does not offer that export.');
    const down = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    await expect(fetchExport('logs', range, 'csv', { fetch: down })).rejects.toThrow('Could not export the request log: Switchyard is not reachable');
    expect(exportFailure('usage', 500, 'disk full')).toBe('Could not export usage: disk full');
  });

  it('sends the token when given and returns the file', async () => {
    let seen: { url: string; init?: RequestInit } | null = null;
    const f = (async (url: string, init?: RequestInit) => {
      seen = { url, init };
      return new Response('a,b\n1,2\n', { status: 200, headers: { 'content-type': 'text/csv' } });
    }) as unknown as typeof fetch;
    const file = await fetchExport('usage', range, 'csv', { baseUrl: 'http://127.0.0.1:9/', token: 'tok', fetch: f });
    expect(seen!.url).toBe(`http://127.0.0.1:9/api/export/usage?from=${range.from}&to=${range.to}&format=csv`);
    expect((seen!.init?.headers as Record<string, string>).authorization).toBe('Bearer tok');
    expect(await file.blob.text()).toBe('a,b\n1,2\n');
  });
});

describe('landing', () => {
  it('an address without a page lands on the Overview once a connection exists, agent setup before', () => {
    expect(pageFromHash('')).toBeNull();
    expect(pageFromHash('#/nowhere')).toBeNull();
    expect(pageFromHash('#/overview')).toBe('overview');
    expect(landingPage({ loaded: false, count: 0, failed: false })).toBeNull();
    expect(landingPage({ loaded: true, count: 0, failed: false })).toBe('agent');
    expect(landingPage({ loaded: true, count: 2, failed: false })).toBe('overview');
    expect(landingPage({ loaded: false, count: 0, failed: true })).toBe('agent');
  });
});
