// Mid-stream recovery (STREAM_RECOVERY_MIDSTREAM_ENABLED, R-TW-11, R-TW-12) with the real
// Anthropic SDK on native Anthropic targets: a stream cut after 40 tokens, one that goes silent
// after 20, and one that reports overloaded_error mid-answer each end in the complete answer from
// the second connection when recovery is on (the client sees the first part once, then the rest),
// and in a clean error event when it is off. A target that refuses the prefill is asked again
// without it; inside a tool call, or with nobody left to continue, the stream ends with an error.
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { anthropicEvents as e, anthropicText, type LiveStream } from '../../support/fakeUpstream';
import { CONTINUE_PROMPT } from '../../../src/main/engine/streams/continuation';
import { leaseCall, leaseHeaders } from '../affinity/support';
import { MODEL, readAnthropic, streamRigPerTest, textOf, until, words, type StreamRig } from './support';

const KA = 'sk-ant-stream-a-aaaaaaaaaaaa';
const KB = 'sk-ant-stream-b-bbbbbbbbbbbb';
const KC = 'sk-ant-stream-c-cccccccccccc';
const FULL = words(0, 100);
const STALL_MS = 120_000;

type Break = 'cut' | 'stall' | 'overloaded';

describe('mid-stream recovery: a broken answer is continued on the next connection', () => {
  const s = streamRigPerTest();

  async function twoKeys(recovery: boolean): Promise<{ r: StreamRig; a: string; b: string }> {
    const r = await s.start();
    const a = (await r.addAnthropic('Key A', KA, { priority: 1 })).id;
    const b = (await r.addAnthropic('Key B', KB, { priority: 2 })).id;
    if (recovery) await r.settings({ streamRecovery: { midstream: { enabled: true } } });
    return { r, a, b };
  }

  /** A sends message_start and the first `n` words, waits for the client to have them, then breaks. */
  async function breakAfter(r: StreamRig, live: LiveStream, seen: () => string, n: number, how: Break) {
    await live.attached;
    live.send(e.messageStart(MODEL, 'msg_first'), e.textStart(), ...FULL.slice(0, n).map((w) => e.text(w)));
    await until(() => seen() === FULL.slice(0, n).join(''), `the client to read ${n} words`);
    if (how === 'cut') live.cut();
    else if (how === 'overloaded') live.send(e.error('overloaded_error', 'Overloaded'));
    else {
      live.send(e.ping(), e.ping());
      await r.settle();
      r.clock.advance(STALL_MS + 1);
    }
  }

  for (const [how, n] of [['cut', 40], ['stall', 20], ['overloaded', 20]] as const) {
    it(`${how} after ${n} tokens: recovery on → the complete answer, the first part once, the rest from the second key`, async () => {
      const { r, a } = await twoKeys(true);
      const live = r.live(KA);
      s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, FULL.slice(n), { id: 'msg_second', outputTokens: 100 - n }) }]);
      const read = readAnthropic(r.anthropic);
      await breakAfter(r, live, read.seen, n, how);
      const out = await read.done;

      expect(out.error).toBeNull();
      expect(textOf(out.final)).toBe(FULL.join(''));
      expect(out.text).toBe(FULL.join(''));
      // One well-formed message: one start, one stop, the first message's id, one text block.
      expect(out.events.filter((x) => x === 'message_start')).toHaveLength(1);
      expect(out.events.filter((x) => x === 'message_stop')).toHaveLength(1);
      expect(out.final?.id).toBe('msg_first');
      expect(out.final?.content).toHaveLength(1);
      expect(out.final?.stop_reason).toBe('end_turn');

      // B was asked to continue with the answer so far as a prefill (trailing whitespace left out).
      const cont = s.fake.requestsFor({ key: KB });
      expect(cont).toHaveLength(1);
      const msgs = cont[0]!.body!.messages as { role: string; content: unknown }[];
      expect(msgs.at(-1)).toEqual({ role: 'assistant', content: FULL.slice(0, n).join('').trimEnd() });

      const log = await r.logOf(MODEL);
      expect(log).toMatchObject({ status: 200, errorCode: null });
      expect(log.attempts).toHaveLength(2);
      expect(log.attempts[0]).toMatchObject({
        connectionId: a,
        continuedElsewhere: true,
        errorCode: how === 'cut' ? 'stream_interrupted' : how === 'stall' ? 'stream_stalled' : 'upstream_stream_error',
        outputFrames: n,
      });
      if (how === 'stall') expect(log.attempts[0]!.watchdog).toBe('content_stall');
      expect(log.attempts[1]).toMatchObject({ continuation: 'prefill', errorCode: null });
      // The failure is held against A like any other (an overloaded error is read as 529).
      const cd = await r.cooldownOf(a);
      expect(cd.lastErrorType).toBe(how === 'cut' ? 'network_error' : how === 'stall' ? 'stream_stall' : 'overloaded');
    });

    it(`${how} after ${n} tokens: recovery off → a clean error event after the first part, nothing continued`, async () => {
      const { r } = await twoKeys(false);
      const live = r.live(KA);
      const read = readAnthropic(r.anthropic);
      await breakAfter(r, live, read.seen, n, how);
      const out = await read.done;
      expect(out.error).toBeInstanceOf(Anthropic.APIError);
      expect(String((out.error as Error).message)).toMatch(/incomplete/);
      expect(out.text).toBe(FULL.slice(0, n).join(''));
      expect(s.fake.requestsFor({ key: KB })).toHaveLength(0);
      const log = await r.logOf(MODEL);
      expect(log.status).toBe(200);
      expect(log.errorCode).toBe(how === 'cut' ? 'stream_interrupted' : how === 'stall' ? 'stream_stalled' : 'upstream_stream_error');
      expect(log.attempts).toHaveLength(1);
    });
  }

  it('a target that answers 400 to the prefill is asked again with a "continue" turn: never a client-visible 400', async () => {
    const { r } = await twoKeys(true);
    const live = r.live(KA);
    s.fake.script({ key: KB }, [
      { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'assistant prefill is not supported for this model' } } },
      { chunks: anthropicText(MODEL, FULL.slice(30)) },
    ], { repeatLast: false });
    const read = readAnthropic(r.anthropic);
    await breakAfter(r, live, read.seen, 30, 'cut');
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe(FULL.join(''));
    const [first, second] = s.fake.requestsFor({ key: KB });
    expect((first!.body!.messages as { role: string }[]).at(-1)!.role).toBe('assistant');
    const again = second!.body!.messages as { role: string; content: unknown }[];
    expect(again.at(-2)).toEqual({ role: 'assistant', content: FULL.slice(0, 30).join('') });
    expect(again.at(-1)).toEqual({ role: 'user', content: CONTINUE_PROMPT });
    const log = await r.logOf(MODEL);
    expect(log.attempts[1]).toMatchObject({ continuation: 'continue', prefillRefused: true, errorCode: null });
  });

  it('a continuation that repeats the end of the answer is trimmed (a "continue" turn)', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA, { priority: 1 });
    await r.addAnthropic('Key B', KB, { priority: 2 });
    await r.settings({ streamRecovery: { midstream: { enabled: true } } });
    const live = r.live(KA);
    // Thinking is on, so B gets a "continue" turn; the model restates the last five words.
    s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, [...FULL.slice(25, 30), ...FULL.slice(30)]) }]);
    const read = readAnthropic(r.anthropic, { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2000 });
    await breakAfter(r, live, read.seen, 30, 'cut');
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe(FULL.join(''));
    expect((s.fake.requestsFor({ key: KB })[0]!.body!.messages as { content: unknown }[]).at(-1)!.content).toBe(CONTINUE_PROMPT);
  });

  for (const thinking of [false, true]) {
    it(`a 400-word answer cut half-way and restarted from its beginning by the backup reaches the client as exactly the 400 words (${thinking ? '"continue" turn' : 'prefill ignored'})`, async () => {
      const r = await s.start();
      await r.addAnthropic('Key A', KA, { priority: 1 });
      await r.addAnthropic('Key B', KB, { priority: 2 });
      await r.settings({ streamRecovery: { midstream: { enabled: true } } });
      const answer = words(0, 400, 'word');
      const cut = 230;
      const live = r.live(KA);
      // B answers the whole thing again from the first word, whatever it was asked.
      s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, answer) }]);
      const read = readAnthropic(r.anthropic, thinking ? { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 4000 } : { max_tokens: 4000 });
      await live.attached;
      live.send(e.messageStart(MODEL, 'msg_first'), e.textStart(), ...answer.slice(0, cut).map((w) => e.text(w)));
      await until(() => read.seen() === answer.slice(0, cut).join(''), 'the client to read the first part');
      expect(read.seen().length).toBeGreaterThan(600);
      live.cut();
      const out = await read.done;
      expect(out.error).toBeNull();
      expect(out.text).toBe(answer.join(''));
      expect(out.text.trim().split(/\s+/)).toHaveLength(400);
      expect(textOf(out.final)).toBe(answer.join(''));
      const log = await r.logOf(MODEL);
      expect(log.attempts[1]).toMatchObject({ continuation: thinking ? 'continue' : 'prefill', errorCode: null });
    });
  }

  it("after a continuation the session's pin is on the connection that finished the answer, not the one whose stream broke", async () => {
    const { r, a, b } = await twoKeys(true);
    const session = { 'X-Claude-Code-Session-Id': 'session-continued' };
    const live = r.live(KA);
    s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, FULL.slice(30)) }]);
    const read = readAnthropic(r.anthropic, {}, session);
    await breakAfter(r, live, read.seen, 30, 'cut');
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(out.text).toBe(FULL.join(''));
    const log = await r.logOf(MODEL);
    expect(log.attempts.map((x) => x.connectionId)).toEqual([a, b]);
    expect(log.affinity).toMatchObject({ session: 'session-continued', result: 'moved' });
    const pins = (await r.t.api.listSessions()).sessions;
    expect(pins).toHaveLength(1);
    expect(pins[0]).toMatchObject({ session: 'session-continued', connectionId: b });
  });

  it('a third connection continues when the second breaks too; usage is summed once in the log (R-TW-12)', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA, { priority: 1 });
    await r.addAnthropic('Key B', KB, { priority: 2 });
    await r.addAnthropic('Key C', KC, { priority: 3 });
    await r.settings({ streamRecovery: { midstream: { enabled: true } } });
    const live = r.live(KA);
    const second = r.live(KB);
    s.fake.script({ key: KC }, [{ chunks: anthropicText(MODEL, FULL.slice(60), { outputTokens: 40 }) }]);
    const read = readAnthropic(r.anthropic);
    await breakAfter(r, live, read.seen, 10, 'cut');
    await second.attached;
    second.send(e.messageStart(MODEL, 'msg_b'), e.textStart(), ...FULL.slice(10, 60).map((w) => e.text(w)));
    await until(() => read.seen() === FULL.slice(0, 60).join(''), 'the second part');
    second.cut();
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe(FULL.join(''));
    expect((s.fake.requestsFor({ key: KC })[0]!.body!.messages as { content: unknown }[]).at(-1)!.content).toBe(FULL.slice(0, 60).join('').trimEnd());
    const log = await r.logOf(MODEL);
    expect(log.attempts.map((x) => x.continuedElsewhere ?? false)).toEqual([true, true, false]);
    // Usage as the upstreams reported it, summed over the three attempts: 1 + 1 + 40 out (the
    // broken ones never sent their final count), 12 in each.
    expect(log).toMatchObject({ inputTokens: 36, outputTokens: 42 });
    // The client: its own prompt as input, the output of all parts.
    expect(out.final?.usage.input_tokens).toBe(12);
  });

  it("a combo's next target (another model) continues the answer", async () => {
    const r = await s.start();
    await r.addAnthropic('Alpha', KA, { kind: 'anthropic-compatible', provider: 'alpha', models: ['model-x'], passthroughModels: false });
    await r.addAnthropic('Beta', KB, { kind: 'anthropic-compatible', provider: 'beta', models: ['model-y'], passthroughModels: false });
    await r.t.api.createCombo({ name: 'pool', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    await r.settings({ streamRecovery: { midstream: { enabled: true } } });
    const live = r.live(KA);
    s.fake.script({ key: KB }, [{ chunks: anthropicText('model-y', FULL.slice(35)) }]);
    const read = readAnthropic(r.anthropic, { model: 'pool' });
    await breakAfter(r, live, read.seen, 35, 'cut');
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe(FULL.join(''));
    const cont = s.fake.requestsFor({ key: KB })[0]!;
    expect(cont.model).toBe('model-y');
    const log = await r.logOf('pool');
    expect(log.model).toBe('model-y');
    expect(log.combo?.order.map((o) => o.outcome)).toEqual(['failed', 'served']);
  });

  it('inside a tool call the answer is not continued: the stream ends with an error event', async () => {
    const { r } = await twoKeys(true);
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic, { tools: [{ name: 'get_weather', description: 'weather', input_schema: { type: 'object', properties: {} } }] });
    await live.attached;
    live.send(e.messageStart(MODEL), e.textStart(), e.text('Let me look. '), e.blockStop(), e.toolStart('toolu_1', 'get_weather', 1), e.toolArgs('{"ci', 1));
    await until(() => read.seen() === 'Let me look. ', 'the text');
    await r.settle();
    live.cut();
    const out = await read.done;
    expect(out.error).toBeInstanceOf(Anthropic.APIError);
    expect(String((out.error as Error).message)).toMatch(/incomplete/);
    expect(s.fake.requestsFor({ key: KB })).toHaveLength(0);
  });

  it('STREAM_RECOVERY_MIDSTREAM_ENABLED only sets the default: env true continues, a saved false wins (R-GEN-01/02)', async () => {
    for (const saved of [undefined, false] as const) {
      const r = await s.start({ env: { STREAM_RECOVERY_MIDSTREAM_ENABLED: 'true' } });
      await r.addAnthropic('Key A', KA, { priority: 1 });
      await r.addAnthropic('Key B', KB, { priority: 2 });
      if (saved !== undefined) await r.settings({ 'streamRecovery.midstream.enabled': saved });
      const live = r.live(KA);
      s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, FULL.slice(10)) }]);
      const read = readAnthropic(r.anthropic);
      await breakAfter(r, live, read.seen, 10, 'cut');
      const out = await read.done;
      if (saved === undefined) expect(textOf(out.final)).toBe(FULL.join(''));
      else expect(out.error).toBeInstanceOf(Anthropic.APIError);
      await r.t.stop();
      s.fake.reset();
    }
  });

  it('with no target left to continue, the stream ends with an error event saying the answer is incomplete', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    await r.settings({ streamRecovery: { midstream: { enabled: true } } });
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic);
    await breakAfter(r, live, read.seen, 15, 'cut');
    const out = await read.done;
    expect(out.error).toBeInstanceOf(Anthropic.APIError);
    expect(String((out.error as Error).message)).toMatch(/no other target could continue/);
    expect(out.text).toBe(FULL.slice(0, 15).join(''));
    expect((await r.logOf(MODEL)).errorCode).toBe('stream_not_continued');
  });

  it('a lease released while its stream runs: the continuation is refused at the barrier and the stream ends with that refusal as its error event', async () => {
    const { r, a, b } = await twoKeys(true);
    const { secret } = await r.t.api.createClientKey({ name: 'Leased', scopes: ['lease:exclusive'], allowedConnections: [a, b] });
    const acquired = await leaseCall(r.t.proxyUrl, secret, { action: 'acquire' });
    expect(acquired.status).toBe(200);
    const { owner, generation, connectionId } = acquired.body.lease;
    expect(connectionId).toBe(a);
    const client = new Anthropic({ baseURL: r.t.proxyUrl, apiKey: secret, maxRetries: 0, defaultHeaders: leaseHeaders(owner, generation) });
    const live = r.live(KA);
    s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, FULL.slice(20)) }]);
    const read = readAnthropic(client);
    await live.attached;
    live.send(e.messageStart(MODEL, 'msg_first'), e.textStart(), ...FULL.slice(0, 20).map((w) => e.text(w)));
    await until(() => read.seen() === FULL.slice(0, 20).join(''), 'the client to read 20 words');
    // The owner lets the lease go mid-answer; then A's stream breaks.
    expect((await leaseCall(r.t.proxyUrl, secret, { action: 'release', owner, generation })).status).toBe(200);
    live.cut();
    const out = await read.done;

    // The client's parser gets a well-formed error event (not a dropped socket) naming the refusal.
    expect(out.error).toBeInstanceOf(Anthropic.APIError);
    expect(String((out.error as Error).message)).toMatch(/continuation was refused/);
    expect(String((out.error as Error).message)).toMatch(/incomplete/);
    expect(out.text).toBe(FULL.slice(0, 20).join(''));
    expect(s.fake.requestsFor({ key: KB })).toHaveLength(0);
    const log = await r.logOf(MODEL);
    expect(log.errorCode).toBe('lease_not_found');
    expect(log.attempts).toHaveLength(1);
    expect(log.attempts[0]).toMatchObject({ connectionId: a, errorCode: 'stream_interrupted' });
  });
});
