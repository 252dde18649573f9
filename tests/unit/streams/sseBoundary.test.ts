// SseBoundary: a native stream is forwarded up to the end of its last complete event, whatever the
// chunking and line endings, so a cut never leaves half an event at the client.
import { describe, expect, it } from 'vitest';
import { lastEventEnd, SseBoundary } from '../../../src/main/engine/streams/sseBoundary';

const feed = (text: string, size: number) => {
  const b = new SseBoundary();
  const out: string[] = [];
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) out.push(b.push(bytes.subarray(i, i + size)).toString());
  return { forwarded: out.join(''), rest: b.end()?.toString() ?? '' };
};

describe('SSE event boundaries', () => {
  it('finds the end of the last blank line for LF, CRLF and CR endings', () => {
    expect(lastEventEnd(Buffer.from('data: a\n\ndata: b'))).toBe(9);
    expect(lastEventEnd(Buffer.from('data: a\r\n\r\ndata: b\r\n'))).toBe(11);
    expect(lastEventEnd(Buffer.from('data: a\r\rdata'))).toBe(9);
    expect(lastEventEnd(Buffer.from('data: a\ndata: b\n'))).toBe(0);
  });

  it('forwards only whole events, one byte at a time or seven, and keeps the unfinished one', () => {
    const text = 'event: a\ndata: {"x":1}\n\nevent: b\ndata: {"y":"é€"}\n\nevent: c\ndata: {"z"';
    for (const size of [1, 7, text.length]) {
      const { forwarded, rest } = feed(text, size);
      expect(forwarded).toBe('event: a\ndata: {"x":1}\n\nevent: b\ndata: {"y":"é€"}\n\n');
      expect(rest).toBe('event: c\ndata: {"z"');
    }
  });

  it('a blank line split across two chunks still closes the event', () => {
    const b = new SseBoundary();
    expect(b.push(Buffer.from('data: 1\n')).toString()).toBe('');
    expect(b.held).toBe(8);
    expect(b.push(Buffer.from('\ndata: 2')).toString()).toBe('data: 1\n\n');
    expect(b.end()?.toString()).toBe('data: 2');
  });
});

describe('SSE event boundaries with CRLF after LF events', () => {
  it('finds a CRLF blank line that comes after the last LF one', () => {
    expect(lastEventEnd(Buffer.from('data: a\n\ndata: b\r\n\r\ndata: c'))).toBe(20);
    expect(lastEventEnd(Buffer.from('data: a\r\n\r\ndata: b\n\ndata: c'))).toBe(20);
  });
});
