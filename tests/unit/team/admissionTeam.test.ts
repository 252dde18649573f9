// The admission service in team mode (issue 26), on a fake clock with clustered limiters in memory:
// local caps first (their single-process rules and typed errors unchanged), the team's slots after
// them; no team work at all for a connection without caps; Redis down costs no request; pauses from
// an upstream's hint go to the team and come back from it (latest deadline wins, never echoed).
import { describe, expect, it, vi } from 'vitest';
import { AdmissionService } from '../../../src/main/engine/admission/admissionService';
import { pauseKey, PAUSES_TABLE, parsePauseKey } from '../../../src/main/engine/admission/teamPauses';
import type { AttemptVerdict, UpstreamFailure } from '../../../src/main/engine/resilience/port';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import { FakeClock } from '../../support/fakeClock';
import { conn, flush, manualPacers, target, TestRegistry, TestSettings, track } from '../admission/support';
import { FakeLimiters, FakeTeam, teamIds } from './admissionSupport';

function setup(conns: ConnectionRecord[], opts: { limiters?: FakeLimiters; team?: FakeTeam; localOnly?: string[] } = {}) {
  const clock = new FakeClock();
  const settings = new TestSettings();
  const registry = new TestRegistry(...conns);
  const pacers = manualPacers();
  const limiters = opts.limiters ?? new FakeLimiters();
  const team = opts.team ?? new FakeTeam();
  const admission = new AdmissionService({
    clock,
    settings,
    registry,
    resilience: { lockModel: vi.fn() },
    pacer: pacers,
    team,
    teamIds: teamIds(registry, opts.localOnly),
    teamLimiters: limiters,
  });
  return { clock, settings, registry, pacers, limiters, team, admission };
}

const never = () => new AbortController().signal;
const viewOf = (a: AdmissionService, id: string) => a.views().find((v) => v.connectionId === id)!;
const failure429: UpstreamFailure = { kind: 'http', status: 429, headers: {}, body: '', message: 'rate limited' };
const verdict = (ms: number, scope: AttemptVerdict['scope'] = 'connection'): AttemptVerdict => ({
  reason: 'rate_limit_exceeded',
  failover: true,
  retryAfterMs: ms,
  hint: { ms, source: 'retry-after-ms' },
  scope,
});

