// The usage report and the exports through the real engine: a known mix of requests sent with the
// real OpenAI and Anthropic clients through the proxy to the fake upstream (successes, a failover
// that rescues a request, an error), then every figure of getUsage checked against what was sent,
// the roll-ups against the raw log rows, and the CSV / JSON exports over HTTP with the token.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView, RequestLogEntry } from '../../../src/shared/model';
import type { UsageReport } from '../../../src/shared/usage';
import { emptyHist, histBucket, percentiles } from '../../../src/main/engine/usage/histogram';
import { FakeUpstream } from '../../support/fakeUpstream';
import { ONE_ANSWER_ENV, startTestEngine, type TestEngine } from '../../support/harness';
import { rawRequest } from '../management/http';

describe('usage through the proxy', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  let a: ConnectionView;
  let b: ConnectionView;
  let c: ConnectionView;
  let logged: RequestLogEntry[];
  let report: UsageReport;
  let keyName: string;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine({ env: ONE_ANSWER_ENV });
    a = await t.addConnection({ name: 'OpenAI A', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-aaaaaaaaaaaaaaaa', priority: 1 });
    b = await t.addConnection({ name: 'OpenAI B', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-bbbbbbbbbbbbbbbb', priority: 2 });
    c = await t.addConnection({ name: 'Claude C', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-cccccccccccc', priority: 1 });
    keyName = (await t.api.listClientKeys())[0]!.name;
    const openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const chat = () => openai.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] });

    // 3 successes on A (9 in / 6 out each), 2 on C (12 in / 7 out each).
    for (let i = 0; i < 3; i++) await chat();
    for (let i = 0; i < 2; i++) await anthropic.messages.create({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    // An error: A refuses the request as malformed (not failed over).
    fake.script({ key: 'sk-aaaaaaaaaaaaaaaa' }, [{ status: 400, json: { error: { type: 'invalid_request_error', message: 'bad request' } } }], { repeatLast: false });
    await expect(chat()).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    // A failover: A answers 503, B serves: rescued.
    fake.script({ key: 'sk-aaaaaaaaaaaaaaaa' }, [{ status: 503, json: { error: { type: 'server_error', message: 'overloaded' } } }], { repeatLast: false });
    await chat();
    expect(fake.requests.map((r) => r.key).slice(-2)).toEqual(['sk-aaaaaaaaaaaaaaaa', 'sk-bbbbbbbbbbbbbbbb']);

    report = await t.api.getUsage({ range: 'hour' });
    logged = (await t.api.listLogs({ limit: 100 })).entries;
  });
  afterAll(async () => {
    await t?.stop();
    await fake?.close();
  });

  it('counts every figure of what was sent', () => {
    expect(logged).toHaveLength(7);
    const tt = report.totals;
    expect([tt.requests, tt.successes, tt.errors, tt.rescued]).toEqual([7, 6, 1, 1]);
    expect([tt.inputTokens, tt.outputTokens]).toEqual([4 * 9 + 2 * 12, 4 * 6 + 2 * 7]);
    // Cost and cache tokens: whatever the log recorded for these requests (the price catalogue's job).
    const sum = (f: (e: RequestLogEntry) => number) => logged.reduce((x, e) => x + f(e), 0);
    expect(tt.cacheReadTokens).toBe(sum((e) => e.cacheReadTokens ?? 0));
    expect(tt.cacheWriteTokens).toBe(sum((e) => e.cacheWriteTokens ?? 0));
    expect(tt.costUsd).toBeCloseTo(sum((e) => e.costUsd ?? 0), 6);
    expect(tt.unpricedRequests).toBe(logged.filter((e) => e.costUsd == null).length);
    expect(report.series.reduce((x, p) => x + p.requests, 0)).toBe(7);
    expect(report.series.reduce((x, p) => x + p.errors, 0)).toBe(1);
  });

  it('reads latency percentiles from the successful requests of the log', () => {
    const ok = logged.filter((e) => e.status === 200);
    const ttfb = emptyHist();
    const dur = emptyHist();
    for (const e of ok) {
      if (e.ttfbMs != null) ttfb[histBucket(e.ttfbMs)]!++;
      if (e.durationMs != null) dur[histBucket(e.durationMs)]!++;
    }
    expect(report.totals.ttfbMs).toEqual(percentiles(ttfb));
    expect(report.totals.durationMs).toEqual(percentiles(dur));
    expect(report.totals.durationMs.p50).not.toBeNull();
  });

  it('breaks the figures down by connection, provider, model, combo and client key', () => {
    const rows = (dim: keyof UsageReport['breakdown']) =>
      report.breakdown[dim].map((r) => [r.label, r.requests, r.errors, r.rescued, r.inputTokens]).sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    expect(rows('connection')).toEqual([
      ['Claude C', 2, 0, 0, 24],
      ['OpenAI A', 4, 1, 0, 27],
      ['OpenAI B', 1, 0, 1, 9],
    ]);
    expect(report.breakdown.connection.find((r) => r.label === 'OpenAI A')!.key).toBe(a.id);
    expect(report.breakdown.connection.find((r) => r.label === 'OpenAI B')!.key).toBe(b.id);
    expect(rows('provider')).toEqual(
      [
        [c.provider, 2, 0, 0, 24],
        [a.provider, 5, 1, 1, 36],
      ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
    );
    expect(rows('model')).toEqual([
      ['claude-x', 2, 0, 0, 24],
      ['gpt-x', 5, 1, 1, 36],
    ]);
    expect(rows('combo')).toEqual([['(no combo)', 7, 1, 1, 60]]);
    expect(rows('clientKey')).toEqual([[keyName, 7, 1, 1, 60]]);
  });

  it('answers every range, and refuses an unknown one in plain words', async () => {
    for (const range of ['day', 'week', 'month'] as const) {
      const r = await t.api.getUsage({ range });
      expect(r.totals).toEqual(report.totals);
      expect(r.range).toBe(range);
    }
    expect((await t.api.getUsage()).range).toBe('day');
    const bad = await rawRequest(t.managementUrl, { path: '/api/usage?range=year', headers: { authorization: `Bearer ${t.token}` } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.field).toBe('range');
  });

  describe('export', () => {
    const get = (path: string, token: string | null = t.token) =>
      rawRequest(t.managementUrl, { path, headers: token ? { authorization: `Bearer ${token}` } : {} });
    const range = () => {
      const times = logged.map((e) => e.startedAt);
      return { from: Math.min(...times), to: Math.max(...times) };
    };

    it('needs the management token', async () => {
      const { from, to } = range();
      expect((await get(`/api/export/usage?from=${from}&to=${to}`, null)).status).toBe(401);
      expect((await get(`/api/export/logs?from=${from}&to=${to}`, 'wrong-token')).status).toBe(401);
    });

    it('downloads the request log of a range as CSV, oldest first', async () => {
      const { from, to } = range();
      const res = await get(`/api/export/logs?from=${from}&to=${to}&format=csv`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/csv/);
      const stamp = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace(':', '-');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="switchyard-logs-${stamp(from)}Z--${stamp(to)}Z.csv"`);
      const lines = res.text.trimEnd().split('\r\n');
      expect(lines[0]!.split(',').slice(0, 3)).toEqual(['id', 'startedAt', 'status']);
      expect(lines).toHaveLength(8);
      expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(logged.map((e) => e.id).reverse());
      expect(lines.filter((l) => l.split(',')[2] === '400')).toHaveLength(1);
    });

    it('honours the range and answers JSON', async () => {
      const sorted = [...logged].sort((x, y) => x.startedAt - y.startedAt);
      const from = sorted[3]!.startedAt;
      const to = sorted.at(-1)!.startedAt;
      const res = await get(`/api/export/logs?from=${new Date(from).toISOString()}&to=${to}&format=json`);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['content-disposition']).toMatch(/^attachment; filename="switchyard-logs-.*\.json"$/);
      const body = JSON.parse(res.text) as { entries: RequestLogEntry[]; truncated: boolean };
      expect(body.truncated).toBe(false);
      expect(body.entries.map((e) => e.id).sort()).toEqual(logged.filter((e) => e.startedAt >= from).map((e) => e.id).sort());
      const empty = await get(`/api/export/logs?from=${to + 60_000}&to=${to + 120_000}`);
      expect(empty.text.trimEnd().split('\r\n')).toHaveLength(1);
    });

    it('downloads the usage roll-up rows of a range as CSV and JSON', async () => {
      const { from, to } = range();
      const start = Math.floor(from / 60_000) * 60_000;
      const csv = await get(`/api/export/usage?from=${start}&to=${to + 1}&format=csv`);
      expect(csv.status).toBe(200);
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
      expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="switchyard-usage-.*\.csv"$/);
      const [header, ...rows] = csv.text.trimEnd().split('\r\n');
      expect(header!.split(',').slice(0, 6)).toEqual(['bucketStart', 'grain', 'dimension', 'key', 'label', 'requests']);
      const all = rows.map((r) => r.split(',')).filter((r) => r[2] === 'all');
      expect(all.reduce((x, r) => x + Number(r[5]), 0)).toBe(7);
      expect(all.every((r) => r[1] === 'minute')).toBe(true);
      const json = await get(`/api/export/usage?from=${start}&to=${to + 1}&format=json&grain=hour`);
      const body = JSON.parse(json.text) as { grain: string; rows: { dimension: string; label: string; requests: number }[] };
      expect(body.grain).toBe('hour');
      expect(body.rows.filter((r) => r.dimension === 'all').reduce((x, r) => x + r.requests, 0)).toBe(7);
      expect(body.rows.find((r) => r.dimension === 'connection' && r.label === 'OpenAI B')).toMatchObject({ requests: 1 });
      // Before the first request: nothing.
      const none = await get(`/api/export/usage?from=${start - 3_600_000}&to=${start}&format=json`);
      expect((JSON.parse(none.text) as { rows: unknown[] }).rows).toEqual([]);
      const bad = await get(`/api/export/usage?from=${to}&to=${from - 1}`);
      expect(bad.status).toBe(400);
      expect(bad.json.error.message).toContain('the start of the time range is after its end');
    });

    it('gives the dashboard the same file through the contract', async () => {
      const { from, to } = range();
      const file = await t.api.exportLogs({ from, to, format: 'json' });
      expect(file.filename).toMatch(/^switchyard-logs-.*\.json$/);
      expect(file.contentType).toMatch(/^application\/json/);
      expect(file.rows).toBe(7);
      expect((JSON.parse(file.body) as { entries: unknown[] }).entries).toHaveLength(7);
    });
  });
});
