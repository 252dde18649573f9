// The native fallback (proxy/nativeFallback.ts): which refusals of a translated attempt let the walk
// go on to a native target, and which targets are skipped once one did.
import { describe, expect, it } from 'vitest';
import type { InboundCall } from '../../../src/main/engine/proxy/inbound';
import { NativeFallback } from '../../../src/main/engine/proxy/nativeFallback';
import type { AttemptVerdict, UpstreamFailure } from '../../../src/main/engine/resilience/port';
import type { Target } from '../../../src/main/engine/routing/target';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import { connectionRecord } from '../../support/builders';

const call = {
  protocol: 'anthropic-messages',
  endpoint: 'messages',
  wire: 'anthropic',
  req: { headers: {} },
  res: {},
  requestId: 'req_test',
  startedAt: 0,
  startMono: 0,
  clientKeyId: null,
  body: Buffer.from('{}'),
  json: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
} as unknown as InboundCall;

const target = (name: string, conn: Partial<ConnectionRecord>): Target => ({ conn: connectionRecord({ name, ...conn }), model: 'm', requestedModel: 'm' });
const chat = (name: string) => target(name, { kind: 'openai-compatible', protocol: 'openai', provider: 'compat', servesResponses: false });
const native = (name: string) => target(name, { kind: 'anthropic', protocol: 'anthropic', provider: 'anthropic' });

const failure = (status: number, message: string): UpstreamFailure => ({ kind: 'http', status, headers: {}, body: JSON.stringify({ error: { message } }), message });
const badRequest: AttemptVerdict = { reason: 'bad_request', failover: false, retryAfterMs: null, hint: null };

describe('native fallback after a refused translation', () => {
  it('a translated 400 with a native target left goes on, and bars translated targets from then on', () => {
    const [a, b, c] = [chat('A'), chat('B'), native('C')];
    const fb = new NativeFallback(call, [a, b, c]);
    expect(fb.bar(b)).toBeNull();
    expect(fb.note(a, failure(400, "Invalid value for 'tool_choice'"), badRequest, new Set([a]))).toBe(true);
    expect(fb.bar(b)).toMatch(/A \(m\) refused the translated request as malformed/);
    expect(fb.bar(c)).toBeNull();
    // Only once: a second refusal is relayed.
    expect(fb.note(b, failure(400, 'bad'), badRequest, new Set([a, b]))).toBe(false);
  });

  it('a 422 qualifies; other statuses, verdicts and native attempts do not', () => {
    const [a, c] = [chat('A'), native('C')];
    expect(new NativeFallback(call, [a, c]).note(a, failure(422, 'unprocessable'), badRequest, new Set([a]))).toBe(true);
    expect(new NativeFallback(call, [a, c]).note(a, failure(413, 'too large'), badRequest, new Set([a]))).toBe(false);
    expect(new NativeFallback(call, [a, c]).note(a, failure(400, 'x'), { ...badRequest, reason: 'auth_error' }, new Set([a]))).toBe(false);
    expect(new NativeFallback(call, [c, a]).note(c, failure(400, 'x'), badRequest, new Set([c]))).toBe(false);
  });

  it('a content-policy refusal is relayed: any target would repeat it', () => {
    for (const m of ['Your request was flagged by our content management policy', 'Output blocked by content filtering policy', 'This request violates our usage policies', 'safety system rejected the prompt']) {
      const [a, c] = [chat('A'), native('C')];
      expect(new NativeFallback(call, [a, c]).note(a, failure(400, m), badRequest, new Set([a])), m).toBe(false);
    }
  });

  it('with no native target left (or only spent ones) the 400 is relayed', () => {
    const [a, b, c] = [chat('A'), chat('B'), native('C')];
    expect(new NativeFallback(call, [a, b]).note(a, failure(400, 'x'), badRequest, new Set([a]))).toBe(false);
    expect(new NativeFallback(call, [c, a]).note(a, failure(400, 'x'), badRequest, new Set([a, c]))).toBe(false);
  });
});
