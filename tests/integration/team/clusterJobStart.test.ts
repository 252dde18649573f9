// How a clustered Bottleneck job starts once Redis gave it a slot (admission/teamLimiters.ts,
// startJobsWithoutTimer), against a real redis-server: Bottleneck's own start waits on a 0 ms
// timer (1 ms or more in Node); ours starts without any timer, and the cap, the expiration and the
// slot's return are still Bottleneck's.
import Bottleneck from 'bottleneck';
import Redis from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startJobsWithoutTimer } from '../../../src/main/engine/admission/teamLimiters';
import { hasRedisServer, RedisServer } from '../../support/redisServer';

describe.skipIf(!hasRedisServer())('a clustered job starts as soon as it has its slot', () => {
  let redis: RedisServer;
  const opened: Bottleneck[] = [];
  let n = 0;

  beforeAll(async () => {
    redis = await RedisServer.start();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(opened.splice(0).map((b) => b.disconnect(true)));
  });

  /** A limiter clustered on the test's Redis, on its own client, sharing `id` with any other made with it. */
  async function limiter(id: string, maxConcurrent: number, patched = true): Promise<Bottleneck> {
    const client = new Redis(redis.url);
    const b = new Bottleneck({ id, datastore: 'ioredis', connection: new Bottleneck.IORedisConnection({ client }), maxConcurrent });
    opened.push(b);
    if (patched) startJobsWithoutTimer(b);
    await b.ready();
    return b;
  }

  it('no timer has to fire for a job with a slot to run; unpatched, Bottleneck waits on one', async () => {
    const id = `start-${n++}`;
    const ours = await limiter(id, 4);
    const theirs = await limiter(id, 4, false);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });

    await expect(ours.schedule({ expiration: 60_000 }, async () => 'ran')).resolves.toBe('ran');

    let ran = false;
    const waiting = theirs.schedule(async () => {
      ran = true;
    });
    // Its slot is taken in Redis (the job is RUNNING), and the job waits on a timer nobody advances.
    // (Polled on setImmediate: this test's setTimeout is the fake one.)
    for (let i = 0; i < 100_000 && theirs.counts().RUNNING !== 1; i++) await new Promise((r) => setImmediate(r));
    expect(theirs.counts().RUNNING).toBe(1);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(ran).toBe(false);
    vi.advanceTimersByTime(1);
    await waiting;
    expect(ran).toBe(true);
  });

  it('a cap of 2 holds across two instances for 12 jobs', async () => {
    const id = `cap-${n++}`;
    const a = await limiter(id, 2);
    const b = await limiter(id, 2);
    let running = 0;
    let most = 0;
    let done = 0;
    const task = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 15));
      running--;
      done++;
    };
    await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).schedule({ expiration: 30_000 }, task)));
    expect(done).toBe(12);
    expect(most).toBe(2);
    // Every slot came back to the team.
    expect((await a.running()) + (await b.running())).toBe(0);
  });

  it('a job that outlives its expiration fails as expired and its slot comes back', async () => {
    const id = `expire-${n++}`;
    const a = await limiter(id, 1);
    const never = new Promise<void>(() => {});
    await expect(a.schedule({ expiration: 150 }, () => never)).rejects.toThrow(/timed out after 150 ms/);
    await expect(a.schedule({ expiration: 30_000 }, async () => 'next')).resolves.toBe('next');
    expect(await a.running()).toBe(0);
  });
});
