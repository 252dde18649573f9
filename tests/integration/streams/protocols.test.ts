// Stream resilience in every protocol, native and translated, with the real SDK clients: a broken
// answer continued elsewhere (Chat and Responses clients get a "continue" turn, an Anthropic target
// a prefill), a stream missing its terminal event counted as a failure in the breaker and the log,
// a malformed chunk skipped without breaking the client's parser, and signed reasoning reaching a
// Chat client as an empty reasoning delta (R-CC-33).
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import {
  anthropicEvents as ae,
  anthropicText,
  chatEvents as ce,
  chatText,
  responsesEvents,
  sse,
  type LiveStream,
} from '../../support/fakeUpstream';
import { CONTINUE_PROMPT } from '../../../src/main/engine/streams/continuation';
import { CHAT_MODEL, MODEL, readAnthropic, streamRigPerTest, textOf, until, words, type StreamRig } from './support';

const KA = 'sk-proto-a-aaaaaaaaaaaa';
const KB = 'sk-proto-b-bbbbbbbbbbbb';
const FULL = words(0, 60);

describe('stream resilience across protocols', () => {
  const s = streamRigPerTest();

  async function recoveryOn(r: StreamRig) {
    await r.settings({ streamRecovery: { midstream: { enabled: true } } });
  }

  /** A Chat client's stream read with the SDK; `seen` is the text so far. */
  function readChat(openai: OpenAI, extra: Record<string, unknown> = {}) {
    let text = '';
    const stream = openai.chat.completions.stream({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'Write the words.' }], stream_options: { include_usage: true }, ...extra } as never);
    stream.on('content', (d: string) => (text += d));
    stream.on('error', () => {});
    const done = stream.finalChatCompletion().then(
      (final) => ({ final, error: null as unknown }),
      (error: unknown) => ({ final: null, error }),
    );
    return { done, seen: () => text, stream };
  }

  describe('Chat Completions client, native', () => {
    it('a cut answer is continued with a "continue" turn, the repeated words trimmed, usage summed', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA, { priority: 1 });
      await r.addOpenAI('B', KB, { priority: 2 });
      await recoveryOn(r);
      const live = r.live(KA);
      // B restates the last five words (20 characters) before going on.
      s.fake.script({ key: KB }, [{ chunks: chatText(CHAT_MODEL, [...FULL.slice(20, 25), ...FULL.slice(25)], { id: 'chatcmpl-b', completionTokens: 38 }) }]);
      const read = readChat(r.openai);
      await live.attached;
      live.send(ce.role(CHAT_MODEL, 'chatcmpl-a'), ...FULL.slice(0, 25).map((w) => ce.text(CHAT_MODEL, w, 'chatcmpl-a')));
      await until(() => read.seen() === FULL.slice(0, 25).join(''), 'the first part');
      live.cut();
      const out = await read.done;
      expect(out.error).toBeNull();
      expect(out.final!.choices[0]!.message.content).toBe(FULL.join(''));
      expect(out.final!.id).toBe('chatcmpl-a');
      expect(out.final!.choices[0]!.finish_reason).toBe('stop');
      const msgs = s.fake.requestsFor({ key: KB })[0]!.body!.messages as { role: string; content: string }[];
      expect(msgs.slice(-2)).toEqual([
        { role: 'assistant', content: FULL.slice(0, 25).join('') },
        { role: 'user', content: CONTINUE_PROMPT },
      ]);
      expect(out.final!.usage?.completion_tokens).toBe(38);
      const log = await r.logOf(CHAT_MODEL);
      expect(log.attempts.map((x) => x.continuation ?? null)).toEqual([null, 'continue']);
    });

    it('a long answer (5,000+ characters) whose continuation repeats a long tail, or restarts it, reaches the client once', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA, { priority: 1 });
      await r.addOpenAI('B', KB, { priority: 2 });
      await recoveryOn(r);
      const long = words(0, 900, 'token');
      const cut = 700;
      expect(long.slice(0, cut).join('').length).toBeGreaterThan(5_000);
      for (const from of [300, 0]) {
        s.fake.reset();
        const live = r.live(KA);
        // B repeats the answer from word `from` (a 400-word tail, then the whole answer) before going on.
        s.fake.script({ key: KB }, [{ chunks: chatText(CHAT_MODEL, long.slice(from), { id: 'chatcmpl-b' }) }]);
        const read = readChat(r.openai);
        await live.attached;
        live.send(ce.role(CHAT_MODEL, 'chatcmpl-a'), ...long.slice(0, cut).map((w) => ce.text(CHAT_MODEL, w, 'chatcmpl-a')));
        await until(() => read.seen() === long.slice(0, cut).join(''), 'the first part');
        live.cut();
        const out = await read.done;
        expect(out.error).toBeNull();
        expect(read.seen()).toBe(long.join(''));
        expect(out.final!.choices[0]!.message.content).toBe(long.join(''));
      }
    });

    it('recovery off: an error chunk after the text the client already has (the SDK throws)', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA);
      const live = r.live(KA);
      const read = readChat(r.openai);
      await live.attached;
      live.send(ce.role(CHAT_MODEL), ce.text(CHAT_MODEL, 'partial '));
      await until(() => read.seen() === 'partial ', 'the text');
      live.cut();
      const out = await read.done;
      expect(out.error).toBeInstanceOf(OpenAI.APIError);
      expect(String((out.error as Error).message)).toMatch(/incomplete/);
    });

    it('a stream that ends without finish_reason or [DONE] is a failure in the breaker and the log', async () => {
      const r = await s.start();
      const a = (await r.addOpenAI('A', KA)).id;
      s.fake.script({ key: KA }, [{ chunks: [ce.role(CHAT_MODEL), ce.text(CHAT_MODEL, 'no end')] }]);
      const before = await r.breakerWindow('openai');
      const out = await readChat(r.openai).done;
      expect(out.error).toBeInstanceOf(OpenAI.APIError);
      const after = await r.breakerWindow('openai');
      expect(after.failures).toBe(before.failures + 1);
      expect((await r.logOf(CHAT_MODEL)).attempts[0]).toMatchObject({ errorCode: 'stream_truncated', errorClass: 'stream_truncated' });
      expect((await r.cooldownOf(a)).lastErrorType).toBe('stream_truncated');
    });

    it('a malformed chunk in the middle is skipped: the client parser reads the rest', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA);
      const chunks = chatText(CHAT_MODEL, ['one ', 'two']);
      chunks.splice(2, 0, { data: 'data: {"id":"chatcmpl-live","choices":[{"index":0,"delta":{"content":"bro\n\n' });
      s.fake.script({ key: KA }, [{ chunks }]);
      const out = await readChat(r.openai).done;
      expect(out.error).toBeNull();
      expect(out.final!.choices[0]!.message.content).toBe('one two');
    });
  });

  describe('Responses client, native', () => {
    function readResponses(openai: OpenAI) {
      let text = '';
      const stream = openai.responses.stream({ model: CHAT_MODEL, input: 'Write the words.' });
      stream.on('response.output_text.delta', (ev) => (text += ev.delta));
      stream.on('error', () => {});
      const done = stream.finalResponse().then(
        (final) => ({ final, error: null as unknown }),
        (error: unknown) => ({ final: null, error }),
      );
      return { done, seen: () => text };
    }

    async function firstPart(live: LiveStream, read: { seen: () => string }, n: number) {
      const ev = responsesEvents(CHAT_MODEL, 'resp_a');
      await live.attached;
      live.send(ev.created(), ev.messageAdded(), ...FULL.slice(0, n).map((w) => ev.text(w)));
      await until(() => read.seen() === FULL.slice(0, n).join(''), 'the first part');
    }

    it('a cut answer is continued in the same message item; response.completed carries the whole text', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA, { priority: 1 });
      await r.addOpenAI('B', KB, { priority: 2 });
      await recoveryOn(r);
      const live = r.live(KA);
      const eb = responsesEvents(CHAT_MODEL, 'resp_b');
      const rest = FULL.slice(20).join('');
      s.fake.script({ key: KB }, [{ chunks: [eb.created(), eb.messageAdded(0, 'msg_b'), eb.text(rest, 0, 'msg_b'), eb.messageDone(rest, 0, 'msg_b'), eb.completed(rest, 40)] }]);
      const read = readResponses(r.openai);
      await firstPart(live, read, 20);
      live.cut();
      const out = await read.done;
      expect(out.error).toBeNull();
      expect(out.final!.output_text).toBe(FULL.join(''));
      expect(out.final!.id).toBe('resp_a');
      expect(out.final!.status).toBe('completed');
      const input = s.fake.requestsFor({ key: KB })[0]!.body!.input as { role: string; content: unknown }[];
      expect(input.at(-2)).toEqual({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: FULL.slice(0, 20).join('') }] });
      expect(input.at(-1)!.role).toBe('user');
    });

    it('recovery off: the stream ends with response.failed (what Codex reads) saying the answer is incomplete', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA);
      const live = r.live(KA);
      const read = readResponses(r.openai);
      await firstPart(live, read, 5);
      live.cut();
      const out = await read.done;
      expect(out.final?.status).toBe('failed');
      expect(out.final?.error?.message).toMatch(/incomplete/);
    });

    it('a stream that ends without response.completed is a failure in the log', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA);
      const ev = responsesEvents(CHAT_MODEL);
      s.fake.script({ key: KA }, [{ chunks: [ev.created(), ev.messageAdded(), ev.text('half')] }]);
      const out = await readResponses(r.openai).done;
      expect(out.final?.status ?? 'error').not.toBe('completed');
      expect((await r.logOf(CHAT_MODEL)).errorCode).toBe('stream_truncated');
    });
  });

  describe('translated streams', () => {
    it('Anthropic client on a Chat upstream: cut, then continued on an Anthropic key with a prefill', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA, { kind: 'openai-compatible', provider: 'compat', models: [MODEL], priority: 1 });
      await r.addAnthropic('B', KB, { priority: 2 });
      await recoveryOn(r);
      const live = r.live(KA);
      s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, FULL.slice(30)) }]);
      const read = readAnthropic(r.anthropic);
      await live.attached;
      live.send(ce.role(MODEL), ...FULL.slice(0, 30).map((w) => ce.text(MODEL, w)));
      await until(() => read.seen() === FULL.slice(0, 30).join(''), 'the first part');
      live.cut();
      const out = await read.done;
      expect(out.error).toBeNull();
      expect(textOf(out.final)).toBe(FULL.join(''));
      expect(out.events.filter((x) => x === 'message_start')).toHaveLength(1);
      expect(out.final?.content).toHaveLength(1);
      expect((s.fake.requestsFor({ key: KB })[0]!.body!.messages as { role: string; content: unknown }[]).at(-1)).toEqual({
        role: 'assistant',
        content: FULL.slice(0, 30).join('').trimEnd(),
      });
      const log = await r.logOf(MODEL);
      expect(log.attempts[0]).toMatchObject({ translated: 'anthropic-messages→openai-chat', continuedElsewhere: true });
      expect(log.attempts[1]).toMatchObject({ continuation: 'prefill' });
    });

    it('Chat client on an Anthropic upstream: an in-band error mid-answer, continued with a prefill through the codec', async () => {
      const r = await s.start();
      await r.addAnthropic('A', KA, { models: [CHAT_MODEL], priority: 1 });
      await r.addAnthropic('B', KB, { models: [CHAT_MODEL], priority: 2 });
      await recoveryOn(r);
      const live = r.live(KA);
      s.fake.script({ key: KB }, [{ chunks: anthropicText(CHAT_MODEL, FULL.slice(12), { outputTokens: 48 }) }]);
      const read = readChat(r.openai);
      await live.attached;
      live.send(ae.messageStart(CHAT_MODEL), ae.textStart(), ...FULL.slice(0, 12).map((w) => ae.text(w)));
      await until(() => read.seen() === FULL.slice(0, 12).join(''), 'the first part');
      live.send(ae.error('overloaded_error', 'Overloaded'));
      const out = await read.done;
      expect(out.error).toBeNull();
      expect(out.final!.choices[0]!.message.content).toBe(FULL.join(''));
      const cont = s.fake.requestsFor({ key: KB })[0]!.body!;
      expect((cont.messages as { role: string; content: unknown }[]).at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: FULL.slice(0, 12).join('').trimEnd() }] });
    });

    it('Responses client on a Chat upstream: stalled mid-answer, continued on the next Chat key', async () => {
      const r = await s.start();
      await r.addOpenAI('A', KA, { kind: 'openai-compatible', provider: 'compat', priority: 1 });
      await r.addOpenAI('B', KB, { kind: 'openai-compatible', provider: 'compat', priority: 2 });
      await recoveryOn(r);
      const live = r.live(KA);
      s.fake.script({ key: KB }, [{ chunks: chatText(CHAT_MODEL, FULL.slice(8)) }]);
      let text = '';
      const stream = r.openai.responses.stream({ model: CHAT_MODEL, input: 'Write the words.' });
      stream.on('response.output_text.delta', (ev) => (text += ev.delta));
      const done = stream.finalResponse();
      await live.attached;
      live.send(ce.role(CHAT_MODEL), ...FULL.slice(0, 8).map((w) => ce.text(CHAT_MODEL, w)));
      await until(() => text === FULL.slice(0, 8).join(''), 'the first part');
      live.send(ce.comment(), ce.comment());
      await r.settle();
      r.clock.advance(120_001);
      const final = await done;
      expect(final.output_text).toBe(FULL.join(''));
      expect((await r.logOf(CHAT_MODEL)).attempts[0]).toMatchObject({ watchdog: 'content_stall', continuedElsewhere: true });
    });

    it('signed reasoning reaches a Chat client as an empty reasoning delta, never the signature (R-CC-33)', async () => {
      const r = await s.start();
      await r.addAnthropic('A', KA, { models: [CHAT_MODEL] });
      const SIG = 'EqQBCgIYAhIMSIGNATURE-SECRETISH';
      s.fake.script({ key: KA }, [
        { chunks: [ae.messageStart(CHAT_MODEL), ae.thinkingStart(), ae.thinking('pondering'), ae.signature(SIG), ae.blockStop(), ae.textStart(1), ae.text('answer', 1), ae.blockStop(1), ae.messageDelta(), ae.messageStop()] },
      ]);
      const res = await fetch(`${r.t.proxyUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${r.t.clientKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: CHAT_MODEL, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      const body = await res.text();
      expect(body).toContain('"reasoning_content":"pondering"');
      expect(body).toContain('"reasoning_content":""');
      expect(body).not.toContain(SIG);
      void sse;
    });
  });
});

describe('a connection that breaks right after the terminal event', () => {
  const s = streamRigPerTest();
  it('is a complete answer, not a failure', async () => {
    const r = await s.start();
    await r.addAnthropic('A', KA);
    s.fake.script({ key: KA }, [{ chunks: anthropicText(MODEL, ['all ', 'there']), afterChunks: 'cut' }]);
    const out = await readAnthropic(r.anthropic).done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe('all there');
    expect((await r.logOf(MODEL)).errorCode).toBeNull();
  });
});
