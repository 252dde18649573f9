// The request log's words for a waited retry of the same target.
import { describe, expect, it } from 'vitest';
import type { AttemptEntry } from '../../../src/shared/model';
import { attemptEntry } from '../../support/builders';
import { describeRetry } from '../../../src/renderer/lib/retryWords';

const attempt = (retry: AttemptEntry['retry']): AttemptEntry => attemptEntry({ attempt: 2, retry });

describe('retry words', () => {
  it('says how long the attempt waited and that the upstream asked for it', () => {
    expect(describeRetry(attempt({ waitedMs: 2_000, why: 'hinted', afterStatus: 429 }))).toBe(
      'waited retry: sent again to the same model after 2.00 s, the wait the upstream asked for after a 429',
    );
  });

  it('says when a server error gave no retry time', () => {
    expect(describeRetry(attempt({ waitedMs: 750, why: 'unhinted', afterStatus: 503 }))).toBe(
      'waited retry: sent again to the same model after 750 ms, following a 503 that gave no retry time',
    );
  });

  it('says nothing for an attempt that was not a retry', () => {
    expect(describeRetry(attempt(null))).toBeNull();
    expect(describeRetry(attempt(undefined))).toBeNull();
  });
});