describe('team caps in the admission service', () => {
  it('a connection without caps takes no team slot: admitted at once, nothing asked of Redis', async () => {
    const c = conn();
    const { admission, limiters } = setup([c]);
    const lease = track(admission.acquire(target(c), never()));
    await flush(1);
    expect(lease.status).toBe('resolved');
    expect(limiters.made.size).toBe(0);
  });

  it("a capped connection takes the team's slot after its local one, keyed by its team id, and gives both back with the lease", async () => {
    const c = conn({ rateLimitOverrides: { maxConcurrent: 2, modelConcurrency: { 'model-a': 1 } } });
    const { admission, limiters } = setup([c]);
    const lease = await admission.acquire(target(c), never());
    expect([...limiters.made.keys()]).toEqual([`sy:test:mcap:c_${c.id}:model-a`, `sy:test:cap:c_${c.id}`]);
    expect(limiters.existing(`sy:test:cap:c_${c.id}`)!.running).toBe(1);
    lease.release();
    await flush();
    for (const l of limiters.made.values()) expect(l.running).toBe(0);
    expect(viewOf(admission, c.id).inFlight).toBe(0);
  });

  it("waits while the team's cap is full even though this instance has room, then dispatches", async () => {
    const limiters = new FakeLimiters();
    const c = conn({ rateLimitOverrides: { maxConcurrent: 1 } });
    const a = setup([c], { limiters });
    const b = setup([c], { limiters, team: new FakeTeam('instance-b') });
    const held = await a.admission.acquire(target(c), never());
    const waiting = track(b.admission.acquire(target(c), never()));
    await flush();
    expect(waiting.status).toBe('pending');
    expect(viewOf(b.admission, c.id).queued).toBe(1);
    held.release();
    await flush(10);
    expect(waiting.status).toBe('resolved');
    expect(waiting.value!.waits).toEqual([expect.objectContaining({ reason: 'concurrency_cap', cap: 'connection' })]);
  });

  it('a team slot that stays full past concurrency.waitTimeoutMs fails with SEMAPHORE_TIMEOUT, holding nothing', async () => {
    const limiters = new FakeLimiters();
    const c = conn({ rateLimitOverrides: { maxConcurrent: 1 } });
    const a = setup([c], { limiters });
    const b = setup([c], { limiters, team: new FakeTeam('instance-b') });
    b.settings.set({ 'concurrency.waitTimeoutMs': 2_000 });
    await a.admission.acquire(target(c), never());
    const waiting = track(b.admission.acquire(target(c), never()));
    await flush(10);
    b.clock.advance(2_000);
    await flush(10);
    expect(waiting.error).toMatchObject({ code: 'SEMAPHORE_TIMEOUT', status: 429 });
    expect(viewOf(b.admission, c.id)).toMatchObject({ queued: 0, inFlight: 0 });
    // Its local slot was given back: the next request finds local room.
    expect(b.admission.load(c.id)).toBe(0);
  });

  it('while Redis is down a capped connection is admitted at once on its local cap alone', async () => {
    const limiters = new FakeLimiters();
    limiters.up = false;
    const c = conn({ rateLimitOverrides: { maxConcurrent: 1 } });
    const { admission } = setup([c], { limiters });
    const first = track(admission.acquire(target(c), never()));
    await flush(1);
    expect(first.status).toBe('resolved');
    expect(limiters.made.size).toBe(0);
    // The local cap still holds.
    const second = track(admission.acquire(target(c), never()));
    await flush();
    expect(second.status).toBe('pending');
  });

  it('a connection the team does not share (no team id) keeps its caps local', async () => {
    const c = conn({ rateLimitOverrides: { maxConcurrent: 1 } });
    const { admission, limiters } = setup([c], { localOnly: [c.id] });
    await admission.acquire(target(c), never());
    expect(limiters.made.size).toBe(0);
  });

  it('Redis failing while a request waits for a team slot lets it go on with its local slot', async () => {
    const limiters = new FakeLimiters();
    const c = conn({ rateLimitOverrides: { maxConcurrent: 1 } });
    const a = setup([c], { limiters });
    const b = setup([c], { limiters, team: new FakeTeam('instance-b') });
    await a.admission.acquire(target(c), never());
    const waiting = track(b.admission.acquire(target(c), never()));
    await flush();
    limiters.goDown();
    await flush(10);
    expect(waiting.status).toBe('resolved');
    expect(viewOf(b.admission, c.id).inFlight).toBe(1);
  });

  it("a connection edit's new cap reaches the team's limiter", async () => {
    const c = conn({ rateLimitOverrides: { maxConcurrent: 2 } });
    const { admission, limiters, registry } = setup([c]);
    (await admission.acquire(target(c), never())).release();
    registry.update({ ...c, rateLimitOverrides: { maxConcurrent: 5 } });
    expect(limiters.existing(`sy:test:cap:c_${c.id}`)!.settings.maxConcurrent).toBe(5);
  });

  it('a shared-quota cap (max_concurrent) is a team slot too, and fails open', async () => {
    const limiters = new FakeLimiters();
    const c = conn({ maxConcurrent: 1 });
    const a = setup([c], { limiters });
    const b = setup([c], { limiters, team: new FakeTeam('instance-b') });
    b.settings.set({ 'concurrency.waitTimeoutMs': 1_000 });
    await a.admission.acquire(target(c), never());
    const waiting = track(b.admission.acquire(target(c), never()));
    await flush(10);
    b.clock.advance(1_000);
    await flush(10);
    expect(waiting.status).toBe('resolved');
  });
});

