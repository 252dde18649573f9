// The watchdogs of a committed stream, on the fake clock, with the real SDKs:
// - content stall (R-CC-22/23, R-CC-30..34): pings, metadata, empty deltas, empty signatures and
//   incomplete frames never reset it; thinking deltas do; a stall records an error on the key and
//   cools it only with streamStallCooldown; a reasoning-only answer is reported as empty;
// - the throughput watchdog (R-TW-01..09): off by default, env default and saved boolean, warm-up
//   plus one full window, text deltas only, suspended during reasoning and tool calls, bounded
//   parameters, only the active attempt;
// - the hard attempt deadline (R-TW-03) and single finalisation (R-TW-12).
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { anthropicEvents as e, anthropicText, type LiveStream } from '../../support/fakeUpstream';
import { MODEL, readAnthropic, streamRigPerTest, textOf, until, type StreamRig } from './support';

const KA = 'sk-ant-watch-a-aaaaaaaaaaaa';
const KB = 'sk-ant-watch-b-bbbbbbbbbbbb';
const STALL_MS = 120_000;

describe('stream watchdogs after commit', () => {
  const s = streamRigPerTest();

  /** Starts A's stream: message_start, a text block and its first words, read by the client. */
  async function begin(r: StreamRig, body: Parameters<typeof readAnthropic>[1] = {}) {
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic, body);
    await live.attached;
    live.send(e.messageStart(MODEL, 'msg_a'), e.textStart(), e.text('Hello '));
    await until(() => read.seen() === 'Hello ', 'the first words');
    return { live, read };
  }

  /** Sends frames and lets the proxy read them (their bytes reach the client), then advances the clock. */
  async function sendThenAdvance(r: StreamRig, live: LiveStream, read: { events: string[] }, frames: Parameters<LiveStream['send']>, ms: number) {
    const n = read.events.length;
    live.send(...frames);
    await until(() => read.events.length > n, 'the frames at the client');
    r.clock.advance(ms);
  }

  it('pings and empty deltas do not reset the content-stall timer; the stall is recorded with no cooldown (R-CC-22, R-CC-32)', async () => {
    const r = await s.start();
    const a = (await r.addAnthropic('Key A', KA)).id;
    const { live, read } = await begin(r);
    for (let i = 0; i < 5; i++) await sendThenAdvance(r, live, read, [e.ping(), e.text('')], STALL_MS / 5 - 10);
    expect(live.closedByClient).toBe(false);
    r.clock.advance(60);
    const out = await read.done;
    expect(out.error).toBeInstanceOf(Anthropic.APIError);
    expect(String((out.error as Error).message)).toMatch(/no model output for 120 s/);
    expect(out.text).toBe('Hello ');
    expect(await r.cooldownOf(a)).toMatchObject({ lastErrorType: 'stream_stall', remainingMs: 0, status: 'active' });
    expect((await r.logOf(MODEL)).attempts[0]).toMatchObject({ watchdog: 'content_stall', errorCode: 'stream_stalled' });
  });

  it('with streamStallCooldown on, the stall cools the key (R-CC-23)', async () => {
    const r = await s.start();
    const a = (await r.addAnthropic('Key A', KA)).id;
    await r.settings({ streamStallCooldown: { enabled: true } });
    const { read } = await begin(r);
    r.clock.advance(STALL_MS + 1);
    await read.done;
    const cd = await r.cooldownOf(a);
    expect(cd.status).toBe('cooling');
    expect(cd.remainingMs).toBeGreaterThan(0);
  });

  it('thinking deltas (even empty) reset the budget: a long think, then the answer, is never cut (R-CC-30)', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic, { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2000 });
    await live.attached;
    live.send(e.messageStart(MODEL), e.thinkingStart(), e.thinking(''));
    await until(() => read.events.includes('content_block_delta'), 'the first thinking delta');
    // Three stall budgets of thinking, a delta every half budget.
    for (let i = 0; i < 6; i++) await sendThenAdvance(r, live, read, [e.thinking(i % 2 ? '' : 'hmm ')], STALL_MS / 2);
    live.send(e.signature('sig'), e.blockStop(), e.textStart(1), e.text('Done thinking.', 1), e.blockStop(1), e.messageDelta(), e.messageStop());
    live.end();
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe('Done thinking.');
  });

  it('reasoning, then only heartbeats past the budget: the stall watchdog fires (R-CC-32)', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic, { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2000 });
    await live.attached;
    live.send(e.messageStart(MODEL), e.thinkingStart(), e.thinking('thinking'));
    await until(() => read.events.includes('content_block_delta'), 'the thinking delta');
    // (Pings never reach the SDK's event stream; whenever the proxy reads them, they change nothing.)
    for (let i = 0; i < 2; i++) {
      live.send(e.ping(), { data: ': keep-alive\n\n' });
      await r.settle();
      r.clock.advance(STALL_MS / 2 - 1);
    }
    expect(live.closedByClient).toBe(false);
    r.clock.advance(3);
    const out = await read.done;
    expect(out.error).toBeInstanceOf(Anthropic.APIError);
    expect((await r.logOf(MODEL)).attempts[0]!.watchdog).toBe('content_stall');
  });

  it('metadata, empty signatures and incomplete frames do not reset the budget either (R-CC-34)', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    const { live, read } = await begin(r);
    live.send(e.signature(''), { data: 'event: content_block_delta\ndata: {"type":"content_bl\n\n' }, { data: ': comment\n\n' });
    await r.settle();
    r.clock.advance(STALL_MS / 2);
    live.send(e.messageDelta('end_turn', 3).data.replace('end_turn', 'null').replace('"null"', 'null'));
    await r.settle();
    r.clock.advance(STALL_MS / 2 + 1);
    const out = await read.done;
    expect(out.error).toBeInstanceOf(Anthropic.APIError);
    expect((await r.logOf(MODEL)).attempts[0]!.watchdog).toBe('content_stall');
  });

  it('a turn that ends with reasoning only is reported as empty, not a success (R-CC-31)', async () => {
    const r = await s.start();
    const a = (await r.addAnthropic('Key A', KA)).id;
    s.fake.script({ key: KA }, [{ chunks: [e.messageStart(MODEL), e.thinkingStart(), e.thinking('only thoughts'), e.signature('sig'), e.blockStop(), e.messageDelta('end_turn', 5), e.messageStop()] }]);
    const out = await readAnthropic(r.anthropic, { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2000 }).done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe('');
    expect((await r.logOf(MODEL)).errorCode).toBe('empty_response');
    expect((await r.cooldownOf(a)).lastErrorType).toBe('empty_response');
  });

  it('the hard attempt deadline ends even a fast, healthy stream (R-TW-03)', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    await r.settings({ streams: { attemptDeadlineMs: 10_000 } });
    const { live, read } = await begin(r);
    for (let i = 0; i < 9; i++) await sendThenAdvance(r, live, read, [e.text(`t${i} `)], 1_000);
    expect(live.closedByClient).toBe(false);
    r.clock.advance(1_001);
    const out = await read.done;
    expect(out.error).toBeInstanceOf(Anthropic.APIError);
    expect((await r.logOf(MODEL)).attempts[0]).toMatchObject({ watchdog: 'attempt_deadline' });
  });

  describe('throughput watchdog (§6)', () => {
    const TW = { warmupMs: 2_000, windowMs: 5_000, minBytesPerSecond: 4 };
    const on = (r: StreamRig, extra: Record<string, unknown> = {}) =>
      r.settings({ streamRecovery: { throughputWatchdog: { enabled: true, ...TW, ...extra } } });

    /** 1 character every 500 ms (2/s) with pings between: aborted after warm-up + window, no earlier. */
    async function trickle(r: StreamRig, live: LiveStream, read: { events: string[]; done: Promise<unknown> }, steps: number, frames: () => Parameters<LiveStream['send']> = () => [e.text('x'), e.ping()]) {
      let ended = false;
      void read.done.then(() => (ended = true));
      let t = 0;
      for (let i = 0; i < steps && !ended; i++) {
        await sendThenAdvance(r, live, read, frames(), 500);
        t += 500;
        await r.settle(5);
      }
      return { t, ended };
    }

    it('aborts a stream that keeps sending but writes too little text, only after warm-up + one full window (R-TW-01, R-TW-02, R-TW-04)', async () => {
      const r = await s.start();
      await r.addAnthropic('Key A', KA);
      await on(r);
      const { live, read } = await begin(r);
      const early = await trickle(r, live, read, 13);
      // 6.5 s: inside warm-up + window (7 s), never judged yet.
      expect(early.ended).toBe(false);
      const late = await trickle(r, live, read, 6);
      expect(late.ended).toBe(true);
      const out = (await read.done) as { error: unknown };
      expect(out.error).toBeInstanceOf(Anthropic.APIError);
      expect((await r.logOf(MODEL)).attempts[0]).toMatchObject({ watchdog: 'throughput', errorClass: 'stream_stall' });
    });

    it('empty and usage-only events at a high rate do not keep a slow stream alive (R-TW-05)', async () => {
      const r = await s.start();
      await r.addAnthropic('Key A', KA);
      await on(r);
      const { live, read } = await begin(r);
      const run = await trickle(r, live, read, 24, () => [e.text(''), e.text(''), e.messageDelta('end_turn', 1).data.replace('"end_turn"', 'null'), e.text('x')]);
      expect(run.ended).toBe(true);
      expect((await r.logOf(MODEL)).attempts[0]!.watchdog).toBe('throughput');
    });

    it('suspends judgement while the model reasons or writes a tool call (R-TW-06)', async () => {
      const r = await s.start();
      await r.addAnthropic('Key A', KA);
      await on(r);
      const live = r.live(KA);
      const read = readAnthropic(r.anthropic, { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2000, tools: [{ name: 'f', description: 'f', input_schema: { type: 'object', properties: {} } }] });
      await live.attached;
      live.send(e.messageStart(MODEL), e.thinkingStart(), e.thinking('a'));
      await until(() => read.events.includes('content_block_delta'), 'thinking');
      const thinking = await trickle(r, live, read, 20, () => [e.thinking('.')]);
      expect(thinking.ended).toBe(false);
      live.send(e.signature('sig'), e.blockStop(), e.toolStart('toolu_1', 'f', 1));
      const tool = await trickle(r, live, read, 20, () => [e.toolArgs(' ', 1)]);
      expect(tool.ended).toBe(false);
      live.send(e.toolArgs('{}', 1), e.blockStop(1), e.messageDelta('tool_use'), e.messageStop());
      live.end();
      const out = await read.done;
      expect(out.error).toBeNull();
      expect(out.final?.stop_reason).toBe('tool_use');
    });

    it('is off by default; STREAM_THROUGHPUT_WATCHDOG_ENABLED sets the default; a saved false wins (R-TW-07, R-GEN-01/02)', async () => {
      for (const [env, saved, aborts] of [
        [undefined, undefined, false],
        ['true', undefined, true],
        ['true', false, false],
      ] as const) {
        const r = await s.start(env ? { env: { STREAM_THROUGHPUT_WATCHDOG_ENABLED: env } } : {});
        await r.addAnthropic('Key A', KA);
        await r.settings({ streamRecovery: { throughputWatchdog: TW } });
        if (saved !== undefined) await r.settings({ 'streamRecovery.throughputWatchdog.enabled': saved });
        const { live, read } = await begin(r);
        const run = await trickle(r, live, read, 24);
        expect(run.ended, `env ${env}, saved ${saved}`).toBe(aborts);
        live.end();
        await read.done;
        await r.t.stop();
      }
    });

    it('keeps its parameters within bounds (R-TW-08)', async () => {
      const r = await s.start();
      const res = await r.t.api.patchResilience({ patch: { streamRecovery: { throughputWatchdog: { windowMs: 1, warmupMs: 99_999_999, minBytesPerSecond: 0 } } } });
      expect(res.adjusted?.map((a) => [a.key, a.to])).toEqual(
        expect.arrayContaining([
          ['streamRecovery.throughputWatchdog.windowMs', 1_000],
          ['streamRecovery.throughputWatchdog.warmupMs', 600_000],
          ['streamRecovery.throughputWatchdog.minBytesPerSecond', 1],
        ]),
      );
      const view = await r.t.api.getSettings();
      expect(view.settings.find((x) => x.key === 'streamRecovery.throughputWatchdog.windowMs')?.value).toBe(1_000);
    });

    it('aborts only the slow attempt: a concurrent healthy stream is unaffected, and the router continues the slow answer (R-TW-09, R-TW-11)', async () => {
      const r = await s.start();
      await r.addAnthropic('Key A', KA, { priority: 1 });
      await r.addAnthropic('Key B', KB, { priority: 2 });
      await on(r);
      await r.settings({ streamRecovery: { midstream: { enabled: true } } });
      const { live, read } = await begin(r);
      // A second request on A, streaming healthily at the same time.
      const fast = r.live(KA);
      const other = readAnthropic(r.anthropic, { messages: [{ role: 'user', content: 'other' }] });
      await fast.attached;
      fast.send(e.messageStart(MODEL, 'msg_fast'), e.textStart());
      s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, ['rest of the answer.']) }]);
      let ended = false;
      void read.done.then(() => (ended = true));
      for (let i = 0; i < 24 && !ended; i++) {
        fast.send(e.text('plenty of healthy text here, '));
        await sendThenAdvance(r, live, read, [e.text('x'), e.ping()], 500);
        await r.settle(5);
      }
      const out = await read.done;
      expect(out.error).toBeNull();
      // The slow part once, then the continuation: never a duplicated word.
      expect(textOf(out.final)).toMatch(/^Hello x+rest of the answer\.$/);
      fast.send(e.blockStop(), e.messageDelta(), e.messageStop());
      fast.end();
      const o = await other.done;
      expect(o.error).toBeNull();
      expect(textOf(o.final)).toMatch(/^(plenty of healthy text here, )+$/);
    });
  });

  it('finalises once: one log row, usage counted once, every concurrency slot given back (R-TW-12)', async () => {
    const r = await s.start();
    const a = (await r.addAnthropic('Key A', KA, { priority: 1, maxConcurrent: 1 })).id;
    const b = (await r.addAnthropic('Key B', KB, { priority: 2, maxConcurrent: 1 })).id;
    await r.settings({ streamRecovery: { midstream: { enabled: true } } });
    s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, ['the rest.'], { outputTokens: 3 }) }]);
    const { live, read } = await begin(r);
    live.cut();
    const out = await read.done;
    expect(textOf(out.final)).toBe('Hello the rest.');
    const rows = (await r.t.api.listLogs({ limit: 50 })).entries.filter((x) => x.requestedModel === MODEL);
    await until(() => true);
    expect(rows).toHaveLength(1);
    const admission = await r.t.api.getAdmission();
    expect(admission.filter((x) => x.connectionId === a || x.connectionId === b).map((x) => x.inFlight)).toEqual([0, 0]);
    // The next request gets its slot at once.
    s.fake.script({ key: KA }, [{ chunks: anthropicText(MODEL, ['next']) }]);
    expect(textOf((await readAnthropic(r.anthropic).done).final)).toBe('next');
  });
});
