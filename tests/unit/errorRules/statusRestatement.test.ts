// Status restatement (SPEC §7, R-USR-01..08): the agentrouter rules and the attempt interceptor.
import { describe, expect, it } from 'vitest';
import type { AttemptContext, AttemptOutcome, Dispatch } from '../../../src/main/engine/proxy/attempt';
import {
  applyStatusRestatement,
  STATUS_RESTATEMENT_RULES,
  statusRestatementInterceptor,
  type RestatementRules,
} from '../../../src/main/engine/resilience/statusRestatement';
import { connectionRecord } from '../../support/builders';

const quotaBody = JSON.stringify({ error: { message: '用户额度不足, 剩余额度: $0.00', type: 'new_api_error' } });
const deniedBody = JSON.stringify({ error: { message: '无权访问模型 claude-opus (额度不足?)', type: 'new_api_error' } });

describe('applyStatusRestatement: the agentrouter rules', () => {
  it('R-USR-01: a 403 with 用户额度不足 is a 429, with a 60 s hint for the client (R-USR-06)', () => {
    expect(applyStatusRestatement('agentrouter', 403, quotaBody)).toEqual({
      ruleId: 'agentrouter-quota-as-429',
      fromStatus: 403,
      toStatus: 429,
      clientRetryAfterMs: 60_000,
    });
  });

  it('R-USR-01: the shorter 额度不足 and a 400 are restated too', () => {
    expect(applyStatusRestatement('agentrouter', 400, '{"error":"额度不足"}')?.toStatus).toBe(429);
    expect(applyStatusRestatement('agentrouter', 403, '额度不足')?.toStatus).toBe(429);
  });

  it('R-USR-08: exclude markers win: 无权访问模型 keeps its status even when a quota marker is there', () => {
    expect(applyStatusRestatement('agentrouter', 403, deniedBody)).toBeNull();
  });

  it('R-USR-02: only the rule\'s provider and statuses; other text is left alone', () => {
    expect(applyStatusRestatement('openai', 403, quotaBody)).toBeNull();
    expect(applyStatusRestatement('agentrouter', 500, quotaBody)).toBeNull();
    expect(applyStatusRestatement('agentrouter', 403, '{"error":"forbidden"}')).toBeNull();
  });

  it('R-USR-02: rules are {id, fromStatuses, toStatus, textMarkers, excludeMarkers, defaultRetryAfterMs}, markers case-insensitive', () => {
    const rules: RestatementRules = {
      gw: [{ id: 'gw-1', fromStatuses: [403], toStatus: 429, textMarkers: ['Quota Low'], excludeMarkers: ['FOREVER'], defaultRetryAfterMs: null }],
    };
    expect(applyStatusRestatement('gw', 403, 'your quota   low', rules)).toMatchObject({ ruleId: 'gw-1', clientRetryAfterMs: null });
    expect(applyStatusRestatement('gw', 403, 'quota low forever', rules)).toBeNull();
    expect(Object.keys(STATUS_RESTATEMENT_RULES)).toEqual(['agentrouter']);
  });
});

describe('statusRestatementInterceptor', () => {
  const conn = connectionRecord({ provider: 'agentrouter' });
  const ctx = { target: { conn, model: 'm' } } as unknown as AttemptContext;
  const failed = (kind: 'http' | 'stream_error', status: number, body: string): AttemptOutcome => ({
    kind: 'failed',
    failure: { kind, status, headers: {}, body, message: 'upstream answered' },
    response: { status, headers: { 'content-type': 'application/json' }, body },
    ttfbMs: 5,
  });
  const run = (out: AttemptOutcome) => statusRestatementInterceptor()((async () => out) as Dispatch)(ctx);

  it('R-USR-03: the failure and the relayed response both carry 429 before anything classifies them', async () => {
    const out = await run(failed('http', 403, quotaBody));
    if (out.kind !== 'failed') throw new Error('expected a failure');
    expect(out.failure).toMatchObject({ status: 429, restatedFrom: 403, clientRetryAfterMs: 60_000, body: quotaBody });
    expect(out.failure.message).toContain('restated as 429');
    expect(out.response?.status).toBe(429);
  });

  it('R-USR-04: an error inside a 200 SSE stream (stream_error) is not restated', async () => {
    const out = await run(failed('stream_error', 403, quotaBody));
    expect(out.kind === 'failed' && out.failure.status).toBe(403);
  });

  it('R-USR-08: a permanent error passes through unchanged', async () => {
    const orig = failed('http', 403, deniedBody);
    expect(await run(orig)).toBe(orig);
  });
});
