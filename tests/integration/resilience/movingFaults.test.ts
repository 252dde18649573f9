// Faults that move between keys (issue 19): three keys of one provider, and every 2.5 s the fault
// moves: the key that was healthy turns bad (503, a dropped socket, a hint-less 429) while the one
// that was bad recovers; at every moment one key answers. Through the proxy with the real SDK, on
// the fake clock, so the schedule is exact and the run deterministic. No request may fail while a
// key is healthy: no 503 all_targets_cooling_down built from our own guesses, and a probe of the
// excluded keys lands on the healthy one.
import { describe, expect, it } from 'vitest';
import type { ScriptedResponse } from '../../support/fakeUpstream';
import { anthropicMessage } from '../../support/fakeUpstream';
import { ask, breakerOf, rateLimited, rigPerTest, unavailable, type Answer } from './support';

const KEYS = ['sk-ant-key-1111111111111', 'sk-ant-key-2222222222222', 'sk-ant-key-3333333333333'] as const;
const PHASE_MS = 2_500;
const STEP_MS = 250;

type Fault = 'ok' | '503' | 'reset' | '429';

const answerFor = (fault: Fault): ScriptedResponse | undefined =>
  fault === 'ok' ? { json: anthropicMessage('claude-x') } : fault === '503' ? unavailable() : fault === 'reset' ? { destroy: true } : rateLimited();

describe('faults that move between keys', () => {
  const { fake, startRig } = rigPerTest();

  /**
   * Runs `phases` phases of 2.5 s with one request every 250 ms; `faultOf(phase, key)` says how
   * each key answers in each phase. Returns every answer with the key that was healthy then, and
   * each upstream call with the phase it fell in.
   */
  async function run(phases: number, faultOf: (phase: number, key: number) => Fault) {
    const r = await startRig();
    const ids: string[] = [];
    for (let k = 0; k < KEYS.length; k++) ids.push((await r.add(`Key ${k + 1}`, KEYS[k])).id);
    const t0 = r.clock.now();
    const phaseNow = () => Math.floor((r.clock.now() - t0) / PHASE_MS);
    const calls: { key: number; phase: number; fault: Fault }[] = [];
    KEYS.forEach((key, k) =>
      fake.script({ key }, [
        () => {
          const phase = phaseNow();
          const fault = faultOf(phase, k);
          calls.push({ key: k, phase, fault });
          return answerFor(fault);
        },
      ]),
    );
    const answers: (Answer & { phase: number })[] = [];
    const states = new Set<string>();
    for (let i = 0; i < (phases * PHASE_MS) / STEP_MS; i++) {
      answers.push({ ...(await ask(r.client)), phase: phaseNow() });
      states.add((await breakerOf(r.t, 'anthropic')).state);
      r.clock.advance(STEP_MS);
    }
    return { r, ids, answers, calls, states };
  }

  it('one healthy key at a time, the others answering 503 or dropping the socket: every request is served', async () => {
    // Phase p: key p % 3 is healthy; of the two others, one answers 503 and one drops the socket.
    const { answers, calls, states } = await run(16, (p, k) => (k === p % 3 ? 'ok' : k === (p + 1) % 3 ? '503' : 'reset'));
    const failed = answers.filter((a) => a.status !== 200);
    expect(failed).toEqual([]);
    expect(answers.some((a) => a.code === 'all_targets_cooling_down')).toBe(false);
    // The faults reached the breaker: it did open at times, and still nothing failed.
    expect(states.has('HALF_OPEN')).toBe(false);
    // Wasted calls stay bounded: fewer than one bad call per request.
    expect(calls.filter((c) => c.fault !== 'ok').length).toBeLessThan(answers.length);
  });

  it('keys taking turns failing two at a time, then only key 3 answering: no request fails, and key 3 serves from its first phase', async () => {
    // Phases 0-5: the three keys take turns failing two at a time (today's engine opens the
    // breaker on them and answers 503 for the next 30 s); from phase 6 on only key 3 answers,
    // and it was failing in phase 5.
    const { answers, calls } = await run(10, (p, k) => (p < 6 ? (k === p % 3 ? 'ok' : '503') : k === 2 ? 'ok' : '503'));
    const late = answers.filter((a) => a.phase >= 6);
    expect(late.filter((a) => a.status !== 200)).toEqual([]);
    // Within the first phase of key 3's recovery, its calls are the ones that serve.
    const firstOk = calls.findIndex((c) => c.phase >= 6 && c.key === 2);
    expect(firstOk).toBeGreaterThanOrEqual(0);
    expect(calls[firstOk]!.phase).toBe(6);
  });

  it('hint-less 429s move between keys too: the key resting on our own guess is probed rather than a 503 relayed', async () => {
    const { answers } = await run(12, (p, k) => (k === p % 3 ? 'ok' : k === (p + 2) % 3 ? '429' : '503'));
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
  });

  it('every key down for a phase opens the breaker on key-level evidence; once key 2 recovers the probe finds it within a second', async () => {
    // Phase 0 all keys answer; phase 1 all fail (the breaker opens, keys succeeded moments ago);
    // from phase 2 on key 2 answers and the others still fail.
    const { answers, calls, states } = await run(6, (p, k) => (p === 0 ? 'ok' : p === 1 ? '503' : k === 1 ? 'ok' : '503'));
    expect(states.has('OPEN')).toBe(true);
    // Today's engine keeps all three keys out for the 30 s reset timeout: every later request is a 503.
    const recovered = answers.filter((a) => a.phase >= 2);
    const firstOk = recovered.findIndex((a) => a.status === 200);
    expect(firstOk).toBeGreaterThanOrEqual(0);
    expect(firstOk).toBeLessThanOrEqual(1_000 / STEP_MS);
    expect(recovered.slice(firstOk).filter((a) => a.status !== 200)).toEqual([]);
    // Once key 2 serves again the failing keys are called rarely: at most one call per phase each.
    const wasted = calls.filter((c) => c.phase >= 3 && c.fault !== 'ok');
    expect(wasted.length).toBeLessThanOrEqual(2 * 3);
  });
});

