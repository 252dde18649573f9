// One server-sent-events client of /api/events, with backpressure. Events are written while the
// client keeps up. When it stops reading and the bytes waiting for it pass `maxBufferedBytes`,
// further events (and keep-alives) are dropped, not queued; once its buffer drains it gets one
// `resync` event, which tells it that pushes were lost and it should read every topic again. A
// client still stuck `stuckCloseMs` after it started dropping is disconnected (it reconnects and
// reads everything then). So memory per client is bounded by the limit plus one event.
import type { ServerResponse } from 'node:http';
import { RESYNC_EVENT } from '../../../shared/contract';
import type { CancelTimer, Clock } from '../clock';
import type { Logger } from '../logger';

export interface EventStreamLimits {
  /** Bytes waiting for the client (ours and the socket's) past which events are dropped. */
  maxBufferedBytes: number;
  /** A client that has not drained this long after dropping began is disconnected. */
  stuckCloseMs: number;
  /** A comment line every this often keeps proxies and the browser from closing an idle stream. */
  keepAliveMs: number;
}

export const EVENT_STREAM_LIMITS: EventStreamLimits = {
  maxBufferedBytes: 1024 * 1024,
  stuckCloseMs: 30_000,
  keepAliveMs: 15_000,
};

export interface EventStreamStats {
  /** Bytes written but not yet taken by the client. */
  bufferedBytes: number;
  /** True while events are being dropped for this client. */
  dropping: boolean;
  /** Events dropped since the client last caught up. */
  dropped: number;
  /** Resync events sent so far. */
  resyncs: number;
}

export class EventStream {
  private readonly limits: EventStreamLimits;
  private dropping = false;
  private dropped = 0;
  private resyncs = 0;
  private stuckTimer: CancelTimer | null = null;
  private keepAlive: CancelTimer | null = null;
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly clock: Clock,
    private readonly log: Logger,
    limits: Partial<EventStreamLimits> = {},
  ) {
    this.limits = { ...EVENT_STREAM_LIMITS, ...limits };
    this.scheduleKeepAlive();
  }

  send(name: string, payload: unknown): void {
    if (this.closed) return;
    if (this.dropping) {
      this.dropped++;
      return;
    }
    this.write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  comment(text: string): void {
    if (!this.closed && !this.dropping) this.write(`: ${text}\n\n`);
  }

  stats(): EventStreamStats {
    return { bufferedBytes: this.res.writableLength, dropping: this.dropping, dropped: this.dropped, resyncs: this.resyncs };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stuckTimer?.();
    this.keepAlive?.();
    this.res.off('drain', this.onDrain);
    if (!this.res.destroyed) this.res.end();
  }

  private write(chunk: string): void {
    const ok = this.res.write(chunk);
    // write() returned false: a 'drain' will come. Until the buffer passes the limit, keep queueing.
    if (!ok && this.res.writableLength > this.limits.maxBufferedBytes) this.startDropping();
  }

  private startDropping(): void {
    this.dropping = true;
    this.log.warn('eventStream.slowClient', { bufferedBytes: this.res.writableLength });
    this.res.once('drain', this.onDrain);
    this.stuckTimer = this.clock.setTimer(() => {
      this.stuckTimer = null;
      this.log.warn('eventStream.stuckClientClosed', { dropped: this.dropped, bufferedBytes: this.res.writableLength });
      this.close();
      this.res.destroy();
    }, this.limits.stuckCloseMs);
  }

  private readonly onDrain = (): void => {
    if (this.closed) return;
    this.stuckTimer?.();
    this.stuckTimer = null;
    this.dropping = false;
    const dropped = this.dropped;
    this.dropped = 0;
    this.resyncs++;
    this.write(`event: ${RESYNC_EVENT}\ndata: ${JSON.stringify({ dropped })}\n\n`);
  };

  private scheduleKeepAlive(): void {
    this.keepAlive = this.clock.setTimer(() => {
      this.comment('keep-alive');
      this.scheduleKeepAlive();
    }, this.limits.keepAliveMs);
  }
}
