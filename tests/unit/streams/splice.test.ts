// Splicing: the overlap a continuation repeats is trimmed (whitespace after a prefill; a restated
// tail of at least MIN_OVERLAP characters after a "continue" turn), and the continuation's own
// start and reasoning are dropped while its output usage is added to what the client was told.
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../src/main/engine/random';
import { AnthropicEventWriter } from '../../../src/main/engine/codecs/anthropicResponse';
import { emptyUsage } from '../../../src/main/engine/codecs/ir';
import type { IrWriter } from '../../../src/main/engine/codecs/ir';
import { longestOverlap, MIN_OVERLAP, OccurrenceTracker, overlapOf, SpliceSink, type ContinuationMode } from '../../../src/main/engine/streams/splice';

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

/** A writer that keeps the text it is given, and when (after how many fed deltas) it got it. */
function textWriter(): IrWriter & { out: string } {
  const w = {
    out: '',
    text(t: string) {
      w.out += t;
    },
    take: () => '',
  };
  const noop = () => {};
  return Object.assign(w, { start: noop, reasoning: noop, signature: noop, redacted: noop, toolStart: noop, toolArgs: noop, blockEnd: noop, usage: noop, stop: noop, finish: noop, error: noop, keepalive: noop });
}

/** Feeds `text` to a SpliceSink in deltas of `size` characters; returns what reached the client. */
function splice(seen: string, text: string, mode: ContinuationMode, size = 7): { out: string; trimmed: number; sink: SpliceSink; w: { out: string } } {
  const w = textWriter();
  const sink = new SpliceSink(w, { seen, mode, base: emptyUsage() });
  for (let i = 0; i < text.length; i += size) sink.text(text.slice(i, i + size));
  sink.stop('end_turn', null);
  sink.finish();
  return { out: w.out, trimmed: sink.trimmed, sink, w };
}

/** `n` distinct words "word0 word1 …" (so a repeat is never accidental). */
const wordsOf = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `word${from + i} `).join('');

/** A small deterministic generator (the engine's mulberry32). */
const rng = (seed: number): (() => number) => {
  const r = seededRandom(seed);
  return () => r.next();
};

describe('overlap against everything the client has (answers of any length)', () => {
  const long = wordsOf(0, 700); // more than 5,000 characters

  it('fixture size: far past any short window', () => {
    expect(long.length).toBeGreaterThan(5_000);
  });

  for (const mode of ['continue', 'prefill'] as const) {
    it(`${mode}: a continuation that restarts a long answer from its beginning reaches the client as only the new part`, () => {
      const cut = long.slice(0, 5_200); // cut mid-word
      const full = wordsOf(0, 900);
      const r = splice(cut, full, mode);
      expect(r.out).toBe(full.slice(cut.length));
      expect(cut + r.out).toBe(full);
      expect(r.trimmed).toBe(cut.length);
    });
  }

  it('continue: a repeat of a long tail (2,000+ characters) is trimmed exactly', () => {
    const tailStart = long.indexOf('word400 ');
    const r = splice(long, long.slice(tailStart) + wordsOf(700, 720), 'continue', 11);
    expect(long.length - tailStart).toBeGreaterThan(2_000);
    expect(r.out).toBe(wordsOf(700, 720));
  });

  it('continue: a restart that rewords half-way is not a repeat of the end: nothing the model said is lost', () => {
    const cut = wordsOf(0, 300);
    const reworded = wordsOf(0, 150) + 'and in other words ' + wordsOf(150, 320);
    const r = splice(cut, reworded, 'continue');
    expect(r.out).toBe(reworded);
  });

  it('prefill: a long repeat of the tail after a prefill is the model\'s own words, kept', () => {
    const tail = long.slice(long.indexOf('word600 '));
    const r = splice(long, tail + 'more', 'prefill');
    expect(r.out).toBe(tail + 'more');
  });

  it('a genuine continuation is not held back: its first delta reaches the client at once', () => {
    const w = textWriter();
    const sink = new SpliceSink(w, { seen: long, mode: 'continue', base: emptyUsage() });
    sink.text('Zebra crossing');
    expect(w.out).toBe('Zebra crossing');
  });

  it('held text never outgrows the answer so far: a full repeat is decided when it reaches the end', () => {
    const w = textWriter();
    const cut = wordsOf(0, 600);
    const sink = new SpliceSink(w, { seen: cut, mode: 'continue', base: emptyUsage() });
    for (let i = 0; i < cut.length; i += 13) sink.text(cut.slice(i, i + 13));
    expect(w.out).toBe('');
    sink.text('word600 ');
    expect(w.out).toBe('word600 ');
  });

  it('longestOverlap equals the brute-force longest suffix/prefix match (random small-alphabet strings)', () => {
    const r = rng(7);
    const str = (n: number) => Array.from({ length: n }, () => 'ab '[Math.floor(r() * 3)]).join('');
    for (let i = 0; i < 400; i++) {
      const a = str(Math.floor(r() * 60));
      const b = Math.floor(r() * 3) === 0 ? a.slice(Math.floor(r() * a.length)) + str(Math.floor(r() * 20)) : str(Math.floor(r() * 60));
      let brute = 0;
      for (let k = Math.min(a.length, b.length); k >= MIN_OVERLAP; k--) {
        if (a.endsWith(b.slice(0, k))) {
          brute = k;
          break;
        }
      }
      expect(longestOverlap(a, b)).toBe(brute);
    }
  });

  it('OccurrenceTracker agrees with a full search after every delta (random small-alphabet strings)', () => {
    const r = rng(11);
    const str = (n: number) => Array.from({ length: n }, () => 'ab'[Math.floor(r() * 2)]).join('');
    for (let i = 0; i < 300; i++) {
      const seen = str(1 + Math.floor(r() * 40));
      const t = new OccurrenceTracker(seen);
      let s = '';
      for (let j = 0; j < 8; j++) {
        const d = str(1 + Math.floor(r() * 4));
        s += d;
        t.add(d);
        let inside = false;
        for (let p = seen.indexOf(s); p >= 0; p = seen.indexOf(s, p + 1)) if (p + s.length < seen.length) inside = true;
        expect(t.inside).toBe(inside);
      }
    }
  });

  it('overlapOf on a long answer: undecided while the continuation still repeats it, decided once it goes past the end', () => {
    expect(overlapOf(long, long.slice(0, 3_000), 'continue', false)).toBeNull();
    expect(overlapOf(long, long + 'x', 'continue', false)).toBe(long.length);
    expect(overlapOf(long, long.slice(2_500) + 'x', 'continue', false)).toBe(long.length - 2_500);
  });
});
