// Shared-quota serialisation (SPEC R-SQ-12..14): requests to a connection that declares a positive
// max_concurrent wait for one of that many per-connection slots ("qsconn:<id>") instead of
// flooding the account. It fails open: when too many already wait, or the wait runs out, the
// request goes ahead without a slot rather than being refused; the upstream's own 429 handling
// stays the backstop.
import type { Clock } from '../clock';
import { CompositeGate, type GateStage, type GateWait } from './compositeGate';
import { quotaShareKey } from './concurrencyCaps';

export interface QuotaShareGrant {
  release: () => void;
  /** True when the request proceeds without a slot (saturated queue or expired wait). */
  failedOpen: boolean;
}

const noop = () => {};

export class QuotaShareGate {
  private readonly gate: CompositeGate;

  constructor(clock: Clock) {
    this.gate = new CompositeGate(clock);
  }

  private stage(connectionId: string, cap: number): GateStage[] {
    return [{ kind: 'account', key: quotaShareKey(connectionId), cap, label: 'shared-quota' }];
  }

  /** A slot now, or null when the account is at its cap (never waits). */
  tryAcquire(connectionId: string, cap: number): (() => void) | null {
    return this.gate.tryAcquire(this.stage(connectionId, cap));
  }

  /** Whether a request would wait for a slot now (the account is at its cap). */
  full(connectionId: string, cap: number): boolean {
    return this.gate.blocked(this.stage(connectionId, cap)) !== null;
  }

  /** Waits for a slot; never refuses (fails open). Rejects only when the signal aborts. */
  async acquire(connectionId: string, cap: number, wait: GateWait): Promise<QuotaShareGrant> {
    const outcome = await this.gate.acquire(this.stage(connectionId, cap), wait);
    if (outcome.kind === 'granted') return { release: outcome.release, failedOpen: false };
    return { release: noop, failedOpen: true };
  }

  usage(connectionId: string): { held: number; waiting: number; cap: number } | null {
    return this.gate.usage(quotaShareKey(connectionId));
  }

  setCap(connectionId: string, cap: number): void {
    this.gate.setCap(quotaShareKey(connectionId), cap);
  }

  /** The layer was switched off: everyone waiting goes ahead. */
  openAll(): void {
    this.gate.dismissAll();
  }

  close(reason: Error): void {
    this.gate.close(reason);
  }
}
