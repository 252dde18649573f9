// The randomised chaos suite's instrument, checked without a network: the rotating schedule keeps
// its promise, and the figures follow the definitions stated in random.test.ts.
import { describe, expect, it } from 'vitest';
import type { ChaosCall, Fault } from '../support/chaosUpstream';
import type { ClientResult } from './clientPool';
import { measureRun } from './measure';
import { MOVING_FAULTS, rotatingFaults, Schedule, steps } from './schedule';

describe('chaos instrument: the rotating schedule', () => {
  it('keeps at least one key healthy at every moment, deals every fault, and repeats for a seed', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const keys = Array.from({ length: 3 + (seed % 3) }, (_, i) => `k${i + 1}`);
      const make = () => rotatingFaults({ keys, durationMs: 30_000, periodMs: 1_000, spellRange: [0.3, 1.8], faults: MOVING_FAULTS, seed });
      const s = make();
      const noneHealthy: number[] = [];
      const seen = new Set<string>();
      for (let t = 0; t < 30_000; t += 5) {
        if (!keys.some((k) => s.stateAt(k, t) === 'ok')) noneHealthy.push(t);
        for (const k of keys) seen.add(s.stateAt(k, t));
      }
      expect(noneHealthy, `seed ${seed}: moments with no key healthy`).toEqual([]);
      expect([...seen].sort(), `seed ${seed}`).toEqual(['ok', ...MOVING_FAULTS].sort());
      expect(make().describe(), `seed ${seed} replays`).toBe(s.describe());
    }
  });

  it('sees consecutive bad modes of one key as one bad span', () => {
    const s = new Schedule(['k1'], 1_000, steps('k1', 1_000, [300, 'status_503'], [500, 'reset'], [1_000, 'ok']));
    expect(s.badSpanAt('k1', 350)).toEqual({ from: 0, to: 500 });
    expect(s.badSpanAt('k1', 600)).toBeNull();
  });
});

describe('chaos instrument: the randomised figures', () => {
  // k1: 503 then a dropped socket until 500 ms, then healthy. k2: 429 with Retry-After until 200 ms, then healthy.
  const schedule = new Schedule(['k1', 'k2'], 1_000, [
    ...steps('k1', 1_000, [300, 'status_503'], [500, 'reset'], [1_000, 'ok']),
    ...steps('k2', 1_000, [200, 'status_429_retry_after'], [1_000, 'ok']),
  ]);
  let seq = 0;
  const call = (key: string, fault: Fault, arrivedAt: number, finishedAt: number): ChaosCall => ({
    seq: seq++,
    key,
    fault,
    stream: false,
    requestId: null,
    arrivedAt,
    finishedAt,
  });
  const request = (id: string, startedAt: number, ok: boolean): ClientResult => ({
    id,
    stream: false,
    startedAt,
    endedAt: startedAt + 50,
    ok,
    status: ok ? null : 503,
    code: ok ? null : 'all_targets_cooling_down',
    error: null,
    timedOut: false,
  });
  const figures = measureRun({
    router: 'engine',
    seed: 1,
    schedule,
    retryAfterMs: 1_000,
    breaker: [],
    calls: [
      call('k1', 'status_503', 100, 105), // the spell's first failure: evidence from 105 ms
      call('k1', 'status_503', 102, 120), // already on its way at 105 ms: not wasted
      call('k1', 'status_503', 150, 155), // wasted
      call('k1', 'reset', 350, 351), // wasted: the same bad span, another mode
      call('k2', 'status_429_retry_after', 100, 110), // declares a wait until 1,110 ms
      call('k2', 'status_429_retry_after', 180, 182), // wasted
      call('k1', 'ok', 600, 620),
      call('k2', 'ok', 700, 720),
    ],
    results: [
      request('no-key-healthy', 150, false),
      request('healthy-key-waiting', 300, false),
      request('healthy-key-open', 600, false),
      request('served', 700, true),
    ],
  });

  it('counts a failure while a key is healthy and outside its declared wait, and excuses one inside it', () => {
    expect(figures.failuresWhileHealthy.map((r) => r.id)).toEqual(['healthy-key-open']);
    expect(figures.failuresExcused).toBe(1);
    expect(figures.failuresWithoutHealthyKey).toBe(1);
    expect(figures.requestsWhileHealthy).toBe(2);
  });

  it('counts as wasted the calls to a bad span after its first delivered failure, whatever the mode', () => {
    expect(figures.wasted).toBe(3);
    expect(figures.wastedByFault).toEqual({ status_503: 1, reset: 1, status_429_retry_after: 1 });
    expect(figures.upstreamCalls).toBe(8);
  });
});
