// Clearing a cooldown in the cooldown manager makes the connection usable at once: the request
// queue's pause from the same upstream hint is lifted with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_WIDE, ask, startRig, type Rig } from './support';

describe('clearing a cooldown', () => {
  let rig: Rig;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => rig.stop());

  it('lets the next request reach the connection that answered 429 Retry-After: 60', async () => {
    const a = await rig.add('Alpha', 'sk-ant-alpha-aaaaaaaaaa', { priority: 1 });
    const b = await rig.add('Beta', 'sk-ant-beta-bbbbbbbbbbb', { priority: 2 });
    rig.fake.script({ key: 'sk-ant-alpha-aaaaaaaaaa' }, [
      { status: 429, headers: { 'retry-after': '60', ...ACCOUNT_WIDE }, json: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } },
      { json: { id: 'm', type: 'message', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
    ]);
    expect((await ask(rig.client)).selected).toBe(b.id);
    const cd = await rig.t.api.listCooldowns();
    expect(cd.connections.find((c) => c.connectionId === a.id)).toMatchObject({ status: 'cooling', lastErrorType: 'rate_limit_exceeded' });
    expect((await ask(rig.client)).selected).toBe(b.id);

    const cleared = await rig.t.api.clearCooldowns({ connectionIds: [a.id] });
    expect(cleared.cleared).toEqual([a.id]);
    const admission = await rig.t.api.getAdmission();
    expect(admission.find((v) => v.connectionId === a.id)?.pausedUntil ?? null).toBeNull();
    expect((await ask(rig.client)).selected).toBe(a.id);
  });
});
