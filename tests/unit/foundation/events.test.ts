// Push events and the clock port: a burst of touches becomes one push per interval, nothing is
// built without listeners, a failing listener never breaks the producer, and sleep() follows the
// injected clock.
import { describe, expect, it } from 'vitest';
import { sleep } from '../../../src/main/engine/clock';
import { CoalescedTopic, EventBus } from '../../../src/main/engine/events';
import { FakeClock } from '../../support/fakeClock';

describe('CoalescedTopic', () => {
  function setup() {
    const clock = new FakeClock();
    const bus = new EventBus();
    let builds = 0;
    const topic = new CoalescedTopic(bus, clock, 'admission', () => {
      builds++;
      return [] as never;
    }, 250);
    const pushes: unknown[] = [];
    return { clock, bus, topic, pushes, builds: () => builds };
  }

  it('turns a burst of touches into one push after the interval', () => {
    const { clock, bus, topic, pushes, builds } = setup();
    bus.on('admission', (p) => pushes.push(p));
    for (let i = 0; i < 50; i++) topic.touch();
    clock.advance(249);
    expect(pushes).toHaveLength(0);
    clock.advance(1);
    expect(pushes).toHaveLength(1);
    expect(builds()).toBe(1);
    topic.touch();
    clock.advance(250);
    expect(pushes).toHaveLength(2);
  });

  it('builds nothing and sets no timer while nobody listens', () => {
    const { clock, topic, builds } = setup();
    topic.touch();
    expect(clock.pendingTimers()).toBe(0);
    clock.advance(1_000);
    expect(builds()).toBe(0);
  });

  it('flush() pushes at once and cancels the pending push; dispose() cancels it', () => {
    const { clock, bus, topic, pushes } = setup();
    bus.on('admission', (p) => pushes.push(p));
    topic.touch();
    topic.flush();
    expect(pushes).toHaveLength(1);
    clock.advance(1_000);
    expect(pushes).toHaveLength(1);
    topic.touch();
    topic.dispose();
    clock.advance(1_000);
    expect(pushes).toHaveLength(1);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe('EventBus', () => {
  it('keeps delivering to other listeners when one throws', () => {
    const bus = new EventBus();
    const got: string[] = [];
    bus.on('health', () => {
      throw new Error('listener bug');
    });
    bus.on('health', () => got.push('second'));
    expect(() => bus.emit('health', {} as never)).not.toThrow();
    expect(got).toEqual(['second']);
  });

  it('onAny() sees every event by name and unsubscribes from all of them', () => {
    const bus = new EventBus();
    const got: string[] = [];
    const off = bus.onAny((name) => got.push(name));
    bus.emit('logs', [] as never);
    bus.emit('settings', {} as never);
    off();
    bus.emit('logs', [] as never);
    expect(got).toEqual(['logs', 'settings']);
    expect(bus.hasListeners('logs')).toBe(false);
  });
});

describe('sleep on the injected clock', () => {
  it('resolves when the fake clock passes the delay, not before', async () => {
    const clock = new FakeClock();
    let done = false;
    const p = sleep(clock, 1_000).then(() => (done = true));
    clock.advance(999);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    await p;
    expect(done).toBe(true);
  });

  it('rejects with the abort reason and cancels its timer', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const p = sleep(clock, 1_000, ac.signal);
    ac.abort(new Error('client went away'));
    await expect(p).rejects.toThrow('client went away');
    expect(clock.pendingTimers()).toBe(0);
    await expect(sleep(clock, 5, ac.signal)).rejects.toThrow('client went away');
  });
});
