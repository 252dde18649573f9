// The request-log worker thread (logWriter.ts starts it, built as its own entry, out/main/logWorker.js):
// a SQLite connection of its own that commits each write in one transaction. A write is either the
// rows themselves (`ops`: the retention clean-up, a corrected row) or request-log entries as their
// JSON lines (`lines`, a burst's batches gathered by the writer: lineStage.ts): the entries' rows
// and usage roll-ups are built here, off the engine's thread, as the engine's thread builds them
// when it writes inline (store/logsRepo.ts). The lines are usually the journal's own
// (requestLog.ts), so the engine's thread serialises an entry once. Should a group of entries
// fail, each is retried in a transaction of its own, so one bad entry loses only itself.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type { Db } from '../store/db';
import { runLogWrites, writeEntryLines, type LogWriteOp, type StatementCache } from '../store/logsRepo';
import { linesOf } from './lineStage';
import type { WorkerRequest, WorkerReply, LogWorkerData, WriteBody } from './logWorkerProtocol';

const data = workerData as LogWorkerData;
const port = parentPort!;
const Database = createRequire(import.meta.url)(data.sqlitePath) as new (path: string, opts: object) => Db;
const db = new Database(data.dbPath, data.nativeBinding ? { nativeBinding: data.nativeBinding } : {});
db.pragma('journal_mode = WAL');
db.pragma('synchronous = OFF');
db.pragma('busy_timeout = 5000');
const statements: StatementCache = new Map();
const reply = (m: WorkerReply) => port.postMessage(m);
const messageOf = (e: unknown) => String((e as Error)?.message ?? e);

/** Writes one write in one transaction; what could not be written, as a message (null: nothing). */
function write(body: WriteBody): string | null {
  if (body.kind === 'ops') {
    runLogWrites(db, JSON.parse(body.json) as LogWriteOp[], statements);
    return null;
  }
  try {
    writeEntryLines(db, linesOf(body.buffer, body.len), statements);
    return null;
  } catch (e) {
    if (body.count <= 1) return messageOf(e);
  }
  let failed = 0;
  let first = '';
  for (const line of linesOf(body.buffer, body.len)) {
    try {
      writeEntryLines(db, [line], statements);
    } catch (err) {
      if (failed++ === 0) first = messageOf(err);
    }
  }
  return failed > 0 ? `${failed} of ${body.count} request-log entries could not be written: ${first}` : null;
}

port.on('message', (m: WorkerRequest) => {
  if (m.type === 'write') {
    let failure: string | null;
    try {
      failure = write(m.body);
    } catch (e) {
      failure = messageOf(e);
    }
    if (failure !== null) reply({ type: 'error', message: failure });
    reply({ type: 'ack', seq: m.seq });
  } else if (m.type === 'close') {
    try {
      db.close();
    } catch {
      // closing is best effort: the thread ends next
    }
    reply({ type: 'closed' });
  }
});
reply({ type: 'ready' });
