import { describe, expect, it } from 'vitest';
import { errorBody, ProxyError } from '../../../src/main/engine/proxy/errors';
import { buildUpstreamHeaders, upstreamUrl } from '../../../src/main/engine/upstream/headers';
import { UsageTap } from '../../../src/main/engine/upstream/usage';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import { connectionRecord } from '../../support/builders';

const base: ConnectionRecord = connectionRecord({
  kind: 'anthropic',
  protocol: 'anthropic',
  provider: 'anthropic',
  baseUrl: 'https://api.anthropic.com',
});

describe('upstream requests', () => {
  it('builds endpoint URLs with each SDK’s base-URL convention', () => {
    expect(upstreamUrl(base, 'messages').href).toBe('https://api.anthropic.com/v1/messages');
    expect(upstreamUrl({ ...base, baseUrl: 'https://gw.test/api/anthropic/v1' }, 'count_tokens').href).toBe(
      'https://gw.test/api/anthropic/v1/messages/count_tokens',
    );
    const oa = { ...base, kind: 'openai' as const, protocol: 'openai' as const, baseUrl: 'https://api.openai.com/v1' };
    expect(upstreamUrl(oa, 'chat').href).toBe('https://api.openai.com/v1/chat/completions');
    expect(upstreamUrl(oa, 'responses').href).toBe('https://api.openai.com/v1/responses');
  });

  it('authenticates with the connection’s secret in each protocol’s header', () => {
    const inbound = { authorization: 'Bearer sk-sy-client', 'x-api-key': 'sk-sy-client', 'anthropic-beta': 'tools-1', cookie: 'c=1', 'x-session-id': 's' };
    const h = buildUpstreamHeaders(base, 'sk-ant-upstream', inbound, { stream: true, hasBody: true });
    expect(h).toEqual({
      'anthropic-beta': 'tools-1',
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-api-key': 'sk-ant-upstream',
    });
    const oauth = buildUpstreamHeaders({ ...base, authClass: 'oauth' }, 'tok', inbound, { stream: false, hasBody: true });
    expect(oauth.authorization).toBe('Bearer tok');
    expect(oauth['anthropic-beta']).toBe('tools-1,oauth-2025-04-20');
    expect(oauth['x-api-key']).toBeUndefined();
    const oa = buildUpstreamHeaders({ ...base, kind: 'openai', protocol: 'openai' }, 'sk-oa', inbound, { stream: false, hasBody: true });
    expect(oa.authorization).toBe('Bearer sk-oa');
    expect(Object.keys(oa)).not.toContain('cookie');
  });

  it('reads token usage from the head and tail of a stream without keeping the middle', () => {
    const tap = new UsageTap();
    tap.push(Buffer.from('event: message_start\ndata: {"message":{"usage":{"input_tokens":321,"output_tokens":1}}}\n\n'));
    for (let i = 0; i < 2000; i++) tap.push(Buffer.from(`data: {"delta":{"text":"chunk ${i}"}}\n\n`));
    tap.push(Buffer.from('event: message_delta\ndata: {"usage":{"output_tokens":654}}\n\n'));
    expect(tap.result()).toEqual({ inputTokens: 321, outputTokens: 654, cacheReadTokens: null, cacheWriteTokens: null });
    const oa = new UsageTap();
    oa.push(Buffer.from('{"usage":{"prompt_tokens":9,"completion_tokens":6}}'));
    expect(oa.result()).toEqual({ inputTokens: 9, outputTokens: 6, cacheReadTokens: null, cacheWriteTokens: null });
  });
});

describe('proxy error shapes', () => {
  const err = new ProxyError(503, 'all_targets_cooling_down', 'all cooling', { retryAfterMs: 2500, diagnostics: { excluded: [] } });

  it('speaks Anthropic’s error shape on Anthropic endpoints', () => {
    expect(errorBody('anthropic-messages', err, 'req_1')).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'all cooling', code: 'all_targets_cooling_down', retry_after: 3, diagnostics: { excluded: [] } },
      request_id: 'req_1',
    });
  });

  it('speaks OpenAI’s error shape on OpenAI endpoints', () => {
    expect(errorBody('openai-chat', new ProxyError(404, 'model_not_found', 'nope', { param: 'model' }), 'r')).toEqual({
      error: { message: 'nope', type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
    });
  });
});
