// The provider breaker counts only provider-wide evidence in a sliding window with a failure rate,
// sends its probe to the key most likely healthy, and never stays shut while a key succeeds
// (issue 9). Through the proxy with the real SDK, on the fake clock.
import { describe, expect, it } from 'vitest';
import { ask, breakerOf, keysSeen, rateLimited, rigPerTest, unavailable } from './support';

const K1 = 'sk-ant-key-1111111111111';
const K2 = 'sk-ant-key-2222222222222';
const K3 = 'sk-ant-key-3333333333333';

describe('provider breaker evidence', () => {
  const { fake, startRig } = rigPerTest();

  /** Keys 1 and 2 answer 503, key 3 (lower priority) is rate-limited for `retryAfter` s; six requests open the breaker. */
  async function twoDownOneLimited(retryAfter: string) {
    const r = await startRig();
    await r.add('Key 1', K1, { priority: 1 });
    await r.add('Key 2', K2, { priority: 1 });
    const c3 = await r.add('Key 3', K3, { priority: 2 });
    fake.script({ key: K1 }, [unavailable()]);
    fake.script({ key: K2 }, [unavailable()]);
    fake.script({ key: K3 }, [rateLimited({ 'retry-after': retryAfter })], { repeatLast: false });
    for (let i = 0; i < 6; i++) await ask(r.client);
    return { r, c3 };
  }

  it('two keys answering 503 and a third rate-limited open the breaker; once the third recovers the half-open probe lands on it and no request fails', async () => {
    const { r, c3 } = await twoDownOneLimited('20');
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'OPEN', failures: 12 });
    const before = fake.requests.length;
    expect((await ask(r.client)).code).toBe('all_targets_cooling_down');
    expect(fake.requests.length).toBe(before);

    // Key 3's rate limit passes before the breaker half-opens; nobody asks in between.
    r.clock.advance(30_000);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('HALF_OPEN');
    const from = fake.requests.length;
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await ask(r.client));
    expect(fake.requests[from]!.key).toBe(K3);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.every((a) => a.selected === c3.id)).toBe(true);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
    // Keys 1 and 2 are known bad: ejected, not called again for now.
    expect(fake.requests.slice(from).filter((q) => q.key !== K3)).toHaveLength(0);
  });

  it('a key that never failed may probe an OPEN breaker before its reset timeout: it is served at once', async () => {
    const { r, c3 } = await twoDownOneLimited('5');
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('OPEN');
    r.clock.advance(5_000);
    const answer = await ask(r.client);
    expect(answer).toMatchObject({ status: 200, selected: c3.id });
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
    for (let i = 0; i < 10; i++) expect((await ask(r.client)).status).toBe(200);
  });

  it('a provider that fails every other request trips (failure rate in a sliding window, not a streak)', async () => {
    const r = await startRig();
    await r.add('Only', K1);
    let n = 0;
    fake.script({ key: K1 }, [() => (n++ % 2 === 0 ? unavailable() : undefined)]);
    let opened = -1;
    for (let i = 0; i < 40 && opened < 0; i++) {
      await ask(r.client);
      if ((await breakerOf(r.t, 'anthropic')).state === 'OPEN') opened = i + 1;
    }
    // 12 failures (the API-key threshold) among 23 calls: a 52 % failure rate.
    expect(opened).toBe(23);
    const before = fake.requests.length;
    expect((await ask(r.client)).code).toBe('all_targets_cooling_down');
    expect(fake.requests.length).toBe(before);
  });

  it('a provider of three keys where every other call fails trips too: a sibling\'s single success between failures is not a steady key', async () => {
    const r = await startRig();
    await r.add('Key 1', K1);
    await r.add('Key 2', K2);
    await r.add('Key 3', K3);
    let n = 0;
    for (const key of [K1, K2, K3]) fake.script({ key }, [() => (n++ % 2 === 0 ? unavailable() : undefined)]);
    let opened = false;
    const statuses: number[] = [];
    for (let i = 0; i < 60 && !opened; i++) {
      statuses.push((await ask(r.client)).status);
      opened = (await breakerOf(r.t, 'anthropic')).state === 'OPEN';
    }
    // Until it trips, every request is served by a failover to the next key.
    expect(statuses.slice(0, -1).every((st) => st === 200)).toBe(true);
    expect(opened).toBe(true);
  });

  it('failures on one key while its sibling answers (even with 429s) are not provider-wide: the breaker stays CLOSED', async () => {
    const r = await startRig();
    await r.add('Key 1', K1, { priority: 1 });
    await r.add('Key 2', K2, { priority: 2 });
    fake.script({ key: K1 }, [unavailable()]);
    fake.script({ key: K2 }, [rateLimited()]);
    for (let i = 0; i < 30; i++) {
      await ask(r.client);
      r.clock.advance(1_000);
    }
    expect(keysSeen(fake).filter((k) => k === K1)).toHaveLength(30);
    expect((await breakerOf(r.t, 'anthropic')).state).toBe('CLOSED');
  });

  it('failures of a key while another key is succeeding never move the breaker', async () => {
    const r = await startRig();
    await r.add('Key 1', K1);
    await r.add('Key 2', K2);
    await r.t.api.patchResilience({ patch: { outlierEjection: { enabled: false } } });
    fake.script({ key: K1 }, [unavailable()]);
    for (let i = 0; i < 40; i++) expect((await ask(r.client)).status).toBe(200);
    expect(keysSeen(fake).filter((k) => k === K1).length).toBeGreaterThanOrEqual(20);
    expect(await breakerOf(r.t, 'anthropic')).toMatchObject({ state: 'CLOSED' });
  });

  it('two keys failing (503 and dropped sockets) beside one healthy key: no request fails, the breaker stays CLOSED, each bad key costs a few calls', async () => {
    const r = await startRig();
    await r.add('Key 1', K1, { authClass: 'oauth', kind: 'anthropic-compatible', provider: 'claude' });
    await r.add('Key 2', K2, { authClass: 'oauth', kind: 'anthropic-compatible', provider: 'claude' });
    await r.add('Key 3', K3, { authClass: 'oauth', kind: 'anthropic-compatible', provider: 'claude' });
    fake.script({ key: K1 }, [unavailable()]);
    fake.script({ key: K2 }, [{ destroy: true }]);
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) {
      statuses.push((await ask(r.client, 'claude/claude-x')).status);
      r.clock.advance(1_000);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect((await breakerOf(r.t, 'claude')).state).toBe('CLOSED');
    // 120 s of traffic: ejections of 10, 20, 30, 40 s, so each bad key is called at most 2 + 4 times.
    for (const k of [K1, K2]) expect(keysSeen(fake).filter((x) => x === k).length).toBeLessThanOrEqual(6);
  });
});
