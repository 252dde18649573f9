// Exclusive connection leases (issue 14, SPEC §2d) through HTTP: the lifecycle on the proxy port
// (acquire, use, renew, release), the generation barrier (a stale generation or another key never
// reaches an upstream), contention (429 lease-capacity-unavailable with a bounded Retry-After),
// a lease that moves when its connection cools (R-LS-09), ordinary ineligibility (R-LS-12),
// persistence, and bad input refused with a typed 4xx and nothing written.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { Rig } from '../resilience/support';
import { anthropicMessage } from '../../support/fakeUpstream';
import { accountLimited, rigPerTest } from '../resilience/support';
import { ENV, KEYS, leaseCall, leaseHeaders, PROXY_ONLY_HEADERS, say, trio, type Trio } from './support';

const OWNER = /^vlo_[A-Za-z0-9_-]{43}$/;

interface Managed {
  secret: string;
  id: string;
  client: Anthropic;
  lease(body: unknown): ReturnType<typeof leaseCall>;
}

async function managedKey(rig: Rig, name: string, allowed: string[]): Promise<Managed> {
  const { key, secret } = await rig.t.api.createClientKey({ name, scopes: ['lease:exclusive'], allowedConnections: allowed });
  return {
    secret,
    id: key.id,
    client: new Anthropic({ baseURL: rig.t.proxyUrl, apiKey: secret, maxRetries: 0 }),
    lease: (body) => leaseCall(rig.t.proxyUrl, secret, body),
  };
}

const leaseRows = (rig: Rig) => rig.t.engine.db.prepare('SELECT * FROM session_leases').all() as Record<string, unknown>[];

