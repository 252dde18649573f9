// The translation glue (proxy/translation.ts): which targets are translated, the token-limit field
// per connection and model, refusals before a target queues, the translated body cached per call,
// and the connections migration's servesResponses defaults.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InboundCall } from '../../../src/main/engine/proxy/inbound';
import { chatMaxTokensField, codecOf, refusalFor, upstreamRequestOf } from '../../../src/main/engine/proxy/translation';
import type { Target } from '../../../src/main/engine/routing/target';
import { migrate, openStore } from '../../../src/main/engine/store/db';
import { migrations } from '../../../src/main/engine/store/migrations';
import type { ConnectionRecord } from '../../../src/main/engine/store/connectionsRepo';
import { connectionRecord } from '../../support/builders';

function call(protocol: InboundCall['protocol'], json: Record<string, unknown>): InboundCall {
  const body = Buffer.from(JSON.stringify(json));
  const endpoint = protocol === 'anthropic-messages' ? 'messages' : protocol === 'anthropic-count-tokens' ? 'count_tokens' : protocol === 'openai-responses' ? 'responses' : 'chat';
  return {
    protocol,
    endpoint,
    wire: protocol.startsWith('anthropic') ? 'anthropic' : 'openai',
    req: { headers: {} } as InboundCall['req'],
    res: {} as InboundCall['res'],
    requestId: 'req_test',
    startedAt: 0,
    startMono: 0,
    clientKeyId: null,
    body,
    json,
  };
}

const target = (conn: Partial<ConnectionRecord>, model = 'm'): Target => ({ conn: connectionRecord(conn), model, requestedModel: model });
const anthropicConn = { kind: 'anthropic' as const, protocol: 'anthropic' as const, provider: 'anthropic' };
const compat = { kind: 'openai-compatible' as const, protocol: 'openai' as const, provider: 'compat', servesResponses: false };

describe('translation per target', () => {
  const messages = call('anthropic-messages', { model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });

  it('translates only when the target speaks another shape', () => {
    expect(codecOf(messages, target(anthropicConn))).toBeNull();
    expect(codecOf(messages, target(compat))?.upstream).toBe('openai-chat');
    const responses = call('openai-responses', { model: 'm', input: 'hi' });
    expect(codecOf(responses, target({ ...compat, servesResponses: true }))).toBeNull();
    expect(codecOf(responses, target(compat))?.upstream).toBe('openai-chat');
    expect(codecOf(responses, target(anthropicConn))?.upstream).toBe('anthropic-messages');
    // A shape set on the target (by resolution) wins over the connection's default.
    expect(codecOf(responses, { ...target({ ...compat, servesResponses: true }), upstream: 'openai-chat' })?.upstream).toBe('openai-chat');
  });

  it('keeps native bodies byte for byte and sends translated ones to the target endpoint', () => {
    const native = upstreamRequestOf(messages, { ...target(anthropicConn), model: 'claude-x' });
    expect(native).toMatchObject({ endpoint: 'messages', translated: false });
    expect(native.body).toBe(messages.body);
    const tr = upstreamRequestOf(messages, target(compat, 'deepseek-chat'));
    expect(tr).toMatchObject({ endpoint: 'chat', translated: true });
    expect(JSON.parse(tr.body.toString())).toMatchObject({ model: 'deepseek-chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    // Same call, same target shape and model: the translation is reused, not redone.
    expect(upstreamRequestOf(messages, target(compat, 'deepseek-chat')).body).toBe(tr.body);
  });

  it('refuses a target that cannot express the request, naming the field', () => {
    const withServerTool = call('anthropic-messages', { model: 'x', max_tokens: 5, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'hi' }] });
    expect(refusalFor(withServerTool, target(anthropicConn))).toBeNull();
    const r = refusalFor(withServerTool, target(compat));
    expect(r).toMatchObject({ kind: 'untranslatable', skip: { reason: 'untranslatable', until: null } });
    expect(r?.kind === 'untranslatable' && r.error.field).toBe('tools');
  });

  it('estimates count_tokens on a target of the other protocol instead of calling it', () => {
    const count = call('anthropic-count-tokens', { model: 'x', messages: [] });
    expect(refusalFor(count, target(anthropicConn))).toBeNull();
    expect(refusalFor(count, target(compat))).toEqual({ kind: 'estimate' });
  });

  it('picks max_completion_tokens for OpenAI itself and reasoning models, max_tokens elsewhere, unless pinned', () => {
    expect(chatMaxTokensField(target({ kind: 'openai', protocol: 'openai' }, 'gpt-4.1'))).toBe('max_completion_tokens');
    expect(chatMaxTokensField(target(compat, 'openai/o3-mini'))).toBe('max_completion_tokens');
    expect(chatMaxTokensField(target(compat, 'gpt-5-codex'))).toBe('max_completion_tokens');
    expect(chatMaxTokensField(target(compat, 'deepseek-chat'))).toBe('max_tokens');
    expect(chatMaxTokensField(target({ ...compat, providerSpecificData: { chatMaxTokensField: 'max_completion_tokens' } }, 'qwen'))).toBe('max_completion_tokens');
    expect(chatMaxTokensField(target({ kind: 'openai', protocol: 'openai', providerSpecificData: { chatMaxTokensField: 'max_tokens' } }, 'o3'))).toBe('max_tokens');
  });
});

describe('connections migration', () => {
  it('gives existing connections their kind default for servesResponses', () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-mig-'));
    try {
      const db = openStore({ path: join(dir, 'db.sqlite'), now: () => 0, migrations: migrations.filter((m) => m.version < 4) });
      const insert = db.prepare(
        `INSERT INTO provider_connections (id, name, kind, provider, auth_class, base_url, priority, enabled, models, passthrough_models,
           rate_limit_overrides, rate_limit_protection, disable_cooling, provider_specific_data, timeouts, test_status, backoff_level,
           expired_retries, created_at, updated_at)
         VALUES (?, ?, ?, 'p', 'apikey', 'http://x', 1, 1, '[]', 1, '{}', 0, 0, '{}', '{}', 'untested', 0, 0, 0, 0)`,
      );
      for (const kind of ['openai', 'openai-compatible', 'local', 'anthropic']) insert.run(kind, kind, kind);
      migrate(db, migrations, () => 0);
      const rows = db.prepare('SELECT kind, serves_responses FROM provider_connections ORDER BY kind').all();
      expect(rows).toEqual([
        { kind: 'anthropic', serves_responses: 0 },
        { kind: 'local', serves_responses: 0 },
        { kind: 'openai', serves_responses: 1 },
        { kind: 'openai-compatible', serves_responses: 0 },
      ]);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
