// The request log: entries are buffered and written in one transaction per flush (off the request
// path), pushed to the dashboard as a batch, and pruned by age and count.
import type { LogsPage, RequestLogEntry } from '../../../shared/model';
import type { CancelTimer, Clock } from '../clock';
import type { EventBus } from '../events';
import type { Logger } from '../logger';
import type { LogsRepo } from '../store/logsRepo';

const FLUSH_MS = 250;
const FLUSH_ROWS = 500;
const PRUNE_EVERY_MS = 10 * 60_000;

export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private cancelFlush: CancelTimer | null = null;
  private lastPrune = 0;

  constructor(
    private readonly repo: LogsRepo,
    private readonly clock: Clock,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly limits: () => { retentionDays: number; maxRows: number },
  ) {}

  append(entry: RequestLogEntry): void {
    this.buffer.push(entry);
    if (this.buffer.length >= FLUSH_ROWS) this.flush();
    else if (!this.cancelFlush) this.cancelFlush = this.clock.setTimer(() => this.flush(), FLUSH_MS);
  }

  flush(): void {
    this.cancelFlush?.();
    this.cancelFlush = null;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    try {
      this.repo.insertMany(batch);
    } catch (err) {
      this.log.error('requestLog.writeFailed', { err, rows: batch.length });
    }
    this.bus.emit('logs', batch);
    const now = this.clock.now();
    if (now - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = now;
      this.prune();
    }
  }

  prune(): number {
    const { retentionDays, maxRows } = this.limits();
    try {
      return this.repo.prune(this.clock.now() - retentionDays * 86_400_000, maxRows);
    } catch (err) {
      this.log.error('requestLog.pruneFailed', { err });
      return 0;
    }
  }

  page(opts: { limit: number; before?: number; connectionId?: string; errorsOnly?: boolean }): LogsPage {
    this.flush();
    return this.repo.page(opts);
  }

  get(id: string): RequestLogEntry | null {
    this.flush();
    return this.repo.get(id);
  }

  close(): void {
    this.flush();
  }
}