describe('exclusive leases', () => {
  const { fake, startRig } = rigPerTest();
  const setup = async (): Promise<Trio> => trio(await startRig({ env: ENV }));

  it('acquire, use, renew, a stale generation refused before any upstream call, release', async () => {
    const { rig, conns } = await setup();
    const k = await managedKey(rig, 'Worker', [conns[1]!.id, conns[2]!.id]);

    const acquired = await k.lease({ action: 'acquire', label: 'worker 1' });
    expect(acquired.status).toBe(200);
    const { owner, generation, connectionId, expiresAt, ttlMs } = acquired.body.lease;
    expect(owner).toMatch(OWNER);
    expect(connectionId).toBe(conns[1]!.id);
    expect(ttlMs).toBe(300_000);
    expect(expiresAt).toBe(rig.clock.now() + 300_000);
    expect(acquired.body.headers).toEqual({ 'X-Switchyard-Lease-Owner': owner, 'X-Switchyard-Lease-Generation': String(generation) });
    // Only the owner's SHA-256 is stored.
    const rows = leaseRows(rig);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.owner_hash).toBe(createHash('sha256').update(owner).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(owner.slice(4));

    // Use: every request goes to the leased connection, whatever the model (R-LS-08), in either spelling.
    for (const [model, spelling] of [['claude-x', 'Switchyard'], ['claude-y', 'OmniRoute'], ['claude-x', 'Switchyard']] as const) {
      const r = await say(k.client, leaseHeaders(owner, generation, spelling), model);
      expect(r).toMatchObject({ status: 200, selected: conns[1]!.id });
    }
    const used = (await rig.t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(used.lease).toMatchObject({ leaseId: acquired.body.lease.id, generation, result: 'held', connectionId: conns[1]!.id });
    expect(used.attempts[0]!.via).toBe('lease');

    // Renew: a new generation and expiry; the old generation is stale from now on.
    rig.clock.advance(60_000);
    const renewed = await k.lease({ action: 'renew', owner, generation, ttlMs: 120_000 });
    expect(renewed.status).toBe(200);
    expect(renewed.body.lease.generation).toBeGreaterThan(generation);
    expect(renewed.body.lease.expiresAt).toBe(rig.clock.now() + 120_000);
    expect(renewed.body.lease.owner).toBeUndefined();
    const before = fake.requests.length;
    const stale = await say(k.client, leaseHeaders(owner, generation));
    expect(stale.status).toBe(409);
    expect(stale.error).toMatchObject({ code: 'lease_generation_stale' });
    expect(stale.error!.message).not.toContain(String(renewed.body.lease.generation));
    expect(fake.requests.length).toBe(before);
    expect((await rig.t.api.listLogs({ limit: 1 })).entries[0]!).toMatchObject({ status: 409, errorCode: 'lease_generation_stale', attempts: [] });
    expect((await say(k.client, leaseHeaders(owner, renewed.body.lease.generation))).status).toBe(200);

    // Release: the connection is free, the owner holds nothing.
    expect((await k.lease({ action: 'release', owner, generation })).body.error.code).toBe('lease_generation_stale');
    const released = await k.lease({ action: 'release', owner, generation: renewed.body.lease.generation });
    expect(released).toMatchObject({ status: 200, body: { released: true } });
    expect(leaseRows(rig)).toHaveLength(0);
    const gone = await say(k.client, leaseHeaders(owner, renewed.body.lease.generation));
    expect(gone).toMatchObject({ status: 404, error: { code: 'lease_not_found' } });
    expect(fake.requests.length).toBe(before + 1);
  });

  it('two owners contend for one connection: the second gets 429 lease-capacity-unavailable with a bounded Retry-After', async () => {
    const { rig, conns } = await setup();
    const one = await managedKey(rig, 'One', [conns[0]!.id]);
    const two = await managedKey(rig, 'Two', [conns[0]!.id]);
    const held = await one.lease({ action: 'acquire', ttlMs: 30_000 });
    expect(held.status).toBe(200);
    rig.clock.advance(10_000);
    const refused = await two.lease({ action: 'acquire' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'lease-capacity-unavailable', status: 'waiting-for-capacity', retry_after: 20 });
    expect(refused.retryAfter).toBe('20');
    expect(leaseRows(rig)).toHaveLength(1);

    // A long lease: the hint is bounded (60 s), not the whole hour.
    await one.lease({ action: 'release', owner: held.body.lease.owner, generation: held.body.lease.generation });
    await one.lease({ action: 'acquire', ttlMs: 3_600_000 });
    expect((await two.lease({ action: 'acquire' })).retryAfter).toBe('60');
  });

  it('a leased request whose every eligible candidate is held by another lease gets 429 waiting-for-capacity', async () => {
    const { rig, conns } = await setup();
    const one = await managedKey(rig, 'One', [conns[0]!.id]);
    const two = await managedKey(rig, 'Two', [conns[0]!.id, conns[1]!.id]);
    await one.lease({ action: 'acquire', ttlMs: 45_000 });
    const mine = (await two.lease({ action: 'acquire' })).body.lease;
    expect(mine.connectionId).toBe(conns[1]!.id);
    // Two's own connection cools (account-wide 429); the only other candidate is One's.
    fake.script({ key: KEYS[1] }, [accountLimited({ 'retry-after': '120' })], { repeatLast: false });
    const first = await say(two.client, leaseHeaders(mine.owner, mine.generation));
    expect(first.status).toBe(429);
    const before = fake.requests.length;
    const r = await say(two.client, leaseHeaders(mine.owner, mine.generation));
    expect(r.status).toBe(429);
    expect(r.error).toMatchObject({ code: 'lease-capacity-unavailable', status: 'waiting-for-capacity' });
    expect(Number(r.retryAfter)).toBeLessThanOrEqual(45);
    expect(fake.requests.length).toBe(before);
  });

  it('the leased connection cools: the same generation moves to another free allowed connection (R-LS-09)', async () => {
    const { rig, conns } = await setup();
    const k = await managedKey(rig, 'Mover', [conns[0]!.id, conns[2]!.id]);
    const lease = (await k.lease({ action: 'acquire' })).body.lease;
    expect(lease.connectionId).toBe(conns[0]!.id);
    fake.script({ key: KEYS[0] }, [accountLimited({ 'retry-after': '60' })], { repeatLast: false });
    const r = await say(k.client, leaseHeaders(lease.owner, lease.generation));
    expect(r).toMatchObject({ status: 200, selected: conns[2]!.id });
    expect((await rig.t.api.listLogs({ limit: 1 })).entries[0]!.lease).toMatchObject({ result: 'moved', movedToConnectionId: conns[2]!.id });
    const view = await rig.t.api.listLeases();
    expect(view.leases).toEqual([expect.objectContaining({ id: lease.id, connectionId: conns[2]!.id, generation: lease.generation, clientKeyName: 'Mover' })]);
    // It stays there: the lease owns the new connection now, and the first is free.
    rig.clock.advance(61_000);
    expect((await say(k.client, leaseHeaders(lease.owner, lease.generation))).selected).toBe(conns[2]!.id);
    // The connection outside the pool was never called.
    expect(fake.requestsFor({ key: KEYS[1] })).toHaveLength(0);
  });

  it('every allowed connection cooling without any lease in the way keeps the usual routing error (R-LS-12)', async () => {
    const { rig, conns } = await setup();
    const k = await managedKey(rig, 'Solo', [conns[0]!.id]);
    const lease = (await k.lease({ action: 'acquire' })).body.lease;
    fake.script({ key: KEYS[0] }, [accountLimited({ 'retry-after': '60' })], { repeatLast: false });
    expect((await say(k.client, leaseHeaders(lease.owner, lease.generation))).status).toBe(429);
    const r = await say(k.client, leaseHeaders(lease.owner, lease.generation));
    expect(r.status).toBe(503);
    expect(r.error?.code).toBe('all_targets_cooling_down');
  });

  it('the barrier binds the client key: the same owner and generation from another key are refused with no upstream call (R-LS-07)', async () => {
    const { rig, conns } = await setup();
    const a = await managedKey(rig, 'A', [conns[0]!.id]);
    const b = await managedKey(rig, 'B', [conns[0]!.id, conns[1]!.id]);
    const lease = (await a.lease({ action: 'acquire' })).body.lease;
    const before = fake.requests.length;
    const r = await say(b.client, leaseHeaders(lease.owner, lease.generation));
    expect(r).toMatchObject({ status: 403, error: { code: 'lease_key_mismatch' } });
    expect((await b.lease({ action: 'renew', owner: lease.owner, generation: lease.generation })).body.error.code).toBe('lease_key_mismatch');
    expect((await b.lease({ action: 'release', owner: lease.owner, generation: lease.generation })).status).toBe(403);
    // A key without the scope presenting a lease is refused the same way, before any call.
    expect((await say(rig.client, leaseHeaders(lease.owner, lease.generation))).error?.code).toBe('lease_scope_missing');
    expect(fake.requests.length).toBe(before);
    expect(leaseRows(rig)).toHaveLength(1);
    expect(leaseRows(rig)[0]!.generation).toBe(lease.generation);
  });

  it('bad input gets a typed 4xx and writes nothing', async () => {
    const { rig, conns } = await setup();
    const k = await managedKey(rig, 'Strict', [conns[0]!.id]);
    const empty = (await rig.t.api.createClientKey({ name: 'Empty pool', scopes: ['lease:exclusive'] })).secret;
    const cases: [string, unknown, number, string, string?][] = [
      [rig.t.clientKey, { action: 'acquire' }, 403, 'lease_scope_missing'],
      [empty, { action: 'acquire' }, 403, 'lease_no_allowed_connections'],
      [k.secret, { action: 'grab' }, 400, 'invalid_request', 'action'],
      [k.secret, {}, 400, 'invalid_request', 'action'],
      [k.secret, { action: 'renew', owner: 'vlo_short', generation: 1 }, 400, 'invalid_request', 'owner'],
      [k.secret, { action: 'release', owner: `vlo_${'a'.repeat(43)}`, generation: 'one' }, 400, 'invalid_request', 'generation'],
      [k.secret, { action: 'acquire', owner: 'not-an-owner' }, 400, 'invalid_request', 'owner'],
      [k.secret, { action: 'acquire', ttlMs: 5 }, 400, 'invalid_request', 'ttlMs'],
      [k.secret, { action: 'acquire', ttlMs: 86_400_000 }, 400, 'invalid_request', 'ttlMs'],
      [k.secret, { action: 'acquire', colour: 'red' }, 400, 'invalid_request', 'colour'],
      [k.secret, { action: 'acquire', connectionId: conns[2]!.id }, 403, 'lease_connection_not_allowed', 'connectionId'],
      [k.secret, { action: 'renew', owner: `vlo_${'a'.repeat(43)}`, generation: 3 }, 404, 'lease_not_found'],
      [k.secret, '[1, 2]', 400, 'invalid_json'],
      ['sk-sy-not-a-key', { action: 'acquire' }, 401, 'invalid_client_key'],
    ];
    for (const [key, body, status, code, param] of cases) {
      const r = await leaseCall(rig.t.proxyUrl, key, body);
      expect([r.status, r.body.error?.code], JSON.stringify(body)).toEqual([status, code]);
      if (param) expect(r.body.error.param, JSON.stringify(body)).toBe(param);
    }
    const get = await fetch(`${rig.t.proxyUrl}/api/v1/session-leases`, { headers: { authorization: `Bearer ${k.secret}` } });
    expect(get.status).toBe(405);
    expect(leaseRows(rig)).toHaveLength(0);
    expect(rig.t.engine.db.prepare("SELECT COUNT(*) AS n FROM key_value WHERE namespace = 'leases'").get()).toEqual({ n: 0 });

    // Malformed lease headers on an inference request: a 400 naming the header, no upstream call.
    const malformed: Record<string, string>[] = [
      { 'X-Switchyard-Lease-Owner': 'vlo_bad', 'X-Switchyard-Lease-Generation': '1' },
      { 'X-Switchyard-Lease-Owner': `vlo_${'b'.repeat(43)}` },
      { 'X-Switchyard-Lease-Generation': '1' },
      { 'X-Switchyard-Lease-Owner': `vlo_${'b'.repeat(43)}`, 'X-Switchyard-Lease-Generation': '-2' },
    ];
    for (const headers of malformed) {
      const r = await say(k.client, headers);
      expect(r.status, JSON.stringify(headers)).toBe(400);
      expect(r.error?.message).not.toContain('b'.repeat(43));
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('one lease per owner: an owner re-acquires only after its lease ended, and never gets an old generation back', async () => {
    const { rig, conns } = await setup();
    const k = await managedKey(rig, 'Again', [conns[0]!.id, conns[1]!.id]);
    const first = (await k.lease({ action: 'acquire' })).body.lease;
    const twice = await k.lease({ action: 'acquire', owner: first.owner });
    expect(twice).toMatchObject({ status: 409, body: { error: { code: 'lease_owner_active' } } });
    rig.clock.advance(300_001);
    expect((await say(k.client, leaseHeaders(first.owner, first.generation))).error?.code).toBe('lease_not_found');
    const again = (await k.lease({ action: 'acquire', owner: first.owner })).body.lease;
    expect(again.owner).toBe(first.owner);
    expect(again.generation).toBeGreaterThan(first.generation);
    expect((await say(k.client, leaseHeaders(first.owner, first.generation))).error?.code).toBe('lease_generation_stale');
  });

  it('a restart keeps the lease and its generation', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-lease-'));
    try {
      const rig = await startRig({ env: ENV, dataDir });
      const { conns } = await trio(rig);
      const k = await managedKey(rig, 'Durable', [conns[2]!.id]);
      const lease = (await k.lease({ action: 'acquire' })).body.lease;
      await rig.stop();
      const again = await startRig({ env: ENV, dataDir });
      const client = new Anthropic({ baseURL: again.t.proxyUrl, apiKey: k.secret, maxRetries: 0 });
      expect(await say(client, leaseHeaders(lease.owner, lease.generation))).toMatchObject({ status: 200, selected: conns[2]!.id });
      const other = await again.t.api.createClientKey({ name: 'Other', scopes: ['lease:exclusive'], allowedConnections: [conns[2]!.id] });
      expect((await leaseCall(again.t.proxyUrl, other.secret, { action: 'acquire' })).status).toBe(429);
      await again.stop();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('lease headers reach no upstream, no log line and no request-log row; the dashboard release frees the connection', async () => {
    const { rig, conns } = await setup();
    const k = await managedKey(rig, 'Quiet', [conns[0]!.id]);
    const lease = (await k.lease({ action: 'acquire' })).body.lease;
    for (const spelling of ['Switchyard', 'OmniRoute'] as const) {
      expect((await say(k.client, leaseHeaders(lease.owner, lease.generation, spelling))).status).toBe(200);
    }
    await say(k.client, leaseHeaders(lease.owner, 999_999));
    for (const r of fake.requests) for (const h of PROXY_ONLY_HEADERS) expect(r.headers[h], h).toBeUndefined();
    const logs = await rig.t.api.listLogs({ limit: 10 });
    expect(JSON.stringify(logs)).not.toContain(lease.owner);
    expect(rig.t.logs.lines.length).toBeGreaterThan(0);
    expect(rig.t.logs.lines.join('\n')).not.toContain(lease.owner);

    const view = await rig.t.api.listLeases();
    expect(view.leases).toHaveLength(1);
    expect(JSON.stringify(view)).not.toContain(lease.owner);
    expect(await rig.t.api.releaseLease({ id: lease.id })).toEqual({ released: true });
    await expect(rig.t.api.releaseLease({ id: lease.id })).rejects.toMatchObject({ status: 404 });
    expect((await say(k.client, leaseHeaders(lease.owner, lease.generation))).error?.code).toBe('lease_not_found');
    const other = await managedKey(rig, 'Next', [conns[0]!.id]);
    expect((await other.lease({ action: 'acquire' })).status).toBe(200);
  });

  it('revoking a key ends its leases; deleting a connection ends the lease on it; the pool names only existing connections', async () => {
    const { rig, conns } = await setup();
    const a = await managedKey(rig, 'Revoked', [conns[0]!.id]);
    const b = await managedKey(rig, 'Deleted', [conns[1]!.id]);
    await a.lease({ action: 'acquire' });
    await b.lease({ action: 'acquire' });
    expect((await rig.t.api.listLeases()).leases).toHaveLength(2);
    await rig.t.api.revokeClientKey({ id: a.id });
    await rig.t.api.deleteConnection({ id: conns[1]!.id });
    expect((await rig.t.api.listLeases()).leases).toHaveLength(0);
    expect(leaseRows(rig)).toHaveLength(0);
    await expect(rig.t.api.updateClientKey({ id: b.id, patch: { allowedConnections: [conns[2]!.id, 'no-such-connection'] } })).rejects.toMatchObject({
      status: 400,
      field: 'allowedConnections.1',
    });
    expect((await rig.t.api.listClientKeys()).find((k) => k.id === b.id)?.allowedConnections).toEqual([conns[1]!.id]);
  });

  it('leases, concurrency permits and routing stay independent (R-LS-13)', async () => {
    const rig = await startRig({ env: ENV });
    const only = await rig.add('Single', KEYS[0], { maxConcurrent: 1 });
    const k = await managedKey(rig, 'Holder', [only.id]);
    const lease = (await k.lease({ action: 'acquire' })).body.lease;
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    fake.script({ key: KEYS[0] }, [(req) => ({ chunks: [{ data: JSON.stringify(anthropicMessage(req.model ?? 'm')), gate }], headers: { 'content-type': 'application/json' } })]);
    const leased = say(k.client, leaseHeaders(lease.owner, lease.generation));
    await fake.waitFor(() => fake.inFlight === 1);
    // Releasing the lease gives back no concurrency permit: the plain request waits for the slot.
    expect((await k.lease({ action: 'release', owner: lease.owner, generation: lease.generation })).status).toBe(200);
    const plain = say(rig.client);
    await waitFor(async () => (await rig.t.api.getAdmission()).find((v) => v.connectionId === only.id)?.queued === 1);
    expect((await rig.t.api.getAdmission()).find((v) => v.connectionId === only.id)).toMatchObject({ inFlight: 1, queued: 1 });
    open();
    // A saturated connection without a lease is a queue wait, never a lease error.
    expect(await plain).toMatchObject({ status: 200, selected: only.id });
    expect(await leased).toMatchObject({ status: 200, selected: only.id });
    expect(fake.maxInFlight).toBe(1);
  });
});

async function waitFor(cond: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
