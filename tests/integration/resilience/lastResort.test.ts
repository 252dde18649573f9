// Exclusions that are only a guess of ours never turn a servable request into an error (issue 9):
// when every target is excluded and one is out only on our own backoff (a 429 without any upstream
// hint) or an outlier ejection, the request probes it once, rationed per connection; an exclusion
// the upstream declared (Retry-After) is never probed. And a key back from an ejection is tested
// by one call at a time, so a key that is still bad costs one call per ejection period.
import { describe, expect, it } from 'vitest';
import { anthropicMessage } from '../../support/fakeUpstream';
import { ask, keysSeen, rateLimited, rigPerTest, unavailable } from './support';

const K1 = 'sk-ant-key-1111111111111';
const K2 = 'sk-ant-key-2222222222222';
const K3 = 'sk-ant-key-3333333333333';

describe('last-resort probe and probation', () => {
  const { fake, startRig } = rigPerTest();

  it('a key held back only by our own 429 backoff is probed once its base cooldown has passed, instead of failing the request', async () => {
    const r = await startRig();
    await r.add('Only', K1);
    // Hint-less 429s: the key rests this model 3 s, then 6 s (backoff level 2).
    fake.script({ key: K1 }, [rateLimited(), rateLimited(), { json: anthropicMessage('claude-x') }]);
    expect((await ask(r.client)).status).toBe(429);
    // Within the base cooldown of that 429 nothing is sent: the client hears the truth.
    expect(await ask(r.client)).toMatchObject({ status: 503, code: 'all_targets_cooling_down' });
    expect(fake.requests).toHaveLength(1);
    r.clock.advance(3_000);
    expect((await ask(r.client)).status).toBe(429); // the 3 s lock ended; the key is still limited: 6 s now
    r.clock.advance(3_000);
    // 3 s into a 6 s guess: the request probes the key rather than fail, and the key has recovered.
    expect((await ask(r.client)).status).toBe(200);
    expect(fake.requests).toHaveLength(3);
    const log = (await r.t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(log.status).toBe(200);
    expect(log.skipped.map((s) => s.reason)).toEqual(['model_lockout']);
    // The probe's success lifted the lock: the next request goes straight through.
    expect((await ask(r.client)).status).toBe(200);
  });

  it('a probe is rationed: one per base cooldown per key, however many requests arrive', async () => {
    const r = await startRig();
    await r.add('Only', K1);
    fake.script({ key: K1 }, [rateLimited()]);
    await ask(r.client);
    r.clock.advance(3_000);
    await ask(r.client); // level 2: locked 6 s
    r.clock.advance(3_000);
    const before = fake.requests.length;
    expect((await ask(r.client)).status).toBe(429); // the probe: still limited (level 3 now)
    expect(fake.requests.length).toBe(before + 1);
    for (let i = 0; i < 5; i++) expect((await ask(r.client)).code).toBe('all_targets_cooling_down');
    expect(fake.requests.length).toBe(before + 1);
  });

  it('an exclusion the upstream declared is never probed: Retry-After is kept to the second', async () => {
    const r = await startRig();
    await r.add('Only', K1);
    fake.script({ key: K1 }, [rateLimited({ 'retry-after': '60' }), { json: anthropicMessage('claude-x') }]);
    expect((await ask(r.client)).status).toBe(429);
    r.clock.advance(30_000);
    const answer = await ask(r.client);
    expect(answer).toMatchObject({ status: 503, code: 'all_targets_cooling_down', retryAfter: '30' });
    expect(fake.requests).toHaveLength(1);
  });

  it('a key back from an ejection is tested by one call at a time: a concurrent request goes to the healthy key', async () => {
    const r = await startRig();
    const c1 = await r.add('Key 1', K1, { priority: 1 });
    await r.add('Key 2', K2, { priority: 2 });
    await r.t.api.patchSettings({ patch: { 'routing.strategy': 'fill-first' } });
    fake.script({ key: K1 }, [unavailable(), unavailable()]);
    await ask(r.client); // k1 fails, k2 serves
    await ask(r.client); // k1 fails again while k2 succeeds: ejected 10 s
    const ejected = (await r.t.api.listCooldowns({})).connections.find((c) => c.connectionId === c1.id)!;
    expect(ejected.lastErrorType).toBe('outlier_ejected');
    r.clock.advance(10_000);

    // k1 is back on probation; its first call is slow, and a second request arrives meanwhile.
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    fake.script({ key: K1 }, [{ chunks: [{ data: JSON.stringify(anthropicMessage('claude-x')), gate }], headers: { 'content-type': 'application/json' } }]);
    const first = ask(r.client);
    await fake.waitFor(() => fake.requestsFor({ key: K1 }).length === 3);
    const second = await ask(r.client);
    expect(second.status).toBe(200);
    expect(keysSeen(fake).slice(-1)).toEqual([K2]); // not a second call into k1
    release();
    expect((await first).status).toBe(200);
    // The probation call succeeded: k1 is back in full service.
    expect((await ask(r.client)).selected).toBe(c1.id);
  });

  /** `n` keys by priority (fill-first); each answers 200, 503 or a hint-less 429 by the fake clock's time since the start. */
  async function timedKeys(n: number, faultAt: (key: number, ms: number) => 'ok' | '503' | '429') {
    const r = await startRig();
    const ids: string[] = [];
    const keys = [K1, K2, K3].slice(0, n);
    for (let k = 0; k < n; k++) ids.push((await r.add(`Key ${k + 1}`, keys[k]!, { priority: k + 1 })).id);
    await r.t.api.patchSettings({ patch: { 'routing.strategy': 'fill-first' } });
    const t0 = r.clock.now();
    const answer = { ok: () => undefined, '503': unavailable, '429': () => rateLimited() };
    keys.forEach((key, k) => fake.script({ key }, [() => answer[faultAt(k, r.clock.now() - t0)]()]));
    return { r, ids };
  }

  it('a key ejected after its 503s and healthy again 3 s later is reconsidered when the only other key fails, long before its ejection ends', async () => {
    // Key 1 fails for the first second, key 2 from 3 s on.
    const { r, ids } = await timedKeys(2, (k, ms) => ((k === 0 ? ms < 1_000 : ms >= 3_000) ? '503' : 'ok'));
    expect((await ask(r.client)).status).toBe(200); // key 1 fails, key 2 serves
    expect((await ask(r.client)).status).toBe(200); // key 1 fails again: ejected 10 s
    expect((await r.t.api.listCooldowns({})).connections.find((c) => c.connectionId === ids[0])!.lastErrorType).toBe('outlier_ejected');
    r.clock.advance(3_000);
    const from = fake.requests.length;
    // Key 2 fails now; key 1, 3 s into a 10 s ejection, has recovered and is probed.
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: ids[0] });
    expect(keysSeen(fake).slice(from)).toEqual([K2, K1]);
  });

  it('the last-resort probe goes to the key whose last failure is oldest, never to the one that failed most recently', async () => {
    // Key 1 fails (503) in its first second, key 2 is rate-limited without a hint from 2 s on,
    // key 3 fails from 4 s on: at 4 s key 1 has recovered.
    const { r, ids } = await timedKeys(3, (k, ms) =>
      k === 0 ? (ms < 1_000 ? '503' : 'ok') : k === 1 ? (ms >= 2_000 ? '429' : 'ok') : ms >= 4_000 ? '503' : 'ok',
    );
    await ask(r.client);
    await ask(r.client); // key 1 ejected for 10 s (key 2 serves)
    r.clock.advance(2_000);
    await ask(r.client); // key 2 rests the model 3 s on our own guess (key 3 serves)
    r.clock.advance(2_000);
    const from = fake.requests.length;
    expect(await ask(r.client)).toMatchObject({ status: 200, selected: ids[0] });
    // Key 3 fails. Key 2's rest ends first, but key 2 failed 2 s ago; key 1 failed 4 s ago: it gets the probe.
    expect(keysSeen(fake).slice(from)).toEqual([K3, K1]);
  });

  it('a request with nothing left to probe waits on a concurrent request’s probe and is served by the key it found healthy', async () => {
    const { r, ids } = await timedKeys(2, (k, ms) => ((k === 0 ? ms < 1_000 : ms >= 3_000) ? '503' : 'ok'));
    await ask(r.client);
    await ask(r.client); // key 1 ejected for 10 s (key 2 serves)
    r.clock.advance(3_000);
    // Key 2 fails from now on; key 1 has recovered, but its first answer is slow.
    let release!: () => void;
    const gate = new Promise<void>((res) => (release = res));
    fake.script({ key: K1 }, [{ chunks: [{ data: JSON.stringify(anthropicMessage('claude-x')), gate }], headers: { 'content-type': 'application/json' } }], {
      repeatLast: false,
    });
    const first = ask(r.client); // key 2 fails, key 1 is probed (slow)
    await fake.waitFor(() => fake.requestsFor({ key: K1 }).length === 3);
    const second = ask(r.client); // key 2 fails; key 1's probe is in flight: this request waits on it
    await fake.waitFor(() => fake.requestsFor({ key: K2 }).length === 4);
    release();
    expect(await first).toMatchObject({ status: 200, selected: ids[0] });
    expect(await second).toMatchObject({ status: 200, selected: ids[0] });
    // Key 2 was called once by each request; key 1 twice after its ejection: the probe and the served wait.
    expect(keysSeen(fake).filter((k) => k === K2)).toHaveLength(4);
    expect(keysSeen(fake).filter((k) => k === K1)).toHaveLength(4);
  });
});

