// The messages between the request-log writer (logWriter.ts) and its worker thread (logWorker.ts).

/** What a write carries: SQL rows (`ops`, a JSON LogWriteOp[]) or request-log entries (a JSON RequestLogEntry[]). */
export type WriteKind = 'ops' | 'entries';

export interface LogWorkerData {
  sqlitePath: string;
  dbPath: string;
  nativeBinding?: string;
  /** Source runs only (tests): the TypeScript entry the bootstrap loads (sourceWorker.mjs). */
  entry?: string;
}

export type WorkerRequest = { type: 'write'; seq: number; kind: WriteKind; json: string } | { type: 'close' };

export type WorkerReply = { type: 'ready' } | { type: 'ack'; seq: number } | { type: 'error'; message: string } | { type: 'closed' };
