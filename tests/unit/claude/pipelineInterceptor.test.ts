// The adapter between the proxy's attempt chain and the Claude interceptor: other connections pass
// through untouched; a Claude subscription gets its per-try headers through ctx.extraHeaders (the
// client's betas kept), the fetch-start deadline, and "no usable token" as a failed outcome after
// the resilience layer was told (terminal expired, or cooling until the retry).
import { describe, expect, it, vi } from 'vitest';
import { LaneController } from '../../../src/main/engine/claude/laneController';
import { createClaudePipelineInterceptor } from '../../../src/main/engine/claude/pipelineInterceptor';
import type { TokenOutcome } from '../../../src/main/engine/claude/tokenManager';
import { UsageBook } from '../../../src/main/engine/claude/usageWindows';
import type { AttemptContext, AttemptOutcome, Dispatch } from '../../../src/main/engine/proxy/attempt';
import { CLIENT_GONE } from '../../../src/main/engine/proxy/attempt';
import { seededRandom } from '../../../src/main/engine/random';
import type { AttemptEntry } from '../../../src/shared/model';
import { connectionRecord } from '../../support/builders';
import { FakeClock } from '../../support/fakeClock';

function setup(token: () => Promise<TokenOutcome>) {
  const clock = new FakeClock();
  const markConnection = vi.fn();
  const usage = new UsageBook();
  const interceptor = createClaudePipelineInterceptor({
    accounts: {
      tokens: { token: vi.fn(token), afterUnauthorized: vi.fn(token) } as never,
      lane: new LaneController(),
      reset: { tryReset: vi.fn() } as never,
      usage,
      apiBaseFor: () => 'https://api.anthropic.test',
      onInterceptorEvent: () => {},
    },
    resilience: { markConnection },
    timeouts: { of: () => ({ connectMs: 1, headersMs: 60_000, idleMs: 1 }) },
    clock,
    random: seededRandom(1),
  });
  const seen: AttemptContext[] = [];
  const answer: { out: AttemptOutcome } = {
    out: { kind: 'failed', failure: { kind: 'http', status: 500, headers: {}, body: '', message: 'x' }, response: null, ttfbMs: 1 },
  };
  const next: Dispatch = async (ctx) => {
    seen.push(ctx);
    return answer.out;
  };
  return { clock, markConnection, usage, dispatch: interceptor(next), seen, answer };
}

function ctxFor(kind: 'anthropic' | 'claude-subscription', headers: Record<string, string> = {}, signal = new AbortController().signal): AttemptContext {
  const conn = connectionRecord({ kind, protocol: 'anthropic', authClass: kind === 'anthropic' ? 'apikey' : 'oauth', name: 'Acct' });
  return {
    call: { req: { headers } } as never,
    target: { conn, model: 'm', requestedModel: 'm' },
    stream: false,
    signal,
    extraHeaders: {},
    entry: {} as AttemptEntry,
  };
}

const ok: TokenOutcome = { ok: true, token: 'at-live-token', refreshed: false };

describe('Claude pipeline interceptor', () => {
  it('passes any other connection through with the very same context, without asking for a token', async () => {
    const tokens = vi.fn(async () => ok);
    const s = setup(tokens);
    const ctx = ctxFor('anthropic');
    await s.dispatch(ctx);
    expect(s.seen).toEqual([ctx]);
    expect(s.seen[0]).toBe(ctx);
    expect(tokens).not.toHaveBeenCalled();
  });

  it('sets the bearer token and the OAuth beta next to the client\'s betas, and records unified headers', async () => {
    const s = setup(async () => ok);
    s.answer.out = {
      kind: 'failed',
      failure: { kind: 'http', status: 500, headers: { 'anthropic-ratelimit-unified-5h-utilization': '0.3' }, body: '', message: 'x' },
      response: null,
      ttfbMs: 1,
    };
    const ctx = ctxFor('claude-subscription', { 'anthropic-beta': 'tools-2024' });
    const out = await s.dispatch(ctx);
    expect(out).toBe(s.answer.out);
    expect(s.seen[0]!.extraHeaders).toEqual({ authorization: 'Bearer at-live-token', 'anthropic-beta': 'tools-2024,oauth-2025-04-20' });
    expect(s.usage.snapshot(ctx.target.conn.id, s.clock.now())!.fiveHour!.utilization).toBeCloseTo(0.3);
  });

  it('a dead sign-in marks the connection terminal `expired` for this attempt and answers a 401 to fail over', async () => {
    const s = setup(async () => ({ ok: false, kind: 'expired', message: 'invalid_grant' }));
    const ctx = ctxFor('claude-subscription');
    const out = await s.dispatch(ctx);
    expect(s.seen).toHaveLength(0);
    expect(s.markConnection).toHaveBeenCalledWith(
      ctx.target.conn.id,
      { kind: 'terminal', status: 'expired', reason: 'auth_expired', message: 'invalid_grant' },
      s.clock.now(),
      ctx.target,
    );
    expect(out).toMatchObject({ kind: 'failed', failure: { status: 401 }, response: { status: 401 } });
    if (out.kind === 'failed') expect(out.response!.body).toContain('sign in again');
  });

  it('a token endpoint that fails cools the connection until the refresh is tried again', async () => {
    const s = setup(async () => ({ ok: false, kind: 'transient', message: 'unreachable', retryAt: Date.UTC(2026, 11, 2, 12, 0, 30) }));
    const ctx = ctxFor('claude-subscription');
    const out = await s.dispatch(ctx);
    expect(s.markConnection).toHaveBeenCalledWith(
      ctx.target.conn.id,
      { kind: 'cooling', until: s.clock.now() + 30_000, reason: 'token_refresh_failed', message: 'unreachable' },
      s.clock.now(),
      ctx.target,
    );
    expect(out).toMatchObject({ kind: 'failed', response: { status: 503 } });
  });

  it('a client that went away during the token wait gets an aborted outcome, not an error', async () => {
    const ac = new AbortController();
    const s = setup(async () => {
      ac.abort(CLIENT_GONE);
      throw CLIENT_GONE;
    });
    expect(await s.dispatch(ctxFor('claude-subscription', {}, ac.signal))).toEqual({ kind: 'aborted' });
    expect(s.markConnection).not.toHaveBeenCalled();
  });
});
