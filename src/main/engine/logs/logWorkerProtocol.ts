// The messages between the request-log writer (logWriter.ts) and its worker thread (logWorker.ts).

/**
 * What a write carries: SQL rows (`ops`: a JSON LogWriteOp[]), or request-log entries as their JSON
 * lines (`lines`): `count` lines, UTF-8, newline-separated, in the first `len` bytes of `buffer`
 * (lineStage.ts: a SharedArrayBuffer where the runtime has one). The worker commits a write in one
 * transaction, decoding and parsing one line at a time; it does not keep the buffer, which the
 * writer reuses once the write is acknowledged.
 */
export type WriteBody = { kind: 'ops'; json: string } | { kind: 'lines'; buffer: ArrayBufferLike; len: number; count: number };

export interface LogWorkerData {
  sqlitePath: string;
  dbPath: string;
  nativeBinding?: string;
  /** Source runs only (tests): the TypeScript entry the bootstrap loads (sourceWorker.mjs). */
  entry?: string;
}

export type WorkerRequest = { type: 'write'; seq: number; body: WriteBody } | { type: 'close' };

export type WorkerReply = { type: 'ready' } | { type: 'ack'; seq: number } | { type: 'error'; message: string } | { type: 'closed' };
