// A Clock for tests: time moves only when the test advances it; due timers run in order.
import type { Clock } from '../../src/main/engine/clock';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  private t: number;
  private mono = 0;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = Date.UTC(2026, 11, 2, 12, 0, 0)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  monotonic(): number {
    return this.mono;
  }

  setTimer(fn: () => void, ms: number) {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  /** Moves time forward by ms, running every timer that falls due, in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.mono += due.at - this.t;
      this.t = due.at;
      due.fn();
    }
    this.mono += end - this.t;
    this.t = end;
  }

  pendingTimers(): number {
    return this.timers.length;
  }
}
