// The team's slots and spacing (issue 26) over clustered limiters held in memory, on a fake clock:
// the fixed order, all-or-nothing at a timeout, the fail-open shared quota, and every way Redis can
// fail (not connected, unanswered, an error, gone while waiting) ending the wait at once.
import { describe, expect, it } from 'vitest';
import { orderTeamSlots, TeamGate, type TeamSlot } from '../../../src/main/engine/admission/teamGate';
import { teamPacerFactory } from '../../../src/main/engine/admission/teamPacer';
import { FakeClock } from '../../support/fakeClock';
import { flush, manualPacers, track } from '../admission/support';
import { FakeLimiters } from './admissionSupport';

const model: TeamSlot = { kind: 'model', id: 'sy:t:mcap:c_1:glm-5', cap: 1, label: 'model glm-5' };
const account: TeamSlot = { kind: 'account', id: 'sy:t:cap:c_1', cap: 2, label: 'connection' };
const shared: TeamSlot = { kind: 'shared', id: 'sy:t:qs:c_1', cap: 1, label: 'shared-quota' };

function setup() {
  const clock = new FakeClock();
  const limiters = new FakeLimiters();
  const gate = new TeamGate(limiters, clock, 'instance-a');
  const wait = (ms = 5_000, signal = new AbortController().signal) => ({ deadline: clock.now() + ms, signal, expirationMs: 600_000 });
  return { clock, limiters, gate, wait };
}

describe('team slots', () => {
  it('are taken in one fixed order, narrowest first and the shared quota last, each job with an expiration', async () => {
    expect(orderTeamSlots([shared, account, model]).map((s) => s.kind)).toEqual(['model', 'account', 'shared']);
    const { gate, limiters, wait } = setup();
    const out = await gate.acquire([shared, account, model], wait());
    expect(out).toMatchObject({ kind: 'granted', local: false, waitedFor: null });
    expect([...limiters.made.keys()]).toEqual([model.id, account.id, shared.id]);
    for (const l of limiters.made.values()) {
      expect(l.running).toBe(1);
      expect(l.expirations).toEqual([600_000]);
    }
    expect(limiters.made.get(account.id)!.settings.maxConcurrent).toBe(2);
    if (out.kind === 'granted') out.release();
    await flush();
    for (const l of limiters.made.values()) expect(l.running).toBe(0);
  });

  it('waits for a slot another instance holds, and says which one it waited for', async () => {
    const { gate, wait } = setup();
    const other = await gate.acquire([model], wait());
    const mine = track(gate.acquire([model, account], wait()));
    await flush();
    expect(mine.status).toBe('pending');
    if (other.kind === 'granted') other.release();
    await flush(10);
    expect(mine.value).toMatchObject({ kind: 'granted', waitedFor: 'model', local: false });
  });

  it('a strict slot still full at the deadline is a timeout, and the slots taken before it are given back', async () => {
    const { gate, limiters, clock, wait } = setup();
    const holders = await Promise.all([gate.acquire([account], wait()), gate.acquire([account], wait())]);
    const mine = track(gate.acquire([model, account], wait(1_000)));
    await flush();
    expect(limiters.made.get(model.id)!.running).toBe(1);
    clock.advance(1_000);
    await flush(10);
    expect(mine.value).toMatchObject({ kind: 'timeout', slot: { kind: 'account' } });
    expect(limiters.made.get(model.id)!.running).toBe(0);
    for (const h of holders) if (h.kind === 'granted') h.release();
    await flush(10);
    // The job left behind in the account's queue runs empty: the slot goes straight back.
    expect(limiters.made.get(account.id)!.running).toBe(0);
  });

  it('the shared quota fails open: a full one at the deadline lets the request go on with its strict slots', async () => {
    const { gate, limiters, clock, wait } = setup();
    await gate.acquire([shared], wait());
    const mine = track(gate.acquire([account, shared], wait(1_000)));
    await flush(10);
    clock.advance(1_000);
    await flush(10);
    expect(mine.value).toMatchObject({ kind: 'granted', waitedFor: 'shared', local: false });
    expect(limiters.made.get(account.id)!.running).toBe(1);
  });

  it('asks nothing of Redis while the link is not connected: local slots only', async () => {
    const { gate, limiters, wait } = setup();
    limiters.up = false;
    expect(await gate.acquire([model, account], wait())).toMatchObject({ kind: 'granted', local: true });
    expect(limiters.made.size).toBe(0);
  });

  it('gives up on a call Redis leaves unanswered at the bound, tells the link, and hands a late slot straight back', async () => {
    const { gate, limiters, clock, wait } = setup();
    limiters.mode = 'hang';
    const mine = track(gate.acquire([account], wait(30_000)));
    clock.advance(limiters.boundMs);
    await flush();
    expect(mine.value).toMatchObject({ kind: 'granted', local: true });
    expect(limiters.failures).toHaveLength(1);
    limiters.answerLate();
    await flush(10);
    expect(limiters.made.get(account.id)!.running).toBe(0);
  });

  it('stops waiting at once when a limiter call fails, or when the link goes down', async () => {
    const { gate, limiters, wait } = setup();
    await Promise.all([gate.acquire([account], wait()), gate.acquire([account], wait())]);
    const first = track(gate.acquire([account], wait()));
    await flush();
    limiters.made.get(account.id)!.fail();
    await flush();
    expect(first.value).toMatchObject({ kind: 'granted', local: true });
    const second = track(gate.acquire([account], wait()));
    await flush();
    limiters.goDown();
    await flush();
    expect(second.value).toMatchObject({ kind: 'granted', local: true });
    // The link already knows it is down: only the failed call was reported.
    expect(limiters.failures).toHaveLength(1);
  });

  it("an abort ends the wait with the signal's reason and gives back what was taken", async () => {
    const { gate, limiters, wait } = setup();
    await Promise.all([gate.acquire([account], wait()), gate.acquire([account], wait())]);
    const ac = new AbortController();
    const mine = track(gate.acquire([model, account], wait(5_000, ac.signal)));
    await flush();
    ac.abort(new Error('client went away'));
    await flush(10);
    expect(mine.error).toMatchObject({ message: 'client went away' });
    expect(limiters.made.get(model.id)!.running).toBe(0);
  });

  it('a raised or removed cap reaches the limiter once', async () => {
    const { gate, limiters, wait } = setup();
    await gate.acquire([account], wait());
    await gate.acquire([{ ...account, cap: 3 }], wait());
    await gate.acquire([{ ...account, cap: 3 }], wait());
    expect(limiters.made.get(account.id)!.writes.map((w) => w.maxConcurrent)).toEqual([2, 3]);
  });
});