describe('team pauses', () => {
  const protectedConn = () => conn({ authClass: 'apikey' });

  it("a 429's hint pauses the queue here and publishes the pause for the team", () => {
    const c = protectedConn();
    const { admission, team, clock } = setup([c]);
    admission.observe(target(c), failure429, verdict(5_000));
    const until = clock.now() + 5_000;
    expect(viewOf(admission, c.id).pausedUntil).toBe(until);
    expect(team.published).toEqual([{ table: PAUSES_TABLE, key: pauseKey({ teamId: `c_${c.id}`, queue: '', model: null }), value: { queue: '', model: null, until }, ttlMs: 5_000 }]);
  });

  it('a model-only pause travels as the model, and an unprotected connection publishes nothing', () => {
    const c = protectedConn();
    const off = conn();
    const { admission, team } = setup([c, off]);
    admission.observe(target(c, 'glm-5'), failure429, verdict(5_000, 'model'));
    admission.observe(target(off), failure429, verdict(5_000));
    expect(team.published).toHaveLength(1);
    expect(parsePauseKey(team.published[0]!.key)).toEqual({ teamId: `c_${c.id}`, queue: '', model: 'glm-5' });
  });

  it("another instance's pause holds this instance's requests to that key until it ends, without being published again", async () => {
    const c = protectedConn();
    const { admission, team, clock, pacers } = setup([c]);
    const until = clock.now() + 3_000;
    team.deliver(PAUSES_TABLE, pauseKey({ teamId: `c_${c.id}`, queue: '', model: null }), { queue: '', model: null, until });
    expect(viewOf(admission, c.id).pausedUntil).toBe(until);
    const p = track(admission.acquire(target(c), never()));
    await flush();
    expect(p.status).toBe('pending');
    clock.advance(3_000);
    pacers.drainAll();
    await flush();
    expect(p.status).toBe('resolved');
    expect(p.value!.waits).toEqual([expect.objectContaining({ reason: 'queue_paused', until })]);
    expect(team.published).toHaveLength(0);
  });

  it('the later deadline wins: an earlier pause from the team does not shorten one held here', () => {
    const c = protectedConn();
    const { admission, team, clock } = setup([c]);
    admission.observe(target(c), failure429, verdict(10_000));
    team.deliver(PAUSES_TABLE, pauseKey({ teamId: `c_${c.id}`, queue: '', model: null }), { queue: '', model: null, until: clock.now() + 2_000 });
    expect(viewOf(admission, c.id).pausedUntil).toBe(clock.now() + 10_000);
    // And what this instance publishes next is the later of the two.
    team.deliver(PAUSES_TABLE, pauseKey({ teamId: `c_${c.id}`, queue: '', model: null }), { queue: '', model: null, until: clock.now() + 20_000 });
    admission.observe(target(c), failure429, verdict(1_000));
    expect(team.published.at(-1)!.value).toMatchObject({ until: clock.now() + 20_000 });
  });

  it("an operator's resume lifts the pause here and for the team; the team's lift lifts it here", () => {
    const c = protectedConn();
    const { admission, team, clock } = setup([c]);
    admission.observe(target(c), failure429, verdict(10_000));
    expect(admission.resume([c.id])).toEqual([c.id]);
    expect(team.published.at(-1)).toMatchObject({ key: pauseKey({ teamId: `c_${c.id}`, queue: '', model: null }), value: null });
    team.deliver(PAUSES_TABLE, pauseKey({ teamId: `c_${c.id}`, queue: '', model: null }), { queue: '', model: null, until: clock.now() + 5_000 });
    expect(viewOf(admission, c.id).pausedUntil).not.toBeNull();
    team.deliver(PAUSES_TABLE, pauseKey({ teamId: `c_${c.id}`, queue: '', model: null }), null);
    expect(viewOf(admission, c.id).pausedUntil).toBeNull();
  });
});
