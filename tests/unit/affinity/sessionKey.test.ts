// Where a request's session id comes from: the documented header precedence, Claude Code's
// metadata.user_id as the last resort, and values that are ignored.
import { describe, expect, it } from 'vitest';
import { geminiConversation, sessionFromUserId, sessionKeyOf } from '../../../src/main/engine/routing/affinity/sessionKey';

const UUID = '3f8a2c1e-7b4d-4e2a-9c61-0d5e8f7a1b23';

describe('sessionKeyOf', () => {
  it('reads each header on its own', () => {
    for (const h of ['x-switchyard-session', 'x-omniroute-session', 'x-session-id', 'x-codex-session-id', 'x-claude-code-session-id', 'session-id', 'session_id', 'thread-id', 'x-opencode-session']) {
      expect(sessionKeyOf({ [h]: 'abc' }, {})).toEqual({ id: 'abc', source: h });
    }
  });

  it('takes the explicit Switchyard header over the generic ones, and those over what agents send on their own', () => {
    const all = {
      'x-opencode-session': 'opencode',
      'thread-id': 'codex-thread',
      session_id: 'codex-cli-old',
      'session-id': 'codex-cli',
      'x-claude-code-session-id': 'claude-code',
      'x-codex-session-id': 'codex',
      'x-session-id': 'generic',
      'x-omniroute-session': 'omni',
      'x-switchyard-session': 'mine',
    };
    const order = ['x-switchyard-session', 'x-omniroute-session', 'x-session-id', 'x-codex-session-id', 'x-claude-code-session-id', 'session-id', 'session_id', 'thread-id', 'x-opencode-session'];
    const headers: Record<string, string> = { ...all };
    for (const h of order) {
      expect(sessionKeyOf(headers, { metadata: { user_id: `user_x_account_y_session_${UUID}` } })?.source).toBe(h);
      delete headers[h];
    }
    expect(sessionKeyOf(headers, { metadata: { user_id: `user_x_account_y_session_${UUID}` } })).toEqual({ id: UUID, source: 'metadata.user_id' });
  });

  it('skips empty, over-long and unprintable values and reads the next source', () => {
    expect(sessionKeyOf({ 'x-switchyard-session': '  ', 'x-session-id': 'next' }, {})?.id).toBe('next');
    expect(sessionKeyOf({ 'x-switchyard-session': 'x'.repeat(201), 'x-session-id': 'next' }, {})?.id).toBe('next');
    expect(sessionKeyOf({ 'x-switchyard-session': 'tab\there', 'x-session-id': 'next' }, {})?.id).toBe('next');
    expect(sessionKeyOf({ 'x-switchyard-session': ` ${'y'.repeat(200)} ` }, {})?.id).toBe('y'.repeat(200));
    expect(sessionKeyOf({}, {})).toBeNull();
    expect(sessionKeyOf({}, { metadata: 'not an object' })).toBeNull();
  });

  it('takes only the session part of Claude Code metadata.user_id, in both of its formats', () => {
    expect(sessionFromUserId(`user_${'ab'.repeat(32)}_account_1b2c3d4e-0000-4000-8000-000000000000_session_${UUID}`)).toBe(UUID);
    expect(sessionFromUserId(JSON.stringify({ device_id: 'dev', account_uuid: 'acc', session_id: UUID }))).toBe(UUID);
    expect(sessionFromUserId('user_only')).toBeNull();
    expect(sessionFromUserId('{not json')).toBeNull();
    expect(sessionFromUserId(42)).toBeNull();
  });

  it('reads the body when no header names the session: Claude Code metadata, then Codex client_metadata, the prompt cache key, Qwen Code metadata', () => {
    const body: Record<string, unknown> = {
      metadata: { user_id: `user_x_account_y_session_${UUID}`, sessionId: 'qwen-session' },
      client_metadata: { session_id: 'codex-meta' },
      prompt_cache_key: 'cache-key',
    };
    expect(sessionKeyOf({}, body)).toEqual({ id: UUID, source: 'metadata.user_id' });
    body.metadata = { sessionId: 'qwen-session' };
    expect(sessionKeyOf({}, body)).toEqual({ id: 'codex-meta', source: 'client_metadata.session_id' });
    delete body.client_metadata;
    expect(sessionKeyOf({}, body)).toEqual({ id: 'cache-key', source: 'prompt_cache_key' });
    delete body.prompt_cache_key;
    expect(sessionKeyOf({}, body)).toEqual({ id: 'qwen-session', source: 'metadata.sessionId' });
    // Any header wins over the body; a body value that is not a usable string is skipped.
    expect(sessionKeyOf({ 'thread-id': 't' }, { prompt_cache_key: 'k' })?.source).toBe('thread-id');
    expect(sessionKeyOf({}, { client_metadata: { session_id: 42 }, prompt_cache_key: ' ', metadata: { sessionId: 'ok' } })?.source).toBe('metadata.sessionId');
  });

  it('names a Gemini conversation by its opening: the same for every later turn, different for another conversation, never over a header', () => {
    const system = { parts: [{ text: 'You are an interactive CLI agent.' }] };
    const opening = { role: 'user', parts: [{ text: 'This is the Gemini CLI. Today is Friday. I am working in /home/dev/project.' }] };
    const turn1 = { systemInstruction: system, contents: [opening] };
    const turn3 = {
      systemInstruction: system,
      contents: [opening, { role: 'model', parts: [{ functionCall: { name: 'ls', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { name: 'ls', response: { output: 'a' } } }] }],
    };
    const first = sessionKeyOf({}, turn1);
    expect(first?.source).toBe('gemini.conversation');
    expect(first?.id).toMatch(/^gem-[0-9a-f]{32}$/);
    expect(sessionKeyOf({}, turn3)).toEqual(first);
    expect(geminiConversation({ systemInstruction: system, contents: [{ role: 'user', parts: [{ text: 'I am working in /home/dev/other.' }] }] })).not.toBe(first?.id);
    expect(geminiConversation({ contents: [opening] })).not.toBe(first?.id);
    expect(sessionKeyOf({ 'x-session-id': 'explicit' }, turn1)).toEqual({ id: 'explicit', source: 'x-session-id' });
    expect(geminiConversation({ contents: [] })).toBeNull();
    expect(geminiConversation({ messages: [{ role: 'user', content: 'hi' }] })).toBeNull();
  });
});
