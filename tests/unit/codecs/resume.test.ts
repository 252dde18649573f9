// Resuming a client's stream (mid-stream recovery): a native stream's frames read by the tracker,
// or a translated one's writer, snapshot what the client was sent; a writer resumed from that
// state continues it so that the client's SDK accumulates one well-formed answer (one start, the
// next block index / sequence number, one terminal event). Also the Responses upstream reader
// continuations of native Responses streams go through.
import { describe, expect, it } from 'vitest';
import { clientWriterFor, continuable, trackerFor, upstreamReaderFor } from '../../../src/main/engine/codecs';
import { AnthropicEventWriter } from '../../../src/main/engine/codecs/anthropicResponse';
import { FrameReader } from '../../../src/main/engine/streams/frames';
import type { ApiShape } from '../../../src/main/engine/streams/shape';
import { anthropicText, chatText, responsesEvents, type Chunk } from '../../support/fakeUpstream';
import { anthropicSdkStream, chatSdkStream, ctx, responsesSdkStream } from './support';

const joined = (chunks: Chunk[]) => chunks.map((c) => c.data).join('');

/** The tracked state after a native prefix, and the writer resumed from it writing `rest` then finishing. */
function resume(shape: ApiShape, prefix: string, rest: string[]) {
  const frames = new FrameReader(shape);
  const tracker = trackerFor(shape, true);
  for (const f of [...frames.push(prefix).frames, ...frames.end().frames]) tracker.observe(f);
  const state = tracker.state;
  const writer = clientWriterFor(shape, ctx({}, { trackText: true }), state);
  for (const t of rest) writer.text(t);
  writer.usage({ output: 9 });
  writer.stop('end_turn', null);
  writer.finish();
  return { state, out: writer.take() };
}

describe('resumed client streams', () => {
  it('Anthropic: a native prefix cut inside its text block, continued in the same block', async () => {
    const prefix = joined(anthropicText('m', ['Hello ', 'there ']).slice(0, 4));
    const { state, out } = resume('anthropic-messages', prefix, ['and ', 'goodbye.']);
    expect(state).toMatchObject({ text: 'Hello there ', open: 'text', openIndex: 0, next: 1, started: true, id: 'msg_fake_live' });
    expect(continuable(state)).toBe(true);
    const { message, events } = await anthropicSdkStream(prefix + out);
    expect(message.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Hello there and goodbye.']);
    expect(events.filter((e) => e === 'message_start')).toHaveLength(1);
    expect(message.id).toBe('msg_fake_live');
  });

  it('Anthropic: not continuable inside a tool call or once the stop reason came', () => {
    const e = anthropicText('m', ['x']);
    const tool = 'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}\n\n';
    expect(continuable(resume('anthropic-messages', joined(e.slice(0, 4)) + tool, []).state)).toBe(false);
    expect(continuable(resume('anthropic-messages', joined(e.slice(0, 5)), []).state)).toBe(false);
  });

  it('Chat: a native prefix continued with the same id, one finish and [DONE]', async () => {
    const prefix = joined(chatText('m', ['Hello ', 'there ']).slice(0, 3));
    const { state, out } = resume('openai-chat', prefix, ['and ', 'goodbye.']);
    expect(state).toMatchObject({ text: 'Hello there ', started: true, id: 'chatcmpl-live' });
    const final = await chatSdkStream(prefix + out);
    expect(final.choices[0]!.message.content).toBe('Hello there and goodbye.');
    expect(final.id).toBe('chatcmpl-live');
    expect((prefix + out).match(/\[DONE\]/g)).toHaveLength(1);
  });

  it('Responses: a native prefix continued in the open message item; completed carries it whole', async () => {
    const ev = responsesEvents('m', 'resp_x');
    const prefix = joined([ev.created(), ev.messageAdded(), ev.text('Hello '), ev.text('there ')]);
    const { state, out } = resume('openai-responses', prefix, ['and ', 'goodbye.']);
    expect(state).toMatchObject({ respId: 'resp_x', seq: 5, text: 'Hello there ', message: { id: 'msg_live', index: 0 } });
    const { response, events } = await responsesSdkStream(prefix + out);
    expect(response.output_text).toBe('Hello there and goodbye.');
    expect(response.id).toBe('resp_x');
    expect(events.filter((e) => e === 'response.completed')).toHaveLength(1);
  });

  it('a translated writer snapshots the same state a resumed writer continues', async () => {
    const first = new AnthropicEventWriter(ctx({}, { trackText: true }));
    first.start('msg_t', 'm');
    first.text('partial ');
    const state = first.snapshot();
    expect(state).toMatchObject({ text: 'partial ', open: 'text', openIndex: 0, next: 1 });
    const second = clientWriterFor('anthropic-messages', ctx(), state);
    second.text('rest');
    second.finish();
    const { message } = await anthropicSdkStream(first.take() + second.take());
    expect(message.content.map((b) => (b.type === 'text' ? b.text : ''))).toEqual(['partial rest']);
  });

  it('the Responses upstream reader turns a native Responses stream into neutral events', () => {
    const ev = responsesEvents('m');
    const frames = new FrameReader('openai-responses').push(joined([ev.created(), ev.messageAdded(), ev.text('Hi '), ev.text('you'), ev.messageDone('Hi you'), ev.completed('Hi you', 4)])).frames;
    const reader = upstreamReaderFor('openai-responses', ctx());
    const writer = clientWriterFor('anthropic-messages', ctx(), null);
    for (const f of frames) reader.read(f, writer);
    expect(reader.end(writer)).toBe('complete');
    const out = writer.take();
    expect(out).toContain('"text":"Hi "');
    expect(out).toContain('"output_tokens":4');
    expect(out).toContain('message_stop');
  });
});
