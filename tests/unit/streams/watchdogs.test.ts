// The watchdogs: the throughput machine (pure) and the timers on the fake clock.
import { describe, expect, it } from 'vitest';
import { classifyFrame, commentFrame } from '../../../src/main/engine/streams/frames';
import { StreamWatch, throughputNext, throughputStart, type ThroughputLimits, type WatchFire } from '../../../src/main/engine/streams/watchdogs';
import { FakeClock } from '../../support/fakeClock';

const L: ThroughputLimits = { warmupMs: 2_000, windowMs: 5_000, minBytesPerSecond: 4, minMeasurableBytes: 1 };
const text = (t: string) => classifyFrame('anthropic-messages', 'content_block_delta', JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } }));
const thinking = () => classifyFrame('anthropic-messages', 'content_block_delta', JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: '' } }));
const ping = () => classifyFrame('anthropic-messages', 'ping', '{"type":"ping"}');

describe('throughput watchdog machine', () => {
  const run = (events: [number, 'text' | 'reasoning' | 'tool' | null, number][]) => {
    let s = throughputStart();
    const slow: number[] = [];
    for (const [t, phase, chars] of events) {
      const r = throughputNext(s, { phase, textChars: chars, bytes: 10 }, t, L);
      s = r.state;
      if (r.slow) slow.push(t);
    }
    return slow;
  };

  it('judges only after warm-up plus one full window', () => {
    const ev: [number, 'text', number][] = [];
    for (let t = 0; t <= 9_000; t += 500) ev.push([t, 'text', 1]);
    const slow = run(ev);
    expect(slow[0]).toBe(7_000);
  });

  it('a fast stream is never slow', () => {
    const ev: [number, 'text', number][] = [];
    for (let t = 0; t <= 20_000; t += 100) ev.push([t, 'text', 5]);
    expect(run(ev)).toEqual([]);
  });

  it('suspends during reasoning and tool calls, and gives text a fresh window after them', () => {
    const ev: [number, 'text' | 'reasoning' | 'tool' | null, number][] = [[0, 'text', 1]];
    for (let t = 500; t <= 10_000; t += 500) ev.push([t, 'reasoning', 0]);
    for (let t = 10_500; t <= 20_000; t += 500) ev.push([t, 'tool', 0]);
    for (let t = 20_500; t <= 30_000; t += 500) ev.push([t, 'text', 1]);
    const slow = run(ev);
    expect(slow[0]).toBe(25_500);
  });

  it('heartbeats carry bytes but no text: they keep the window measurable, not fast', () => {
    const ev: [number, 'text' | null, number][] = [[0, 'text', 1]];
    for (let t = 250; t <= 8_000; t += 250) ev.push([t, null, 0]);
    expect(run(ev)[0]).toBe(7_000);
  });
});

describe('stream watch timers', () => {
  const watch = (over: Partial<ConstructorParameters<typeof StreamWatch>[1]> = {}) => {
    const clock = new FakeClock();
    const fired: WatchFire[] = [];
    const w = new StreamWatch(clock, { firstOutputMs: 60_000, contentStallMs: 120_000, attemptDeadlineMs: 0, throughput: null, ...over }, (f) => fired.push(f));
    w.start();
    return { clock, w, fired };
  };

  it('fires time to first output when nothing but pings came', () => {
    const { clock, w, fired } = watch();
    w.observe([ping(), commentFrame('anthropic-messages', 'x')], false, 20);
    clock.advance(59_999);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired.map((f) => f.watchdog)).toEqual(['first_output']);
  });

  it('content stall: pings do not reset it, thinking does, and a busy stream re-arms lazily', () => {
    const { clock, w, fired } = watch();
    w.observe([text('hi')], true, 10);
    for (let i = 0; i < 5; i++) {
      clock.advance(60_000);
      w.observe([thinking()], true, 10);
    }
    expect(fired).toEqual([]);
    clock.advance(60_000);
    w.observe([ping()], false, 10);
    clock.advance(59_999);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired.map((f) => f.watchdog)).toEqual(['content_stall']);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('the hard deadline fires whatever the output; stop cancels every timer', () => {
    const { clock, w, fired } = watch({ attemptDeadlineMs: 10_000 });
    for (let i = 0; i < 9; i++) {
      clock.advance(1_000);
      w.observe([text('x')], true, 10);
    }
    clock.advance(1_000);
    expect(fired.map((f) => f.watchdog)).toEqual(['attempt_deadline']);
    const other = watch({ attemptDeadlineMs: 10_000 });
    other.w.stop();
    expect(other.clock.pendingTimers()).toBe(0);
  });
});
