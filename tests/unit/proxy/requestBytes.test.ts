import { describe, expect, it } from 'vitest';
import { byteLengthOf, contiguousView, partsOf, SCRATCH_MAX_BYTES } from '../../../src/main/engine/proxy/requestBytes';

/** `text`'s bytes cut at the given offsets (a multi-byte character may be split). */
const cut = (text: string, at: number[]) => {
  const b = Buffer.from(text);
  return [0, ...at].map((from, i) => b.subarray(from, [...at, b.length][i]));
};

describe('a request body kept as its socket chunks', () => {
  it('reads as one sequence: length, a contiguous view, and views of any range', () => {
    const text = 'héllo — 日本語 🚀 world';
    const chunks = cut(text, [2, 3, 11, 19]); // é, — and 日 split across chunks
    expect(byteLengthOf(chunks)).toBe(Buffer.byteLength(text));
    expect(contiguousView(chunks).toString()).toBe(text);
    const all = Buffer.from(text);
    for (const [from, to] of [[0, all.length], [1, 4], [2, 3], [10, 20], [5, 5], [19, 1000]] as const) {
      const parts = partsOf(chunks, from, to);
      expect(Buffer.concat(parts).equals(all.subarray(from, to)), `${from}-${to}`).toBe(true);
      // Views, not copies: each part lies in one of the chunks' memory.
      for (const p of parts) expect(chunks.some((c) => c.buffer === p.buffer)).toBe(true);
    }
    expect(Buffer.concat(partsOf(chunks, 3)).equals(all.subarray(3))).toBe(true);
  });

  it('a single buffer is its own view; a chunked view is reused by the next call; a very large one is its own copy', () => {
    const one = Buffer.from('{"a":1}');
    expect(contiguousView(one)).toBe(one);
    expect(contiguousView([one])).toBe(one);
    const first = contiguousView(cut('{"first":true}', [4]));
    expect(first.toString()).toBe('{"first":true}');
    const second = contiguousView(cut('{"second":1}', [3]));
    expect(second.buffer).toBe(first.buffer); // read a view at once: the next call overwrites it
    expect(second.toString()).toBe('{"second":1}');
    const big = [Buffer.alloc(SCRATCH_MAX_BYTES, 0x61), Buffer.from('b')];
    const view = contiguousView(big);
    expect(view.length).toBe(SCRATCH_MAX_BYTES + 1);
    expect(view.buffer).not.toBe(second.buffer);
    expect(view.at(-1)).toBe(0x62);
  });
});
