// Per-connection outbound proxies and the egress-bucketed lockout (SPEC §7c, R-EGR-01..11),
// through the proxy with real loopback proxies: A leaves through an HTTP CONNECT proxy and B
// through a SOCKS5 proxy, both from 127.0.0.2 (one egress IP); C through another HTTP proxy from
// 127.0.0.3. An IP-echo server tells each connection's probe where it comes from.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView } from '../../../src/shared/model';
import { FakeClock } from '../../support/fakeClock';
import { HttpConnectProxy, IpEcho, Socks5Proxy } from '../../support/localProxies';
import { ask, cooldownOf, gatewayError, rawAsk, rulesRigPerTest, type RuleRig } from './support';

const KA = 'sk-opencode-aaaaaaaaaaaa';
const KB = 'sk-opencode-bbbbbbbbbbbb';
const KC = 'sk-opencode-cccccccccccc';
const HOUR = 3_600_000;
const SECRET = 'proxy-pass-word-9f3c';

describe('outbound proxies and the egress-bucketed lockout', () => {
  const { fake, start, stop } = rulesRigPerTest();
  let echo: IpEcho;
  let httpSame: HttpConnectProxy;
  let socksSame: Socks5Proxy;
  let httpOther: HttpConnectProxy;
  beforeAll(async () => {
    echo = await IpEcho.start();
    httpSame = await HttpConnectProxy.start({ localAddress: '127.0.0.2', auth: { user: 'alice', pass: SECRET } });
    socksSame = await Socks5Proxy.start({ localAddress: '127.0.0.2', auth: { user: 'bob', pass: SECRET } });
    httpOther = await HttpConnectProxy.start({ localAddress: '127.0.0.3' });
  });
  afterAll(async () => {
    await Promise.all([echo.close(), httpSame.close(), socksSame.close(), httpOther.close()]);
  });

  /** A, B (same egress IP through different proxies) and C (another IP), all opencode, A first. */
  async function family(r: RuleRig, o: { provider?: string; probe?: boolean; disableCoolingA?: boolean } = {}) {
    const provider = o.provider ?? 'opencode';
    const a = await r.add('A', provider, KA, { priority: 1, outboundProxy: httpSame.url, disableCooling: o.disableCoolingA ?? false });
    const b = await r.add('B', provider, KB, { priority: 2, outboundProxy: socksSame.url });
    const c = await r.add('C', provider, KC, { priority: 3, outboundProxy: httpOther.url });
    if (o.probe !== false) {
      await r.set({ egress: { probeUrl: echo.url } });
      for (const x of [a, b, c]) await r.t.api.probeEgressIp({ id: x.id });
    }
    return { a, b, c };
  }
  const cooling = async (r: RuleRig, ...cs: ConnectionView[]) => Promise.all(cs.map(async (c) => (await cooldownOf(r.t, c.id)).status));

  it('each connection leaves through its own proxy (HTTP CONNECT or SOCKS5, with credentials); answers mask them; attempts log the egress IP', async () => {
    const r = await start();
    const { a, b, c } = await family(r);
    const probes = await Promise.all([a, b, c].map((x) => r.t.api.probeEgressIp({ id: x.id })));
    expect(probes.map((p) => p.ip)).toEqual(['127.0.0.2', '127.0.0.2', '127.0.0.3']);
    expect(await ask(r.client, 'big-pickle')).toMatchObject({ status: 200, selected: a.id });
    expect(httpSame.relayed).toContain(`127.0.0.1:${fake.port}`);
    await r.t.api.createCombo({ name: 'via-b', targets: [{ connectionId: b.id, model: 'big-pickle' }] });
    expect(await ask(r.client, 'via-b')).toMatchObject({ status: 200, selected: b.id });
    expect(socksSame.relayed).toContain(`127.0.0.1:${fake.port}`);
    const log = await r.t.api.listLogs({ limit: 2 });
    expect(log.entries.map((e) => e.attempts[0]!.egressIp)).toEqual(['127.0.0.2', '127.0.0.2']);
    const views = await r.t.api.listConnections();
    expect(views.find((v) => v.id === a.id)!.outboundProxy).toBe(`http://••••@${new URL(httpSame.url).host}`);
    expect(views.find((v) => v.id === c.id)!.outboundProxy).toBe(httpOther.url);
    expect(JSON.stringify(views)).not.toContain(SECRET);
    // Sending the masked value back (an untouched form) keeps the stored proxy.
    await r.t.api.updateConnection({ id: a.id, patch: { outboundProxy: `http://••••@${new URL(httpSame.url).host}` } });
    expect(await ask(r.client, 'big-pickle')).toMatchObject({ status: 200, selected: a.id });
  });

  it('traffic probes a stale egress IP in the background (never on the request path) and refreshes it after 5 minutes', async () => {
    const r = await start();
    await r.add('A', 'opencode', KA, { outboundProxy: socksSame.url });
    await r.set({ egress: { probeUrl: echo.url } });
    const before = echo.seen.length;
    expect((await ask(r.client, 'big-pickle')).status).toBe(200);
    await fake.waitFor(() => echo.seen.length > before);
    // Later attempts record the probed IP (bounded: the probe answers within a few requests).
    const recorded: (string | null)[] = [];
    for (let i = 0; i < 50 && !recorded.includes('127.0.0.2'); i++) {
      await ask(r.client, 'big-pickle');
      recorded.push((await r.t.api.listLogs({ limit: 1 })).entries[0]!.attempts[0]!.egressIp ?? null);
    }
    expect(recorded.at(-1)).toBe('127.0.0.2');
    expect((await r.t.api.listLogs({ limit: 100 })).entries.at(-1)!.attempts[0]!.egressIp ?? null).toBeNull();
    expect(echo.seen.length).toBe(before + 1);
    // Five minutes on, the next request starts one new probe.
    r.clock.advance(5 * 60_000);
    await ask(r.client, 'big-pickle');
    await fake.waitFor(() => echo.seen.length === before + 2);
  });

  it('wrong proxy credentials fail the attempt as a network error and the request fails over', async () => {
    const r = await start();
    const bad = await r.add('Bad', 'acme', KA, { priority: 1, outboundProxy: socksSame.url.replace(SECRET, 'wrong-password') });
    const good = await r.add('Good', 'acme', KB, { priority: 2 });
    const refusals = socksSame.authRefusals;
    expect(await ask(r.client, 'm')).toMatchObject({ status: 200, selected: good.id });
    expect(socksSame.authRefusals).toBeGreaterThan(refusals);
    expect((await cooldownOf(r.t, bad.id)).lastErrorType).toBe('network_error');
  });

  it('R-EGR-01: a 429 on A cools A and B (same egress IP), not C; the request is served by C', async () => {
    const r = await start();
    const { a, b, c } = await family(r);
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    expect(await ask(r.client, 'big-pickle')).toMatchObject({ status: 200, selected: c.id });
    expect(fake.requestsFor({ key: KB })).toHaveLength(0);
    expect(await cooling(r, a, b, c)).toEqual(['cooling', 'cooling', 'active']);
    const cb = await cooldownOf(r.t, b.id);
    expect(cb).toMatchObject({ terminal: false, lastErrorType: 'rate_limit_exceeded' });
    expect(cb.lastError).toContain('shares egress IP 127.0.0.2 with A');
  });

  it('R-EGR-02: subscription-quota text cools A and B about an hour; a plain 429 gives both the backoff cooldown', async () => {
    const r = await start();
    const { a, b } = await family(r);
    fake.script({ key: KA }, [gatewayError(429, 'Monthly usage limit reached for the free tier')]);
    await ask(r.client, 'big-pickle');
    for (const x of [a, b]) expect(await cooldownOf(r.t, x.id)).toMatchObject({ lastErrorType: 'quota_exhausted', remainingMs: HOUR });

    const r2 = await start();
    const f2 = await family(r2);
    fake.reset();
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    await ask(r2.client, 'big-pickle');
    for (const x of [f2.a, f2.b]) expect(await cooldownOf(r2.t, x.id)).toMatchObject({ lastErrorType: 'rate_limit_exceeded', remainingMs: 3_000 });
  });

  it('R-EGR-03: a sibling\'s IP comes from the request log within 24 h (after a restart), not from older rows', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-egress-'));
    try {
      const clock = new FakeClock();
      const r = await start({ clock, dataDir });
      const { a, b, c } = await family(r);
      await r.t.api.createCombo({ name: 'via-b', targets: [{ connectionId: b.id, model: 'big-pickle' }] });
      expect(await ask(r.client, 'via-b')).toMatchObject({ status: 200, selected: b.id });
      await r.t.api.listLogs({ limit: 1 }); // flushed to the store
      await stop(r);

      // After the restart only A is probed: B's IP is known from its logged attempt alone.
      clock.advance(HOUR);
      const r2 = await start({ clock, dataDir });
      await r2.t.api.probeEgressIp({ id: a.id });
      fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
      expect(await ask(r2.client, 'big-pickle')).toMatchObject({ status: 200, selected: c.id });
      expect(await cooling(r2, a, b)).toEqual(['cooling', 'cooling']);

      // 25 h later B's last row is outside the window: A's 429 cools only A.
      await r2.t.api.clearCooldowns({ all: true });
      clock.advance(25 * HOUR);
      await r2.t.api.probeEgressIp({ id: a.id });
      await ask(r2.client, 'big-pickle');
      expect(await cooling(r2, a, b)).toEqual(['cooling', 'active']);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('R-EGR-10: the last known IP is history: a sibling that moved to another route within 24 h may still be cooled (accepted)', async () => {
    const r = await start();
    const { a, b } = await family(r);
    await r.t.api.createCombo({ name: 'via-b', targets: [{ connectionId: b.id, model: 'big-pickle' }] });
    expect(await ask(r.client, 'via-b')).toMatchObject({ status: 200, selected: b.id });
    // B now leaves from 127.0.0.3; its probe is forgotten, its logged attempt still says 127.0.0.2.
    await r.t.api.updateConnection({ id: b.id, patch: { outboundProxy: httpOther.url } });
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    await ask(r.client, 'big-pickle');
    expect(await cooling(r, a, b)).toEqual(['cooling', 'cooling']);
  });

  it('R-EGR-04: with the probe off (cold cache, no rows) only the failing connection cools', async () => {
    const r = await start();
    const probesBefore = echo.seen.length;
    const { a, b, c } = await family(r, { probe: false });
    expect(await ask(r.client, 'big-pickle')).toMatchObject({ status: 200, selected: a.id });
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    expect(await ask(r.client, 'big-pickle')).toMatchObject({ status: 200, selected: b.id });
    expect(await cooling(r, a, b, c)).toEqual(['cooling', 'active', 'active']);
    // Probing off: nothing was asked and no attempt recorded an IP.
    expect(echo.seen.length).toBe(probesBefore);
    expect((await r.t.api.listLogs({ limit: 5 })).entries.flatMap((e) => e.attempts.map((x) => x.egressIp ?? null))).toEqual([null, null, null]);
  });

  it('R-EGR-05: disableCooling on A skips the branch: neither A nor B cools', async () => {
    const r = await start();
    const { a, b } = await family(r, { disableCoolingA: true });
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    await ask(r.client, 'big-pickle');
    expect(await cooling(r, a, b)).toEqual(['active', 'active']);
  });

  it('R-EGR-06: a single opencode connection gets a connection cooldown for a plain 429, no model lock', async () => {
    const r = await start();
    const a = await r.add('Solo', 'opencode', KA);
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    expect((await rawAsk(r.t, 'big-pickle')).status).toBe(429);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'cooling', remainingMs: 3_000, lockouts: [] });
    expect(await r.lockouts()).toEqual([]);
  });

  it('R-EGR-07: inside a combo too, A and B are cooled', async () => {
    const r = await start();
    const { a, b, c } = await family(r);
    await r.t.api.createCombo({ name: 'oc', targets: [{ provider: 'opencode', model: 'big-pickle' }, { provider: 'opencode', model: 'grok-code' }] });
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    expect(await ask(r.client, 'oc')).toMatchObject({ status: 200, selected: c.id });
    expect(await cooling(r, a, b, c)).toEqual(['cooling', 'cooling', 'active']);
  });

  it('R-EGR-08: a banned sibling and one in a longer (2 h) cooldown are left as they are', async () => {
    const r = await start();
    const { a, b, c } = await family(r);
    // B: 2 h through an operator rule on 503 (A's 429 still takes the egress branch).
    await r.set({ providerErrorRules: [{ provider: 'opencode', status: 503, cooldownMs: 2 * HOUR }] });
    await r.t.api.createCombo({ name: 'via-b', targets: [{ connectionId: b.id, model: 'big-pickle' }] });
    await r.t.api.createCombo({ name: 'via-c', targets: [{ connectionId: c.id, model: 'big-pickle' }] });
    fake.script({ key: KB }, [gatewayError(503, 'down')]);
    await ask(r.client, 'via-b');
    expect((await cooldownOf(r.t, b.id)).remainingMs).toBe(2 * HOUR);
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    await ask(r.client, 'big-pickle');
    expect((await cooldownOf(r.t, a.id)).status).toBe('cooling');
    expect(await cooldownOf(r.t, b.id)).toMatchObject({ remainingMs: 2 * HOUR, lastErrorType: 'server_error' });

    // A banned sibling stays banned.
    await r.t.api.clearCooldowns({ all: true });
    await r.t.api.updateConnection({ id: c.id, patch: { outboundProxy: httpSame.url } });
    await r.t.api.probeEgressIp({ id: c.id });
    fake.script({ key: KC }, [gatewayError(403, 'This account has been suspended')]);
    await ask(r.client, 'via-c');
    expect((await cooldownOf(r.t, c.id)).status).toBe('banned');
    await ask(r.client, 'big-pickle');
    expect(await cooldownOf(r.t, c.id)).toMatchObject({ status: 'banned', terminal: true });
  });

  it('R-EGR-09: providers off the list never cool siblings by IP', async () => {
    const r = await start();
    const { a, b, c } = await family(r, { provider: 'acme' });
    fake.script({ key: KA }, [gatewayError(429, 'Rate limit exceeded')]);
    expect(await ask(r.client, 'big-pickle')).toMatchObject({ status: 200, selected: b.id });
    expect(await cooling(r, a, b, c)).toEqual(['active', 'active', 'active']);
    expect((await cooldownOf(r.t, a.id)).lockouts.map((l) => l.origin)).toEqual(['rate_limit']);
  });
});
