// The request log's words for a streamed attempt: figures, the watchdog that ended it, continuation.
import { describe, expect, it } from 'vitest';
import type { AttemptEntry } from '../../../src/shared/model';
import { attemptEntry } from '../../support/builders';
import { describeStream } from '../../../src/renderer/lib/streamWords';

const attempt = (over: Partial<AttemptEntry>): AttemptEntry => attemptEntry(over);

describe('stream words', () => {
  it('says when the first output came, and what was read', () => {
    expect(describeStream(attempt({ firstOutputMs: 1200, bytes: 49_152, frames: 210, outputFrames: 200 })).figures).toBe('first output 1.20 s · 48 KiB, 210 frames (200 output)');
    expect(describeStream(attempt({ firstOutputMs: null, bytes: 300, frames: 3, outputFrames: 0 })).figures).toBe('no model output · 300 B, 3 frames (0 output)');
    expect(describeStream(attempt({})).figures).toBeNull();
  });

  it('names the watchdog and the continuation either way', () => {
    const cut = attempt({ watchdog: 'content_stall', continuedElsewhere: true });
    const next = attempt({ attempt: 2, continuation: 'continue', prefillRefused: true });
    expect(describeStream(cut, next)).toMatchObject({ watchdog: expect.stringMatching(/content stall/), continuation: 'answer continued on attempt 2' });
    expect(describeStream(next).continuation).toBe('continued the answer (a "continue" turn); the prefill was refused');
    expect(describeStream(attempt({ continuation: 'prefill' })).continuation).toBe('continued the answer (sent as a prefill)');
  });
});
