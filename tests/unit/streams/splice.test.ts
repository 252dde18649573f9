// Splicing: the overlap a continuation repeats is trimmed (whitespace after a prefill; a restated
// tail of at least MIN_OVERLAP characters after a "continue" turn), and the continuation's own
// start and reasoning are dropped while its output usage is added to what the client was told.
import { describe, expect, it } from 'vitest';
import { AnthropicEventWriter } from '../../../src/main/engine/codecs/anthropicResponse';
import { emptyUsage } from '../../../src/main/engine/codecs/ir';
import { MIN_OVERLAP, overlapOf, SpliceSink } from '../../../src/main/engine/streams/splice';

describe('overlap of a continuation', () => {
  it('prefill: only the whitespace the prefill left out comes back', () => {
    expect(overlapOf('Hello world ', ' next', 'prefill', false)).toBe(1);
    expect(overlapOf('Hello world\n\n', '\nfoo', 'prefill', false)).toBe(1);
    expect(overlapOf('Hello world', ' next', 'prefill', false)).toBe(0);
    // Undecided while the continuation is still whitespace that may match more.
    expect(overlapOf('Hello\n\n', '\n', 'prefill', false)).toBeNull();
    // A repeated phrase after a prefill is the model's own words: never trimmed.
    expect(overlapOf('one two three four five six', ' four five six seven', 'prefill', true)).toBe(0);
  });

  it('continue: a restated tail of at least MIN_OVERLAP characters is dropped; a short match is not', () => {
    const seen = 'The quick brown fox jumps over the lazy dog and then';
    expect(overlapOf(seen, 'over the lazy dog and then it slept', 'continue', true)).toBe('over the lazy dog and then'.length);
    expect(overlapOf(seen, ' over the lazy dog and then it slept', 'continue', true)).toBe(' over the lazy dog and then'.length);
    expect(overlapOf(seen, ' then it slept', 'continue', true)).toBe(0);
    expect('and then'.length).toBeLessThan(MIN_OVERLAP);
    // More of the continuation is needed while it could still be a longer repeat.
    expect(overlapOf(seen, 'over the', 'continue', false)).toBeNull();
    expect(overlapOf(seen, 'zebra', 'continue', false)).toBe(0);
  });

  it('a SpliceSink writes the continuation after the overlap, drops its start and reasoning, sums output usage', () => {
    const writer = new AnthropicEventWriter({ request: {}, model: 'm', now: 0, requestId: 'r' }, {
      shape: 'anthropic-messages',
      text: 'Counting: one two three four five ',
      open: 'text',
      tools: 0,
      stopped: false,
      done: false,
      usage: { ...emptyUsage(), input: 100, output: 7 },
      started: true,
      id: 'msg_first',
      model: 'm',
      next: 1,
      openIndex: 0,
      stopReason: null,
      stopSequence: null,
    });
    const sink = new SpliceSink(writer, { seen: 'Counting: one two three four five ', mode: 'continue', base: { ...emptyUsage(), input: 100, output: 7 } });
    sink.start();
    sink.reasoning();
    sink.blockEnd();
    for (const t of ['two three ', 'four five ', 'six seven']) sink.text(t);
    sink.usage({ input: 140, output: 5 });
    sink.stop('end_turn', null);
    sink.finish();
    const out = writer.take();
    expect(out).not.toContain('message_start');
    expect(out).not.toContain('content_block_start');
    const texts = [...out.matchAll(/"text":"([^"]*)"/g)].map((m) => m[1]).join('');
    expect(texts).toBe('six seven');
    expect(out).toContain('"output_tokens":12');
    expect(out).toContain('"input_tokens":100');
    expect(out.match(/message_stop/g)).toHaveLength(2);
  });
});
