// BodyReader.peek: reading ahead keeps every chunk for the consumer that follows, in order, and
// replays the end or the error to it; past the limit it stops reading and says so.
import { describe, expect, it } from 'vitest';
import { BodyReader } from '../../../src/main/engine/proxy/bodyReader';
import { ScriptedBody } from '../../support/scriptedBody';

async function started(pieces: string[], end: 'end' | 'error' | 'open' = 'end') {
  const body = new ScriptedBody();
  const reader = new BodyReader(body);
  const firstP = reader.first();
  for (const p of pieces) body.write(p);
  if (end === 'end') body.end();
  else if (end === 'error') setImmediate(() => body.fail(new Error('reset')));
  const first = await firstP;
  return { body, reader, first: first.kind === 'chunk' ? first.chunk : null };
}

describe('BodyReader.peek', () => {
  it('a body that ends within the limit is returned whole, and still read in full afterwards', async () => {
    const { reader, first } = await started(['{"a":', '1,"b":', '2}']);
    const peeked = await reader.peek(first, 1024);
    expect(peeked).toEqual({ ok: true, body: Buffer.from('{"a":1,"b":2}') });
    const all = await reader.readAll(first, 1024);
    expect(all.ok && all.body.toString()).toBe('{"a":1,"b":2}');
  });

  it('past the limit it returns null and keeps everything read, in order, for the next consumer', async () => {
    const { body, reader, first } = await started(['aaaa', 'bbbb', 'cccc'], 'open');
    const peeked = await reader.peek(first, 6);
    expect(peeked).toEqual({ ok: true, body: null });
    body.write('dddd');
    body.end();
    const all = await reader.readAll(first, 1024);
    expect(all.ok && all.body.toString()).toBe('aaaabbbbccccdddd');
  });

  it('an error while reading ahead is reported, and replayed to the next consumer', async () => {
    const { reader, first } = await started(['aaaa'], 'error');
    const peeked = await reader.peek(first, 1024);
    expect(peeked.ok).toBe(false);
    const all = await reader.readAll(first, 1024);
    expect(all.ok).toBe(false);
  });
});
