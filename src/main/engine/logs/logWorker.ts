// The request-log worker thread (logWriter.ts starts it, built as its own entry, out/main/logWorker.js):
// a SQLite connection of its own that commits each write in one transaction. A write is either the
// rows themselves (`ops`: the retention clean-up) or the request-log entries as their JSON lines
// (`lines`): the entries' rows and usage roll-ups are built here, off the engine's thread, as the
// engine's thread builds them when it writes inline (store/logsRepo.ts). The lines are usually the
// journal's own (requestLog.ts), so the engine's thread serialises an entry once.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type { Db } from '../store/db';
import { runLogWrites, writeEntryLines, type LogWriteOp, type StatementCache } from '../store/logsRepo';
import type { WorkerRequest, WorkerReply, LogWorkerData } from './logWorkerProtocol';

const data = workerData as LogWorkerData;
const port = parentPort!;
const Database = createRequire(import.meta.url)(data.sqlitePath) as new (path: string, opts: object) => Db;
const db = new Database(data.dbPath, data.nativeBinding ? { nativeBinding: data.nativeBinding } : {});
db.pragma('journal_mode = WAL');
db.pragma('synchronous = OFF');
db.pragma('busy_timeout = 5000');
const statements: StatementCache = new Map();
const reply = (m: WorkerReply) => port.postMessage(m);

port.on('message', (m: WorkerRequest) => {
  if (m.type === 'write') {
    try {
      if (m.body.kind === 'lines') writeEntryLines(db, m.body.lines, statements);
      else runLogWrites(db, JSON.parse(m.body.json) as LogWriteOp[], statements);
    } catch (e) {
      reply({ type: 'error', message: String((e as Error)?.message) });
    }
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
