// Status restatement through the proxy (SPEC §7, R-USR-01..16): agentrouter's mis-stated quota
// (403 + 用户额度不足) reaches the client and every layer as a 429; its permanent 无权访问模型
// keeps its 403 and locks only that model.
import { describe, expect, it } from 'vitest';
import { ask, cooldownOf, gatewayError, rawAsk, rulesRigPerTest } from './support';

const KA = 'sk-agentrouter-aaaaaaaaaaaa';
const KB = 'sk-agentrouter-bbbbbbbbbbbb';
const QUOTA = '用户额度不足, 剩余额度: $0.000000';
const DENIED = '无权访问模型 claude-opus-x';
const sse = (message: string) => ({
  status: 200,
  headers: { 'content-type': 'text/event-stream' },
  chunks: [{ data: `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'permission_error', message } })}\n\n` }],
});

describe('agentrouter status restatement', () => {
  const { fake, start } = rulesRigPerTest();

  it('R-USR-01/03/06: a 403 with 用户额度不足 reaches the client as 429 with a 60 s retry hint; the cooldown manager shows a quota cooldown, not an auth error', async () => {
    const r = await start();
    const a = await r.add('AR A', 'agentrouter', KA);
    fake.script({ key: KA }, [gatewayError(403, QUOTA)]);
    const answer = await rawAsk(r.t, 'claude-x');
    expect(answer.status).toBe(429);
    expect(answer.retryAfter).toBe('60');
    expect(answer.body).toContain('用户额度不足');
    const cd = await cooldownOf(r.t, a.id);
    expect(cd).toMatchObject({ status: 'cooling', terminal: false, lastErrorType: 'quota_exhausted', errorCode: '429' });
    expect(cd.lastError).toContain('restated as 429');
    const log = (await r.t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(log.attempts[0]).toMatchObject({ status: 429, errorClass: 'quota_exhausted' });
  });

  it('R-USR-07/11: the internal cooldown is the API-key backoff (3 s, then 6 s) while the client is told 60 s; after 3 s the connection is tried again', async () => {
    const r = await start();
    const a = await r.add('AR A', 'agentrouter', KA);
    fake.script({ key: KA }, [gatewayError(403, QUOTA)]);
    expect((await rawAsk(r.t, 'claude-x')).retryAfter).toBe('60');
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(3_000);
    r.clock.advance(3_000);
    expect((await rawAsk(r.t, 'claude-x')).status).toBe(429);
    expect(fake.requestsFor({ key: KA })).toHaveLength(2);
    expect((await cooldownOf(r.t, a.id)).remainingMs).toBe(6_000);
  });

  it('R-USR-12/13: the quota never makes the connection terminal, no model entry is written, and it is eligible again when the cooldown ends', async () => {
    const r = await start();
    const a = await r.add('AR A', 'agentrouter', KA);
    fake.script({ key: KA }, [gatewayError(403, QUOTA), gatewayError(403, QUOTA), { json: { id: 'ok', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }], model: 'claude-x', stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } } }], { repeatLast: true });
    for (let i = 0; i < 2; i++) {
      expect((await rawAsk(r.t, 'claude-x')).status).toBe(429);
      const cd = await cooldownOf(r.t, a.id);
      expect(cd.terminal).toBe(false);
      expect(cd.status).toBe('cooling');
      expect(cd.lockouts).toEqual([]);
      r.clock.advance(cd.remainingMs);
    }
    expect(await r.lockouts()).toEqual([]);
    const ok = await ask(r.client, 'claude-x');
    expect(ok).toMatchObject({ status: 200, selected: a.id });
    expect((await cooldownOf(r.t, a.id)).status).toBe('active');
  });

  it('R-USR-04: an error inside a 200 SSE stream is not restated', async () => {
    const r = await start();
    await r.add('AR A', 'agentrouter', KA);
    fake.script({ key: KA }, [sse(QUOTA)]);
    const res = await fetch(`${r.t.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': r.t.clientKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    // The stream's own error is relayed with the status its type maps to, never a restated 429.
    expect(res.status).not.toBe(429);
    expect(res.headers.get('retry-after')).not.toBe('60');
    expect(text).toContain('用户额度不足');
    expect((await r.t.api.listLogs({ limit: 1 })).entries[0]!.attempts[0]!.errorMessage).not.toContain('restated');
  });

  it('R-USR-08/09/10: 无权访问模型 keeps its 403, locks only that model (reason forbidden, at most 30 min) and the connection stays active for other models', async () => {
    const r = await start();
    const a = await r.add('AR A', 'agentrouter', KA);
    fake.script({ key: KA, model: 'claude-opus-x' }, [gatewayError(403, DENIED)]);
    const denied = await rawAsk(r.t, 'claude-opus-x');
    expect(denied.status).toBe(403);
    expect(fake.requestsFor({ key: KA })).toHaveLength(1);
    const [lock] = await r.lockouts();
    expect(lock).toMatchObject({ connectionId: a.id, model: 'claude-opus-x', reason: 'forbidden', origin: 'rule' });
    expect(lock!.expiresAt - r.clock.now()).toBe(30 * 60_000);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'active', remainingMs: 0 });
    // No restated retry loop: the locked model is not sent again; the other model is served.
    expect((await rawAsk(r.t, 'claude-opus-x')).status).not.toBe(200);
    expect(fake.requestsFor({ key: KA })).toHaveLength(1);
    expect(await ask(r.client, 'claude-sonnet-x')).toMatchObject({ status: 200, selected: a.id });
  });

  it('R-USR-14: with disableCooling the quota becomes a model lock and the connection does not cool', async () => {
    const r = await start();
    const a = await r.add('AR A', 'agentrouter', KA, { disableCooling: true });
    fake.script({ key: KA }, [gatewayError(403, QUOTA)]);
    expect((await rawAsk(r.t, 'claude-x')).status).toBe(429);
    expect(await cooldownOf(r.t, a.id)).toMatchObject({ status: 'active', remainingMs: 0 });
    expect((await r.lockouts()).map((l) => [l.connectionId, l.model, l.origin])).toEqual([[a.id, 'claude-x', 'no_cooling']]);
  });

  it('R-USR-05: in a combo the restated 429 fails over to the next target', async () => {
    const r = await start();
    await r.add('AR A', 'agentrouter', KA);
    const other = await r.add('Other', 'glm', KB);
    fake.script({ key: KA }, [gatewayError(403, QUOTA)]);
    await r.t.api.createCombo({ name: 'pool', strategy: 'priority', targets: [{ provider: 'agentrouter', model: 'claude-x' }, { provider: 'glm', model: 'glm-x' }] });
    expect(await ask(r.client, 'pool')).toMatchObject({ status: 200, selected: other.id });
  });

  it('R-USR-15: two combo targets pinned to A: after the quota on the first, the second is skipped in the same request', async () => {
    const r = await start();
    const a = await r.add('AR A', 'agentrouter', KA);
    fake.script({ key: KA }, [gatewayError(403, QUOTA)]);
    await r.t.api.createCombo({
      name: 'pinned',
      strategy: 'priority',
      targets: [
        { connectionId: a.id, model: 'claude-x' },
        { connectionId: a.id, model: 'claude-y' },
      ],
    });
    expect((await rawAsk(r.t, 'pinned')).status).toBe(429);
    expect(fake.requestsFor({ key: KA })).toHaveLength(1);
    const log = (await r.t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(log.skipped).toEqual([expect.objectContaining({ connectionId: a.id, reason: 'cooling_down', model: 'claude-y' })]);
  });

  it('R-USR-16: a model-list combo over A and B: the quota on A moves the next step to B, never back to A', async () => {
    const r = await start();
    const a = await r.add('AR A', 'agentrouter', KA, { priority: 1 });
    const b = await r.add('AR B', 'agentrouter', KB, { priority: 2 });
    fake.script({ key: KA }, [gatewayError(403, QUOTA)]);
    await r.t.api.createCombo({ name: 'models', strategy: 'priority', targets: [{ provider: 'agentrouter', model: 'claude-x' }, { provider: 'agentrouter', model: 'claude-y' }] });
    expect(await ask(r.client, 'models')).toMatchObject({ status: 200, selected: b.id });
    // B fails too: the request ends without trying A again.
    r.clock.advance(10_000);
    fake.reset();
    fake.script({ key: KA }, [gatewayError(403, QUOTA)]).script({ key: KB }, [gatewayError(403, QUOTA)]);
    expect((await rawAsk(r.t, 'models')).status).toBe(429);
    expect(fake.requestsFor({ key: KA })).toHaveLength(1);
    expect(fake.requestsFor({ key: KB })).toHaveLength(1);
    expect((await cooldownOf(r.t, a.id)).status).toBe('cooling');
  });
});
