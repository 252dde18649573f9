// `npm run bench:team` (also part of `npm run bench`): what team mode (issue 26) costs a request.
// One fake upstream (0 ms), one redis-server on loopback, and two Switchyards started as `npm run
// serve` starts them: one alone, one in a team (`--redis`). Each serves the same requests in
// interleaved rounds (the order reversed on odd rounds), c=1 and c=32, on two connections:
//   - plain: a healthy key with no cap (the common case: team mode adds no round trip to it);
//   - capped: a key with a concurrency cap of 64 (its slots are taken on Bottleneck's Redis
//     clustering in team mode: the round trips a cap costs).
// Figures: req/s and p50 / p99 latency per cell, medians of the rounds, and the team's ratio to the
// instance alone. Quick run: TEAM_ROUNDS=1 TEAM_SECONDS=2 npx tsx bench/team.ts
import autocannon from 'autocannon';
import Redis from 'ioredis';
import { existsSync } from 'node:fs';
import { RedisServer, hasRedisServer } from '../tests/support/redisServer';
import { startSwitchyard, startUpstream } from './lib';

const num = (name: string, fallback: number) => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const ROUNDS = Math.round(num('TEAM_ROUNDS', 3));
const SECONDS = num('TEAM_SECONDS', 6);
const CAP = 64;

interface Shot {
  requests: number;
  /** Commands Redis ran during the shot (INFO commandstats, the INFO calls themselves left out; a script's own commands counted). */
  redisCalls: number;
  /** Of which scripts (EVAL, EVALSHA): one round trip each. */
  redisScripts: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main() {
  if (!existsSync('out/main/serve.js')) {
    process.stderr.write('Build first: npm run build\n');
    process.exit(1);
  }
  if (!hasRedisServer()) {
    process.stderr.write('team bench skipped: redis-server is not installed (apt-get install redis-server)\n');
    return;
  }
  const redis = await RedisServer.start();
  const upstream = await startUpstream();
  const alone = await startSwitchyard();
  const team = await startSwitchyard({ SWITCHYARD_REDIS_URL: redis.url, SWITCHYARD_TEAM: 'bench' });
  const stats = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  const redisCalls = async () => {
    const text = String(await stats.info('commandstats'));
    let calls = 0;
    let scripts = 0;
    for (const m of text.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
      if (m[1] === 'info') continue;
      calls += Number(m[2]);
      if (m[1] === 'eval' || m[1] === 'evalsha') scripts += Number(m[2]);
    }
    return { calls, scripts };
  };
  try {
    for (const sy of [alone, team]) {
      await sy.api('POST', '/api/providers', { name: 'plain', kind: 'openai-compatible', provider: 'plain', baseUrl: `${upstream.url}/v1`, secret: 'sk-plain-bench-key' });
      await sy.api('POST', '/api/providers', {
        name: 'capped',
        kind: 'openai-compatible',
        provider: 'capped',
        baseUrl: `${upstream.url}/v1`,
        secret: 'sk-capped-bench-key',
        rateLimitOverrides: { maxConcurrent: CAP },
      });
    }
    const cells = [1, 32].flatMap((c) =>
      (['plain', 'capped'] as const).flatMap((conn) =>
        (['alone', 'team'] as const).map((who) => ({ key: `${conn} c=${c} ${who}`, conn, c, who, sy: who === 'alone' ? alone : team })),
      ),
    );
    const body = (conn: string) => JSON.stringify({ model: `${conn}/bench-delay-0`, messages: [{ role: 'user', content: 'hello' }] });
    const shoot = async (cell: (typeof cells)[number], seconds: number): Promise<Shot> => {
      const before = await redisCalls();
      const r = await autocannon({
        url: `${cell.sy.proxyUrl}/v1/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${cell.sy.clientKey}` },
        body: body(cell.conn),
        connections: cell.c,
        duration: seconds,
      });
      const after = await redisCalls();
      return { requests: r.requests.total, redisCalls: after.calls - before.calls, redisScripts: after.scripts - before.scripts, rps: r.requests.total / r.duration, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
    };
    for (const cell of cells) await shoot(cell, 1);
    const shots = new Map(cells.map((c) => [c.key, [] as Shot[]]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const cell of round % 2 ? [...cells].reverse() : cells) shots.get(cell.key)!.push(await shoot(cell, SECONDS));
      process.stderr.write(`  round ${round + 1}/${ROUNDS} done\n`);
    }
    const fig = (k: string) => {
      const s = shots.get(k)!;
      const requests = Math.max(1, s.reduce((a, x) => a + x.requests, 0));
      const perRequest = s.reduce((a, x) => a + x.redisCalls, 0) / requests;
      const scriptsPerRequest = s.reduce((a, x) => a + x.redisScripts, 0) / requests;
      return { perRequest, scriptsPerRequest, rps: median(s.map((x) => x.rps)), p50: median(s.map((x) => x.p50)), p99: median(s.map((x) => x.p99)), errors: s.reduce((a, x) => a + x.errors, 0) };
    };
    const rows: string[] = [];
    for (const c of [1, 32]) {
      for (const conn of ['plain', 'capped']) {
        const a = fig(`${conn} c=${c} alone`);
        const t = fig(`${conn} c=${c} team`);
        rows.push(
          `| ${conn.padEnd(6)} | ${String(c).padStart(2)} | ${Math.round(a.rps).toLocaleString('en-US').padStart(7)} | ${Math.round(t.rps).toLocaleString('en-US').padStart(7)} | ${(t.rps / a.rps).toFixed(2)} | ${a.p50} / ${a.p99} | ${t.p50} / ${t.p99} | ${t.scriptsPerRequest.toFixed(1)} / ${t.perRequest.toFixed(1)} | ${a.errors + t.errors} |`,
        );
      }
    }
    process.stdout.write(
      [
        '',
        `Team mode's cost (issue 26): ${process.version}, Redis on loopback, ${ROUNDS} interleaved round(s) of ${SECONDS} s, medians`,
        '| key    | c  | alone req/s | team req/s | team x alone | alone p50 / p99 ms | team p50 / p99 ms | Redis scripts / commands per team request | errors |',
        '|--------|----|-------------|------------|--------------|--------------------|-------------------|-------------------------------------------|--------|',
        ...rows,
        `plain: a healthy key without a cap (no round trip to Redis per request); capped: a cap of ${CAP}, its slots on Bottleneck's Redis clustering in team mode. Redis's commands include those its scripts ran (a script is one round trip)`,
        '',
      ].join('\n'),
    );
  } finally {
    stats.disconnect();
    alone.stop();
    team.stop();
    upstream.stop();
    await redis.stop();
  }
}

main().then(
  () => setTimeout(() => process.exit(0), 1000),
  (e: unknown) => {
    process.stderr.write(`team bench failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
