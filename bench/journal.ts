// The request log's crash journal (src/main/engine/logs/logJournal.ts): what it adds to one request.
// A non-stream answer journals its final entry once, before it is written (a stream: a provisional
// line before its first byte, the final line after its end); the lines of one event-loop turn are
// written together, and every 250 ms the batch's segment is sealed. This times that work for a
// typical entry (one attempt) in this process, on the data dir's file system, against the same
// work with no journal, at c=1 (every request waits for its own write) and at c=32 (32 requests
// log in one turn and share a write); the difference is the cost per request, to read beside the
// c=1 p50 that `bench/run.ts` prints (the "upstream 0 ms, c=1" lines).
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

/** N requests, `perTurn` of them logging in each event-loop turn; µs per request. */
async function run(journal: LogJournal, perTurn: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < N; i += perTurn) {
    for (let j = i; j < i + perTurn; j++) journal.append(entry(j));
    await journal.durable();
    if (Math.floor(i / BATCH) !== Math.floor((i + perTurn) / BATCH)) journal.seal().committed();
  }
  return ((performance.now() - t0) * 1000) / N;
}

const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-journal-'));
try {
  let out = `request-log journal (${N} requests, one line each, a batch sealed every ${BATCH}):\n`;
  for (const perTurn of [1, 32]) {
    const rounds: { on: number; off: number }[] = [];
    for (let r = 0; r < 3; r++) {
      const j = new FileLogJournal(join(dir, `c${perTurn}r${r}`), (e) => {
        throw e;
      });
      const on = await run(j, perTurn);
      j.close();
      rounds.push({ on, off: await run(NO_JOURNAL, perTurn) });
    }
    const best = (k: 'on' | 'off') => Math.min(...rounds.map((r) => r[k]));
    out +=
      `  c=${perTurn}: with journal ${best('on').toFixed(1)} µs/request, without ${best('off').toFixed(1)} µs/request, ` +
      `added ${(best('on') - best('off')).toFixed(1)} µs\n`;
  }
  process.stdout.write(`${out}  (compare with the c=1 p50 of bench/run.ts)\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
