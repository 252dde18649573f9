// The cooldown pieces error rules and the egress lockout use (R-PER-16/17, R-EGR-01..10): the
// operator cooldown, holdUntil, the egress branch, the sibling selection and the egress-IP cache.
import { describe, expect, it } from 'vitest';
import { classifyStatus } from '../../../src/main/engine/resilience/classifyFailure';
import { holdUntil, onConnectionFailure, type FailureEvent } from '../../../src/main/engine/resilience/connectionCooldown';
import { egressBranchApplies, egressSiblings, familyOthers } from '../../../src/main/engine/resilience/egressLockout';
import { EGRESS_BUCKETED_LOCK_PROVIDERS } from '../../../src/main/engine/resilience/providerErrorRules';
import { emptyHealth } from '../../../src/main/engine/store/connectionsRepo';
import { EGRESS_CACHE_TTL_MS, EgressIps, parseEgressIp } from '../../../src/main/engine/upstream/egressIps';
import type { UpstreamClient } from '../../../src/main/engine/upstream/client';
import type { ConnectionRegistry } from '../../../src/main/engine/connections/registry';
import { connectionRecord } from '../../support/builders';
import { FakeClock } from '../../support/fakeClock';
import { bodyOf } from '../../support/scriptedBody';

const S = { baseMs: 3_000, maxBackoffSteps: 10, coolOnStall: false };
const NOW = 1_000_000;
const ev = (over: Partial<FailureEvent>): FailureEvent => ({
  rule: { kind: 'operator', ms: 600_000 },
  reason: 'rate_limit_exceeded',
  status: 429,
  message: 'x',
  now: NOW,
  delay: { source: 'backoff' },
  concurrent: false,
  disableCooling: false,
  ...over,
});

describe('the operator cooldown and holdUntil', () => {
  it('an operator rule cools for exactly its time and resets the backoff level', () => {
    const out = onConnectionFailure({ ...emptyHealth(), backoffLevel: 4 }, ev({}), S);
    expect(out.health).toMatchObject({ rateLimitedUntil: NOW + 600_000, backoffLevel: 0, testStatus: 'unavailable' });
  });

  it('R-PER-17: never shortens a longer cooldown, never overwrites a terminal state', () => {
    const longer = { ...emptyHealth(), testStatus: 'unavailable' as const, rateLimitedUntil: NOW + 3_600_000 };
    expect(onConnectionFailure(longer, ev({}), S).health.rateLimitedUntil).toBe(NOW + 3_600_000);
    const banned = { ...emptyHealth(), testStatus: 'banned' as const };
    expect(onConnectionFailure(banned, ev({}), S).health).toBe(banned);
  });

  it('R-EGR-02: a rate-limit rule with a floor cools at least that long', () => {
    const out = onConnectionFailure(emptyHealth(), ev({ rule: { kind: 'rate_limit', minMs: 3_600_000 }, reason: 'quota_exhausted' }), S);
    expect(out.health.rateLimitedUntil).toBe(NOW + 3_600_000);
    expect(out.health.backoffLevel).toBe(1);
  });

  it('R-EGR-08: holdUntil leaves terminal and longer-cooling connections alone and keeps the backoff level', () => {
    const e = { until: NOW + 60_000, reason: 'rate_limit_exceeded', status: 429, message: 'shares egress IP', now: NOW };
    const banned = { ...emptyHealth(), testStatus: 'credits_exhausted' as const };
    expect(holdUntil(banned, e)).toBe(banned);
    const longer = { ...emptyHealth(), rateLimitedUntil: NOW + 7_200_000 };
    expect(holdUntil(longer, e)).toBe(longer);
    const held = holdUntil({ ...emptyHealth(), backoffLevel: 3 }, e);
    expect(held).toMatchObject({ rateLimitedUntil: NOW + 60_000, testStatus: 'unavailable', backoffLevel: 3, lastErrorType: 'rate_limit_exceeded' });
  });
});

describe('the egress branch', () => {
  const v = (status: number, body: string) => classifyStatus(status, {}, body, NOW);

  it('R-EGR-01/02: a family 429 read as quota or rate limit takes the branch; other statuses and reasons do not', () => {
    const oc = { provider: 'opencode', disableCooling: false };
    expect(egressBranchApplies(oc, v(429, 'slow down'))).toBe(true);
    expect(egressBranchApplies(oc, v(429, 'monthly usage limit reached'))).toBe(true);
    expect(v(429, 'monthly usage limit reached').reason).toBe('quota_exhausted');
    expect(egressBranchApplies(oc, v(429, 'too many concurrent requests'))).toBe(false);
    expect(egressBranchApplies(oc, v(503, 'down'))).toBe(false);
  });

  it('R-EGR-05/09: disableCooling and providers off the list skip it; the list is the opencode family only', () => {
    expect(egressBranchApplies({ provider: 'opencode', disableCooling: true }, v(429, 'x'))).toBe(false);
    expect(egressBranchApplies({ provider: 'openai', disableCooling: false }, v(429, 'x'))).toBe(false);
    expect(EGRESS_BUCKETED_LOCK_PROVIDERS).toEqual(['opencode', 'opencode-zen']);
  });

  it('R-EGR-01: siblings are family connections whose last known IP is the failing one\'s', () => {
    const a = connectionRecord({ provider: 'opencode' });
    const b = connectionRecord({ provider: 'opencode-zen' });
    const c = connectionRecord({ provider: 'opencode' });
    const d = connectionRecord({ provider: 'openai' });
    const e = connectionRecord({ provider: 'opencode', disableCooling: true });
    const others = familyOthers(a, [a, b, c, d, e]);
    expect(others).toEqual([b, c, e]);
    const ips = new Map([
      [b.id, '203.0.113.7'],
      [c.id, '198.51.100.1'],
      [d.id, '203.0.113.7'],
      [e.id, '203.0.113.7'],
    ]);
    expect(egressSiblings(a, [a, b, c, d, e], '203.0.113.7', ips)).toEqual([b]);
  });
});

