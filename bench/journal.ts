// The request log's crash journal (src/main/engine/logs/logJournal.ts): what it adds to one request
// at c=1. Each request writes its entry twice to the journal (a provisional line before the answer's
// end, the final line after), and every 250 ms the batch's segment is sealed. This times those
// writes for a typical entry (one attempt) in this process, on the data dir's file system, against
// the same work with no journal; the difference is the cost per request, to read beside the c=1
// p50 that `bench/run.ts` prints (the "upstream 0 ms, c=1" lines).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FileLogJournal, NO_JOURNAL, type LogJournal } from '../src/main/engine/logs/logJournal';
import type { RequestLogEntry } from '../src/shared/model';

const N = 20_000;
const BATCH = 50;

function entry(i: number): RequestLogEntry {
  return {
    id: `req_${i.toString(36).padStart(12, '0')}`,
    startedAt: 1_796_000_000_000 + i,
    protocol: 'openai-chat',
    path: '/v1/chat/completions',
    clientKeyId: 'key_01HZXK3V9Q',
    requestedModel: 'bench-delay-0',
    model: 'bench-delay-0',
    stream: false,
    status: 200,
    errorCode: null,
    errorMessage: null,
    connectionId: 'conn_01HZXK3V9Q',
    connectionName: 'bench',
    provider: 'bench',
    ttfbMs: 1,
    durationMs: 2,
    inputTokens: 9,
    outputTokens: 12,
    attempts: [
      {
        attempt: 1,
        connectionId: 'conn_01HZXK3V9Q',
        connectionName: 'bench',
        provider: 'bench',
        model: 'bench-delay-0',
        startedAt: 1_796_000_000_000 + i,
        status: 200,
        errorClass: null,
        errorCode: null,
        errorMessage: null,
        ttfbMs: 1,
        durationMs: 2,
        failedOver: false,
        queuedMs: 0,
      },
    ],
    skipped: [],
  } as RequestLogEntry;
}

function run(journal: LogJournal): number {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const e = entry(i);
    journal.append({ ...e, errorCode: 'log_incomplete' });
    journal.append(e);
    if (i % BATCH === BATCH - 1) journal.seal()();
  }
  return ((performance.now() - t0) * 1000) / N;
}

const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-journal-'));
try {
  const rounds: { on: number; off: number }[] = [];
  for (let r = 0; r < 3; r++) {
    const j = new FileLogJournal(join(dir, `r${r}`), (e) => {
      throw e;
    });
    const on = run(j);
    j.close();
    rounds.push({ on, off: run(NO_JOURNAL) });
  }
  const best = (k: 'on' | 'off') => Math.min(...rounds.map((r) => r[k]));
  process.stdout.write(
    `request-log journal, c=1 (${N} requests, 2 lines each, a segment sealed every ${BATCH}):\n` +
      `  with journal ${best('on').toFixed(1)} µs/request, without ${best('off').toFixed(1)} µs/request\n` +
      `  added per request: ${(best('on') - best('off')).toFixed(1)} µs (compare with the c=1 p50 of bench/run.ts)\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
