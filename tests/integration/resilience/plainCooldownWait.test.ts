// Short-cooldown waits for plain model requests (issue 19, SPEC §4.4 as for combos): a request for
// a model whose every connection is held back by a short, self-lifting cooldown waits for the
// first to lift and is served, instead of answering 503 at once; past the wait limits it answers
// 503 with a truthful Retry-After. The engine runs on a fake clock: a waiting request is released
// by advancing it once the engine logged the wait.
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ask, rateLimited, rigPerTest, type Rig } from './support';

const KEY = 'key-solo-000000001';

async function waiting(rig: Rig, count = 1): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (rig.t.logs.lines.filter((l) => l.includes('model.waiting')).length < count) {
    if (Date.now() > deadline) throw new Error(`no model.waiting line: ${rig.t.logs.lines.slice(-5).join('')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('plain model cooldown waits', () => {
  const { fake, startRig } = rigPerTest();

  /**
   * One connection serving claude-x, cooled for `seconds` by a 429 answered while waits are off
   * (a hint above the same-target retry's longest wait, so it is not retried either).
   */
  async function cooled(seconds: number): Promise<Rig> {
    const rig = await startRig({ env: { RATE_LIMIT_AUTO_ENABLE: 'false' }, defaults: true });
    await rig.add('Solo', KEY, { models: ['claude-x'] });
    await rig.t.api.patchSettings({ patch: { 'comboCooldownWait.enabled': false } });
    fake.script({ key: KEY }, [rateLimited({ 'retry-after': String(seconds) })], { repeatLast: false });
    expect((await ask(rig.client)).status).toBe(429);
    await rig.t.api.patchSettings({ patch: { 'comboCooldownWait.enabled': null } });
    return rig;
  }

  it('the only connection is in a short cooldown: the request waits for it and is served', async () => {
    const rig = await cooled(8);
    rig.clock.advance(1_000);
    const sent = fake.requests.length;
    const pending = ask(rig.client);
    await waiting(rig);
    expect(fake.requests.length).toBe(sent); // nothing sent while it cools
    rig.clock.advance(7_000);
    const got = await pending;
    expect(got.status).toBe(200);
    expect(fake.requests.length).toBe(sent + 1);
  });

  it('a cooldown longer than the longest wait answers 503 at once with the time left as Retry-After', async () => {
    const rig = await cooled(40);
    rig.clock.advance(5_000);
    const sent = fake.requests.length;
    const got = await ask(rig.client);
    expect(fake.requests.length).toBe(sent);
    expect(got.status).toBe(503);
    expect(got.code).toBe('all_targets_cooling_down');
    expect(got.retryAfter).toBe('35');
    expect((got.diagnostics as { waitRefused?: string } | null)?.waitRefused).toBe('too_long');
  });

  it('the client leaves during the wait: nothing is sent, and the log row says the client left', async () => {
    const rig = await cooled(8);
    const sent = fake.requests.length;
    const ctl = new AbortController();
    const pending = rig.client.messages.create({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { signal: ctl.signal });
    await waiting(rig);
    ctl.abort();
    await expect(pending).rejects.toBeInstanceOf(Anthropic.APIUserAbortError);
    const deadline = Date.now() + 5_000;
    let row = (await rig.t.api.listLogs({ limit: 1 })).entries[0];
    while (row?.errorCode !== 'client_closed_request' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      row = (await rig.t.api.listLogs({ limit: 1 })).entries[0];
    }
    expect(row?.errorCode).toBe('client_closed_request');
    rig.clock.advance(10_000);
    expect(fake.requests.length).toBe(sent);
  });

  it('with plain-model waits off, the request answers 503 at once as before', async () => {
    const rig = await cooled(8);
    await rig.t.api.patchSettings({ patch: { 'cooldownWait.plainModels': false } });
    const got = await ask(rig.client);
    expect(got.status).toBe(503);
    expect(got.retryAfter).toBe('8');
    expect((got.diagnostics as { waitRefused?: string } | null)?.waitRefused).toBe('opted_out');
  });
});
