// The request-log worker thread (logWriter.ts starts it, built as its own entry, out/main/logWorker.js):
// a SQLite connection of its own. A write is either the rows themselves (`ops`: the retention
// clean-up, a corrected row) or the request-log entries as their JSON lines (`lines`): the
// entries' rows and usage roll-ups are built here, off the engine's thread, as the engine's thread
// builds them when it writes inline (store/logsRepo.ts). The lines are usually the journal's own
// (requestLog.ts), so the engine's thread serialises an entry once. Writes are grouped into one
// transaction for up to GROUP_WINDOW_MS (groupCommit.ts) and each is acknowledged once committed.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../clock';
import type { Db } from '../store/db';
import { writeLogParts, type LogWriteOp, type LogWritePart, type StatementCache } from '../store/logsRepo';
import { GroupCommit } from './groupCommit';
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

const part = (b: WriteBody): LogWritePart => (b.kind === 'lines' ? { lines: b.lines } : { ops: JSON.parse(b.json) as LogWriteOp[] });
const group = new GroupCommit<WriteBody>({
  commit: (writes) => writeLogParts(db, writes.map(part), statements),
  entries: (b) => (b.kind === 'lines' ? b.lines.length : 0),
  ack: (seq) => reply({ type: 'ack', seq }),
  error: (message) => reply({ type: 'error', message }),
  windowMs: data.groupWindowMs,
  clock: systemClock,
});

port.on('message', (m: WorkerRequest) => {
  if (m.type === 'write') group.add(m.seq, m.body);
  else if (m.type === 'sync') group.flush();
  else if (m.type === 'close') {
    group.flush();
    try {
      db.close();
    } catch {
      // closing is best effort: the thread ends next
    }
    reply({ type: 'closed' });
  }
});
reply({ type: 'ready' });
