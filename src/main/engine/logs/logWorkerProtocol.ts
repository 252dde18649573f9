// The messages between the request-log writer (logWriter.ts) and its worker thread (logWorker.ts).

/**
 * What a write carries: SQL rows (`ops`: a JSON LogWriteOp[]), or request-log entries as their JSON
 * lines (`lines`: an array of strings posts cheaper than one joined string, and the worker parses
 * and writes them one at a time).
 */
export type WriteBody = { kind: 'ops'; json: string } | { kind: 'lines'; lines: string[] };

export interface LogWorkerData {
  sqlitePath: string;
  dbPath: string;
  nativeBinding?: string;
  /** Source runs only (tests): the TypeScript entry the bootstrap loads (sourceWorker.mjs). */
  entry?: string;
}

export type WorkerRequest = { type: 'write'; seq: number; body: WriteBody } | { type: 'close' };

export type WorkerReply = { type: 'ready' } | { type: 'ack'; seq: number } | { type: 'error'; message: string } | { type: 'closed' };
