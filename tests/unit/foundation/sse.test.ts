import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../src/shared/sse';

describe('server-sent events framing', () => {
  it('returns complete events and keeps a partial one until the rest arrives', () => {
    const p = new SseParser();
    expect(p.push(': connected\n\nevent: health\ndata: {"a"')).toEqual([]);
    expect(p.push(':1}\n\nevent: logs\ndata: [1,\ndata: 2]\n\n')).toEqual([
      { event: 'health', data: '{"a":1}' },
      { event: 'logs', data: '[1,\n2]' },
    ]);
  });

  it('names an event without an event: line "message"', () => {
    expect(new SseParser().push('data: x\n\n')).toEqual([{ event: 'message', data: 'x' }]);
  });
});
