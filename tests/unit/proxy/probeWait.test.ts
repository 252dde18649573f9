// The bounded wait on another request's last-resort probe (issue 19), on the fake clock: it ends
// with the probe's outcome, or after PROBE_WAIT_MAX_MS, or when the client leaves; then a target
// that is eligible again is taken.
import { describe, expect, it } from 'vitest';
import { afterProbe, awaitProbe, PROBE_WAIT_MAX_MS } from '../../../src/main/engine/proxy/probeWait';
import type { Exclusion } from '../../../src/main/engine/resilience/port';
import type { Target } from '../../../src/main/engine/routing/target';
import { FakeClock } from '../../support/fakeClock';

const target = (id: string) => ({ conn: { provider: 'p', id }, model: 'm', requestedModel: 'm' }) as unknown as Target;
const HELD: Exclusion = { reason: 'cooling_down', until: null, detail: null };

/** A promise and the switch that settles it. */
function pending() {
  let settle!: () => void;
  const done = new Promise<void>((resolve) => (settle = resolve));
  return { done, settle };
}

/** Lets pending promise callbacks run (no timers involved). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('waiting on a concurrent last-resort probe', () => {
  it('ends as soon as the probe reports, not at its bound', async () => {
    const clock = new FakeClock();
    const p = pending();
    let ended = false;
    void awaitProbe(clock, p.done, new AbortController().signal).then(() => (ended = true));
    clock.advance(PROBE_WAIT_MAX_MS - 1);
    await flush();
    expect(ended).toBe(false);
    p.settle();
    await flush();
    expect(ended).toBe(true);
  });

  it('ends after PROBE_WAIT_MAX_MS when the probe never reports, and at once when the client leaves', async () => {
    const clock = new FakeClock();
    let ended = false;
    void awaitProbe(clock, pending().done, new AbortController().signal).then(() => (ended = true));
    clock.advance(PROBE_WAIT_MAX_MS);
    await flush();
    expect(ended).toBe(true);
    const left = new AbortController();
    let gone = false;
    void awaitProbe(clock, pending().done, left.signal).then(() => (gone = true));
    left.abort();
    await flush();
    expect(gone).toBe(true);
  });

  it('after the probe, takes the target it freed; with no probe in flight, any target freed meanwhile; else none', async () => {
    const clock = new FakeClock();
    const [a, b] = [target('a'), target('b')];
    const p = pending();
    const free = new Set<string>();
    const resilience = {
      probeInFlight: (ts: readonly Target[]) => (ts.includes(b) && !free.has('b') ? p.done : null),
      exclusion: (t: Target) => (free.has(t.conn.id) ? null : HELD),
    };
    const taken = afterProbe({ resilience, clock }, [a, b], new AbortController().signal);
    free.add('b');
    p.settle();
    expect(await taken).toBe(b);
    expect(await afterProbe({ resilience, clock }, [a], new AbortController().signal)).toBeNull();
    free.add('a');
    expect(await afterProbe({ resilience, clock }, [a], new AbortController().signal)).toBe(a);
  });
});
