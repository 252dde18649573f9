// Hold-back (R-TW-10 and issue 12): nothing reaches the client before the stream's first model
// output, so a stream that is slow to its first token, errors in-band, ends empty or ends without
// its terminal event before any output fails over like a failed request — invisibly. Thinking
// counts as progress. With STREAM_RECOVERY_ENABLED a stalled stream is reopened once on the same
// key first. The deadlines come from the setting, a model row, or the connection.
import { describe, expect, it } from 'vitest';
import { anthropicEvents as e, anthropicText, sse } from '../../support/fakeUpstream';
import { MODEL, readAnthropic, streamRigPerTest, textOf, until } from './support';

const KA = 'sk-ant-hold-a-aaaaaaaaaaaa';
const KB = 'sk-ant-hold-b-bbbbbbbbbbbb';
const ANSWER = ['Served ', 'by ', 'key ', 'B.'];
const FIRST_OUTPUT_MS = 60_000;

describe('hold-back: a stream is committed at its first model output', () => {
  const s = streamRigPerTest();

  async function twoKeys(extraA: Record<string, unknown> = {}) {
    const r = await s.start();
    const a = (await r.addAnthropic('Key A', KA, { priority: 1, ...extraA })).id;
    const b = (await r.addAnthropic('Key B', KB, { priority: 2 })).id;
    s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, ANSWER, { id: 'msg_b' }) }]);
    return { r, a, b };
  }

  it('a first token slower than the deadline fails over before any byte reaches the client', async () => {
    const { r, a } = await twoKeys();
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic);
    await live.attached;
    // message_start and heartbeats arrive, but no output: all of it is held back.
    live.send(e.messageStart(MODEL, 'msg_a'), e.ping(), e.ping());
    await r.settle();
    r.clock.advance(FIRST_OUTPUT_MS - 1);
    await r.settle();
    expect(s.fake.requestsFor({ key: KB })).toHaveLength(0);
    r.clock.advance(2);
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe(ANSWER.join(''));
    // Not one byte of A's stream reached the client: its message is B's, with one message_start.
    expect(out.final?.id).toBe('msg_b');
    expect(out.events.filter((x) => x === 'message_start')).toHaveLength(1);
    await until(() => live.closedByClient, 'the proxy to close A');
    const log = await r.logOf(MODEL);
    expect(log.attempts[0]).toMatchObject({ connectionId: a, watchdog: 'first_output', errorClass: 'stream_stall', failedOver: true, firstOutputMs: null, outputFrames: 0 });
    // The stalled attempt is logged with what the upstream really sent: its 200, a first byte and its first events.
    expect(log.attempts[0]).toMatchObject({ status: 200, frames: 3 });
    expect(log.attempts[0]!.ttfbMs).not.toBeNull();
    expect(log.attempts[0]!.bytes).toBeGreaterThan(0);
    expect(log.attempts[0]!.errorMessage).toMatch(/no model output within 60 s/);
    expect(log.attempts[1]).toMatchObject({ errorCode: null, outputFrames: ANSWER.length });
    // R-CC-22: the stall is recorded on A, and sets no cooldown.
    expect(await r.cooldownOf(a)).toMatchObject({ lastErrorType: 'stream_stall', remainingMs: 0 });
  });

  it('thinking counts as progress: a reasoning model that thinks past the deadline is not abandoned', async () => {
    const { r } = await twoKeys();
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic, { thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 2000 });
    let thinking = '';
    read.stream.on('thinking', (t: string) => (thinking += t));
    await live.attached;
    live.send(e.messageStart(MODEL, 'msg_a'), e.thinkingStart(), e.thinking('Let me think.'));
    await until(() => thinking === 'Let me think.', 'the thinking delta at the client');
    r.clock.advance(FIRST_OUTPUT_MS + 5_000);
    await r.settle();
    live.send(e.signature('sig'), e.blockStop(), e.textStart(1), e.text('Thought it through.', 1), e.blockStop(1), e.messageDelta(), e.messageStop());
    live.end();
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe('Thought it through.');
    expect(s.fake.requestsFor({ key: KB })).toHaveLength(0);
  });

  it('an in-band error before any output fails over, classified by its type (overloaded → 529)', async () => {
    const { r, a } = await twoKeys();
    s.fake.script({ key: KA }, [{ chunks: [e.messageStart(MODEL, 'msg_a'), e.ping(), e.error('overloaded_error', 'Overloaded')] }]);
    const out = await readAnthropic(r.anthropic).done;
    expect(textOf(out.final)).toBe(ANSWER.join(''));
    expect(out.final?.id).toBe('msg_b');
    expect((await r.logOf(MODEL)).attempts[0]).toMatchObject({ status: 529, errorClass: 'overloaded', failedOver: true });
    expect((await r.cooldownOf(a)).lastErrorType).toBe('overloaded');
  });

  it('an in-band rate limit before output cools the key like a 429 would', async () => {
    const { r, a } = await twoKeys();
    s.fake.script({ key: KA }, [{ chunks: [e.messageStart(MODEL), e.error('rate_limit_error', 'Number of requests has exceeded your rate limit')] }]);
    const out = await readAnthropic(r.anthropic).done;
    expect(textOf(out.final)).toBe(ANSWER.join(''));
    expect((await r.logOf(MODEL)).attempts[0]).toMatchObject({ status: 429, errorClass: 'rate_limit_exceeded' });
    void a;
  });

  it('a stream that ends properly with nothing in it fails over (empty answer); one cut short by max_tokens is passed on', async () => {
    const { r, a } = await twoKeys();
    s.fake.script({ key: KA }, [{ chunks: [e.messageStart(MODEL), e.messageDelta('end_turn', 0), e.messageStop()] }], { repeatLast: false });
    const out = await readAnthropic(r.anthropic).done;
    expect(textOf(out.final)).toBe(ANSWER.join(''));
    expect((await r.logOf(MODEL)).attempts[0]).toMatchObject({ status: 200, errorClass: 'empty_response', failedOver: true });
    expect((await r.cooldownOf(a)).lastErrorType).toBe('empty_response');

    s.fake.script({ key: KA }, [{ chunks: [e.messageStart(MODEL, 'msg_max'), e.messageDelta('max_tokens', 1), e.messageStop()] }], { repeatLast: false });
    const cut = await readAnthropic(r.anthropic, { max_tokens: 1 }).done;
    expect(cut.error).toBeNull();
    expect(cut.final).toMatchObject({ id: 'msg_max', stop_reason: 'max_tokens' });
  });

  it('a stream that ends without its terminal event before any output fails over, and counts against the provider', async () => {
    const { r } = await twoKeys();
    s.fake.script({ key: KA }, [{ chunks: [e.messageStart(MODEL), e.ping()] }]);
    const before = await r.breakerWindow('anthropic');
    const out = await readAnthropic(r.anthropic).done;
    expect(textOf(out.final)).toBe(ANSWER.join(''));
    expect((await r.logOf(MODEL)).attempts[0]).toMatchObject({ status: 200, errorClass: 'stream_truncated', failedOver: true });
    const after = await r.breakerWindow('anthropic');
    // The truncation is a provider-level outcome in the breaker's window (B's success is the other).
    expect(after.windowOutcomes).toBeGreaterThan(before.windowOutcomes);
  });

  it('R-TW-10: with stream recovery on, a stalled stream is reopened once on the same key before failing over', async () => {
    const r = await s.start();
    const a = (await r.addAnthropic('Key A', KA)).id;
    await r.settings({ streamRecovery: { enabled: true } });
    // Later scripts answer first: the live stream takes the first request, the chunks the second.
    s.fake.script({ key: KA }, [{ chunks: anthropicText(MODEL, ['Second ', 'try.']) }]);
    const first = r.live(KA);
    const read = readAnthropic(r.anthropic);
    await first.attached;
    first.send(e.messageStart(MODEL), e.ping());
    await r.settle();
    r.clock.advance(FIRST_OUTPUT_MS + 1);
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe('Second try.');
    expect(s.fake.requestsFor({ key: KA })).toHaveLength(2);
    const log = await r.logOf(MODEL);
    expect(log.attempts.map((x) => [x.connectionId, x.watchdog ?? null])).toEqual([
      [a, 'first_output'],
      [a, null],
    ]);
  });

  it('R-TW-10 off (the default): the only key stalls once and the client gets a timeout error, not a hang', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    const first = r.live(KA);
    const read = readAnthropic(r.anthropic);
    await first.attached;
    first.send(e.messageStart(MODEL));
    await r.settle();
    r.clock.advance(FIRST_OUTPUT_MS + 1);
    const out = await read.done;
    expect(out.error).toMatchObject({ status: 504 });
    expect(s.fake.requestsFor({ key: KA })).toHaveLength(1);
  });

  it("the connection's own first-output deadline wins; a model row applies where the connection sets none", async () => {
    const { r } = await twoKeys({ timeouts: { firstOutputMs: 5_000 } });
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic);
    await live.attached;
    live.send(e.messageStart(MODEL));
    await r.settle();
    r.clock.advance(5_001);
    expect(textOf((await read.done).final)).toBe(ANSWER.join(''));
    expect((await r.logOf(MODEL)).attempts[0]!.errorMessage).toMatch(/within 5 s .*connection setting/);

    await r.settings({ streams: { modelDeadlines: [{ model: 'claude-str*', firstOutputMs: 2_000 }] } });
    await r.t.api.updateConnection({ id: (await r.t.api.listConnections())[0]!.id, patch: { timeouts: {} } });
    const live2 = r.live(KA);
    s.fake.script({ key: KB }, [{ chunks: anthropicText(MODEL, ANSWER, { id: 'msg_b' }) }]);
    const read2 = readAnthropic(r.anthropic);
    await live2.attached;
    live2.send(e.messageStart(MODEL));
    await r.settle();
    r.clock.advance(2_001);
    expect(textOf((await read2.done).final)).toBe(ANSWER.join(''));
    expect((await r.logOf(MODEL, (x) => x.attempts[0]!.errorMessage?.includes('2 s') ?? false)).attempts[0]!.errorMessage).toMatch(/model setting for claude-str\*/);
  });

  it('past the hold-back budget without output the held bytes go to the client (bounded memory)', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    await r.settings({ streams: { holdBackBytes: 1024 } });
    const live = r.live(KA);
    const read = readAnthropic(r.anthropic);
    await live.attached;
    live.send(e.messageStart(MODEL, 'msg_budget'));
    for (let i = 0; i < 40; i++) live.send(e.ping());
    await until(() => read.events.length > 0 || read.events.includes('message_start'), 'the held bytes at the client');
    expect(read.events[0]).toBe('message_start');
    live.send(e.textStart(), e.text('late'), e.blockStop(), e.messageDelta(), e.messageStop());
    live.end();
    expect(textOf((await read.done).final)).toBe('late');
  });

  it('a malformed frame before the output is skipped: the client parser never sees it', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    s.fake.script({ key: KA }, [{ chunks: [e.messageStart(MODEL), { data: 'event: content_block_delta\ndata: {"type":"content_blo\n\n' }, ...anthropicText(MODEL, ['fine']).slice(1)] }]);
    const out = await readAnthropic(r.anthropic).done;
    expect(out.error).toBeNull();
    expect(textOf(out.final)).toBe('fine');
    void sse;
  });
});