describe('egress IPs', () => {
  it('reads plain-text and JSON IP-echo answers', () => {
    expect(parseEgressIp('203.0.113.7\n')).toBe('203.0.113.7');
    expect(parseEgressIp('{"ip":"2001:db8::1"}')).toBe('2001:db8::1');
    expect(parseEgressIp('{"origin":"198.51.100.4, 10.0.0.1"}')).toBe('198.51.100.4');
    expect(parseEgressIp('<html>hello</html>')).toBeNull();
    expect(parseEgressIp('{"ip": 5}')).toBeNull();
  });

  function rig(history = new Map<string, { ip: string; at: number }>()) {
    const clock = new FakeClock();
    let answer = '203.0.113.7';
    const calls: (string | null | undefined)[] = [];
    const upstream = {
      request: async (req: { proxy?: string | null }) => {
        calls.push(req.proxy);
        return { status: 200, headers: {}, body: bodyOf(answer) };
      },
    } as unknown as UpstreamClient;
    const registry = { outboundProxyOf: () => 'socks5://127.0.0.1:1080', outboundProxyUnreadable: () => false } as unknown as ConnectionRegistry;
    let url = 'http://echo.test/';
    const egress = new EgressIps({ upstream, registry, clock, probeUrl: () => url, history: (ids, since) => new Map([...history].filter(([id, h]) => ids.includes(id) && h.at >= since)) });
    return { clock, egress, calls, setAnswer: (a: string) => (answer = a), setUrl: (u: string) => (url = u) };
  }

  it('a probe goes through the connection\'s proxy and counts as current for 5 minutes', async () => {
    const { clock, egress, calls } = rig();
    const conn = connectionRecord();
    expect(await egress.probe(conn)).toMatchObject({ ip: '203.0.113.7', error: null });
    expect(calls).toEqual(['socks5://127.0.0.1:1080']);
    expect(egress.fresh(conn.id, clock.now())).toBe('203.0.113.7');
    clock.advance(EGRESS_CACHE_TTL_MS);
    expect(egress.fresh(conn.id, clock.now())).toBeNull();
    // Still the last known IP (history, not state) within the 24 h window.
    expect(egress.lastKnown(conn.id, clock.now())).toBe('203.0.113.7');
    clock.advance(24 * 3_600_000);
    expect(egress.lastKnown(conn.id, clock.now())).toBeNull();
  });

  it('R-EGR-03/04: the newer of the probe and the request log wins; nothing known is null', async () => {
    const clock = new FakeClock();
    const r = rig(new Map([['c-logged', { ip: '198.51.100.9', at: clock.now() + 1 }]]));
    r.clock.advance(10);
    expect(r.egress.lastKnownOf(['c-logged', 'c-none'], r.clock.now())).toEqual(new Map([['c-logged', '198.51.100.9']]));
  });

  it('refreshIfStale probes once while stale and not at all when probing is off', async () => {
    const { clock, egress, calls, setUrl } = rig();
    const conn = connectionRecord();
    egress.refreshIfStale(conn, clock.now());
    egress.refreshIfStale(conn, clock.now());
    await egress.probe(conn);
    expect(calls).toHaveLength(1);
    setUrl('');
    clock.advance(EGRESS_CACHE_TTL_MS);
    egress.refreshIfStale(conn, clock.now());
    expect(calls).toHaveLength(1);
    expect(await egress.probe(conn)).toMatchObject({ ip: null, error: expect.stringContaining('not set') });
  });

  it('an answer that is not an IP is a failed probe, retried only after a minute', async () => {
    const { clock, egress, calls, setAnswer } = rig();
    const conn = connectionRecord();
    setAnswer('nope');
    expect(await egress.probe(conn)).toMatchObject({ ip: null, error: 'the probe URL did not answer an IP address' });
    egress.refreshIfStale(conn, clock.now() + 30_000);
    expect(calls).toHaveLength(1);
    egress.refreshIfStale(conn, clock.now() + 60_000);
    expect(calls).toHaveLength(2);
  });
});
