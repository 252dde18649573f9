// Session affinity over combos: a session pins the combo target that served it (not only the
// connection), a round-robin combo keeps such a session on one target, and a failing pinned
// target hands the pin to the target that served.
import { describe, expect, it } from 'vitest';
import { comboRig, ENV, KEY_A, send } from '../combos/support';
import { accountLimited, rigPerTest } from '../resilience/support';

const headers = { 'X-Claude-Code-Session-Id': 'combo-session-0001' };

describe('session affinity with combos', () => {
  const { fake, startRig } = rigPerTest();

  it('a round-robin combo keeps a session on the target that served it first', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    const combo = await r.combo({ strategy: 'round-robin', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    const plain = [await send(r.rig.client), await send(r.rig.client)].map((s) => s.servedModel);
    expect(new Set(plain).size).toBe(2);

    const served = new Set<string | null>();
    for (let i = 0; i < 6; i++) {
      const { response } = await r.rig.client.messages.create({ model: 'pool', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }, { headers }).withResponse();
      served.add(`${response.headers.get('x-switchyard-served-model')}@${response.headers.get('x-switchyard-selected-connection-id')}`);
    }
    expect(served.size).toBe(1);
    const [pin] = (await r.rig.t.api.listSessions()).sessions;
    expect(pin).toMatchObject({ comboId: combo.id, comboName: 'pool', session: 'combo-session-0001' });
    expect(pin!.target).not.toBeNull();
    expect(pin!.model).toBe([...served][0]!.split('@')[0]);
    const log = await r.lastLog();
    expect(log.affinity).toMatchObject({ comboId: combo.id, pin: 'followed' });
  });

  it('a combo session whose pinned target fails over re-pins to the target that served', async () => {
    const r = await comboRig(await startRig({ env: ENV }));
    await r.combo({ strategy: 'round-robin', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    const ask = () => r.rig.client.messages.create({ model: 'pool', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }, { headers }).withResponse();
    const first = await ask();
    expect(first.response.headers.get('x-switchyard-served-model')).toBe('model-x');
    fake.script({ key: KEY_A }, [accountLimited({ 'retry-after': '20' })], { repeatLast: false });
    const second = await ask();
    expect(second.response.headers.get('x-switchyard-served-model')).toBe('model-y');
    expect((await r.lastLog()).affinity).toMatchObject({ pin: 'followed', result: 'moved' });
    r.rig.clock.advance(21_000);
    for (let i = 0; i < 3; i++) expect((await ask()).response.headers.get('x-switchyard-served-model')).toBe('model-y');
    expect((await r.rig.t.api.listSessions()).sessions[0]).toMatchObject({ model: 'model-y', target: 1 });
  });
});
