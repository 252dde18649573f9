// The stage where the request-log writer gathers a burst's JSON lines for the log worker
// (logs/lineStage.ts): what goes in comes out line for line, whatever its characters and size, and
// its buffers are reused once committed instead of allocated per group.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineStage, STAGE_BYTES, linesOf } from '../../../src/main/engine/logs/lineStage';

const read = (s: { buffer: ArrayBufferLike; len: number }) => [...linesOf(s.buffer, s.len)];

describe('LineStage', () => {
  it('gives back the lines it was given, in order, across several adds, whatever their characters', () => {
    const stage = new LineStage();
    const a = [JSON.stringify({ id: 'a', text: 'plain' }), JSON.stringify({ id: 'b', text: 'é, 日本語, 🙂, a "quote" and a\nnewline' })];
    const b = [JSON.stringify({ id: 'c', text: '' }), '{}', JSON.stringify({ id: 'd', lone: '\ud800' })];
    stage.add(a);
    stage.add(b);
    expect(stage.entries).toBe(5);
    const staged = stage.take()!;
    expect(staged.count).toBe(5);
    expect(staged.len).toBe(Buffer.byteLength([...a, ...b].join('\n')));
    expect(read(staged)).toEqual([...a, ...b]);
    expect(read(staged).map((l) => JSON.parse(l) as unknown)).toEqual([...a, ...b].map((l) => JSON.parse(l) as unknown));
  });

  it('is empty after take, and take gives nothing when nothing is staged', () => {
    const stage = new LineStage();
    expect(stage.take()).toBeNull();
    stage.add(['{"x":1}']);
    stage.take();
    expect(stage.entries).toBe(0);
    expect(stage.bytes).toBe(0);
    expect(stage.take()).toBeNull();
  });

  it('grows past its buffer for lines larger than a group, keeping what was staged before', () => {
    const stage = new LineStage();
    const small = JSON.stringify({ id: 'small' });
    const huge = JSON.stringify({ id: 'huge', text: 'x'.repeat(STAGE_BYTES) });
    stage.add([small, huge, small]);
    const staged = stage.take()!;
    expect(staged.buffer.byteLength).toBeGreaterThan(STAGE_BYTES);
    expect(read(staged)).toEqual([small, huge, small]);
  });

  it('writes the next group into a buffer handed back once committed, and into a new one otherwise', () => {
    const stage = new LineStage();
    stage.add(['{"g":1}']);
    const first = stage.take()!;
    stage.add(['{"g":2}']);
    const second = stage.take()!;
    // The first is still being read (not handed back): the second could not use it.
    expect(second.buffer).not.toBe(first.buffer);
    stage.reuse(first.buffer);
    stage.add(['{"g":3}']);
    const third = stage.take()!;
    expect(third.buffer).toBe(first.buffer);
    expect(read(third)).toEqual(['{"g":3}']);
  });

  it('keeps no buffer once released, and never pools one larger than its size', () => {
    const stage = new LineStage();
    stage.add(['{"g":1}']);
    const first = stage.take()!;
    stage.reuse(first.buffer);
    stage.release();
    stage.add(['{"g":2}']);
    expect(stage.take()!.buffer).not.toBe(first.buffer);

    stage.add([JSON.stringify({ text: 'y'.repeat(STAGE_BYTES) })]);
    const big = stage.take()!;
    stage.reuse(big.buffer);
    stage.add(['{"g":3}']);
    const next = stage.take()!;
    expect(next.buffer).not.toBe(big.buffer);
    expect(next.buffer.byteLength).toBe(STAGE_BYTES);
  });
});

describe('LineStage where the runtime has no SharedArrayBuffer', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it('stages into an ArrayBuffer instead (posting it then copies it), with the same lines and reuse', async () => {
    vi.stubGlobal('SharedArrayBuffer', undefined);
    vi.resetModules();
    const m = await import('../../../src/main/engine/logs/lineStage');
    const stage = new m.LineStage();
    const lines = [JSON.stringify({ id: 'a', text: 'é 🙂' }), '{}'];
    stage.add(lines);
    const first = stage.take()!;
    expect(first.buffer).toBeInstanceOf(ArrayBuffer);
    expect([...m.linesOf(first.buffer, first.len)]).toEqual(lines);
    stage.reuse(first.buffer);
    stage.add(['{"g":2}']);
    expect(stage.take()!.buffer).toBe(first.buffer);
  });
});