describe('team spacing', () => {
  function pacerSetup(minTime: number) {
    const clock = new FakeClock();
    const limiters = new FakeLimiters();
    const local = manualPacers();
    const factory = teamPacerFactory({ limiters, clock, local, idOf: () => 'sy:t:pace:c_1', instanceId: 'instance-a' });
    return { clock, limiters, local, pacer: factory(minTime) };
  }

  it('spaces through the clustered limiter when there is spacing to share', async () => {
    const { limiters, local, pacer } = pacerSetup(500);
    let permits = 0;
    pacer.submit(() => permits++);
    await flush();
    expect(permits).toBe(1);
    expect(limiters.made.get('sy:t:pace:c_1')!.settings).toEqual({ maxConcurrent: null, minTime: 500 });
    expect(local.made).toHaveLength(0);
  });

  it('without spacing, or while Redis is not connected, the local pacer gives the permits', async () => {
    const none = pacerSetup(0);
    none.pacer.submit(() => {});
    expect(none.limiters.made.size).toBe(0);
    expect(none.local.made[0]!.jobs).toHaveLength(1);
    const down = pacerSetup(500);
    down.limiters.up = false;
    down.pacer.submit(() => {});
    expect(down.limiters.made.size).toBe(0);
    expect(down.local.made[0]!.jobs).toHaveLength(1);
  });

  it('a permit Redis does not answer comes from the local pacer at the bound, exactly once', async () => {
    const { clock, limiters, local, pacer } = pacerSetup(500);
    limiters.mode = 'hang';
    let permits = 0;
    pacer.submit(() => permits++);
    clock.advance(limiters.boundMs);
    expect(limiters.failures).toHaveLength(1);
    local.drainAll();
    limiters.answerLate();
    await flush();
    expect(permits).toBe(1);
  });

  it('closing gives every pending permit', async () => {
    const { limiters, pacer } = pacerSetup(500);
    limiters.mode = 'hang';
    let permits = 0;
    pacer.submit(() => permits++);
    pacer.submit(() => permits++);
    await pacer.close();
    expect(permits).toBe(2);
  });
});
