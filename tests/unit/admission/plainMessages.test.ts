// The messages an agent's user and the request log read when admission turns a request away, and
// the words for why a connection was passed over, carry no setting keys, codes or field names
// (issue 22): the machine code stays in `code`, only the human message is words.
import { describe, expect, it } from 'vitest';
import { executionTimeout, queueFull, queueTimeout, semaphoreQueueFull, semaphoreTimeout } from '../../../src/main/engine/admission/admissionErrors';
import { SKIP_REASON_WORDS } from '../../../src/shared/skipReasonWords';
import { findJargon } from '../../e2e/jargon';

const jargon = (text: string) => findJargon(text).map((h) => `${h.rule}: ${h.text}`);

describe('admission error messages', () => {
  it.each([
    ['queue full', queueFull('Alpha', 100, null), 'RATE_LIMIT_QUEUE_FULL'],
    ['queue timeout after a pause', queueTimeout('Alpha', 30_000, 45_000), 'RATE_LIMIT_QUEUE_TIMEOUT'],
    ['queue timeout without a pause', queueTimeout('Alpha', 30_000, null), 'RATE_LIMIT_QUEUE_TIMEOUT'],
    ['execution timeout', executionTimeout('Alpha', 90_000), 'RATE_LIMIT_EXECUTION_TIMEOUT'],
    ['concurrency timeout', semaphoreTimeout('Alpha', 'model glm-5', 10_000), 'SEMAPHORE_TIMEOUT'],
    ['concurrency queue full', semaphoreQueueFull('Alpha', 'connection', 8), 'SEMAPHORE_QUEUE_FULL'],
  ])('%s: the code stays machine-readable, the message is words', (_what, err, code) => {
    expect(err.code).toBe(code);
    expect(jargon(err.message)).toEqual([]);
    expect(err.message).toContain('"Alpha"');
  });

  it('names the wait in seconds and the setting by its label', () => {
    const m = queueTimeout('Alpha', 30_000, 45_000).message;
    expect(m).toContain('45s pause');
    expect(m).toContain('(30s, the "Queue wait budget" setting)');
  });
});

describe('skip reason words', () => {
  it.each(Object.entries(SKIP_REASON_WORDS))('%s reads as words', (_reason, words) => {
    expect(jargon(words)).toEqual([]);
  });
});
