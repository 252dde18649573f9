// Team mode over TLS (issue 26): a rediss:// address connects to a Redis that speaks TLS only,
// trusting the private authority given by SWITCHYARD_REDIS_CA; without it the certificate is
// refused, in words, and the engine goes on serving alone.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/main/engine/clock';
import { createLogger, MemorySink, SecretRedactor } from '../../../src/main/engine/logger';
import { createTeam } from '../../../src/main/engine/team';
import { hasRedisServer, RedisServer } from '../../support/redisServer';

const FIXTURES = join(__dirname, '..', '..', 'fixtures', 'tls');
const log = createLogger({ sinks: [new MemorySink()], redactor: new SecretRedactor(), now: () => Date.now() });

describe.skipIf(!hasRedisServer())('team mode over TLS', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await RedisServer.start({ password: 'tls-pass', tls: { cert: join(FIXTURES, 'redis-test.crt'), key: join(FIXTURES, 'redis-test.key') } });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('shares records over rediss:// with the private authority trusted', async () => {
    expect(redis.url.startsWith('rediss://')).toBe(true);
    const a = await createTeam({ url: redis.url, name: 'tls', clock: systemClock, log, tlsCaFile: join(FIXTURES, 'redis-test.crt') });
    const b = await createTeam({ url: redis.url, name: 'tls', clock: systemClock, log, tlsCaFile: join(FIXTURES, 'redis-test.crt') });
    try {
      const seen = new Map<string, unknown>();
      const ta = a.table<number>('t', () => {});
      b.table<number>('t', (k, v) => seen.set(k, v));
      await a.start();
      await b.start();
      expect(a.status().state).toBe('connected');
      ta.publish('k', 7, 10_000);
      for (let i = 0; i < 200 && !seen.has('k'); i++) await new Promise((r) => setTimeout(r, 10));
      expect(seen.get('k')).toBe(7);
      expect(a.status().address).not.toContain('tls-pass');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('refuses a certificate it cannot trust, says so in words, and answers locally', async () => {
    const t = await createTeam({ url: redis.url, name: 'tls', clock: systemClock, log });
    try {
      await t.start();
      expect(t.status().state).toBe('degraded');
      expect(t.status().lastError).toMatch(/certificate/);
      expect(await t.claim('x', 'me', 1_000)).toBe('local');
    } finally {
      await t.close();
    }
  });
});
