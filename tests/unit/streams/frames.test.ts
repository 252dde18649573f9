import { describe, expect, it } from 'vitest';
import { FrameReader, type Frame } from '../../../src/main/engine/streams/frames';
import type { ApiShape } from '../../../src/main/engine/streams/shape';

const ev = (event: string | null, data: unknown) =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

function framesOf(shape: ApiShape, text: string): Frame[] {
  const r = new FrameReader(shape);
  return [...r.push(Buffer.from(text)).frames, ...r.end().frames];
}

function one(shape: ApiShape, event: string | null, data: unknown): Frame {
  const fs = framesOf(shape, ev(event, data));
  expect(fs).toHaveLength(1);
  return fs[0]!;
}

describe('Anthropic frames', () => {
  const a = (type: string, rest: Record<string, unknown> = {}) => one('anthropic-messages', type, { type, ...rest });

  it('message_start is metadata and carries the input tokens (cache included)', () => {
    const f = a('message_start', {
      message: { id: 'msg_1', usage: { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 1 } },
    });
    expect(f.kind).toBe('meta');
    expect(f.output).toBe(false);
    expect(f.usage).toEqual({ inputTokens: 17, outputTokens: 1, cacheReadTokens: 5, cacheWriteTokens: 2 });
  });

  it('an empty text block start is metadata; a text delta is output with its length', () => {
    expect(a('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }).kind).toBe('meta');
    const d = a('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'héllo' } });
    expect(d.kind).toBe('output');
    expect(d.textChars).toBe(5);
    expect(a('content_block_delta', { index: 0, delta: { type: 'text_delta', text: '' } }).kind).toBe('meta');
  });

  it('a tool_use start is output (tool start); input_json_delta is tool-argument output', () => {
    const s = a('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get', input: {} } });
    expect(s.kind).toBe('output');
    expect(s.toolStart).toBe(true);
    const d = a('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } });
    expect(d.toolArgChars).toBe(5);
    expect(d.output).toBe(true);
    expect(a('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '' } }).kind).toBe('meta');
  });

  it('thinking deltas are reasoning progress even when empty; signatures only when non-empty', () => {
    expect(a('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }).kind).toBe('reasoning');
    const empty = a('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: '' } });
    expect(empty.kind).toBe('reasoning');
    expect(empty.reasoning).toBe(true);
    expect(empty.output).toBe(false);
    expect(a('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } }).reasoning).toBe(true);
    expect(a('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: '' } }).kind).toBe('meta');
  });

  it('message_delta carries the stop reason and output tokens; message_stop is terminal; ping is metadata', () => {
    const d = a('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 42 } });
    expect(d.kind).toBe('meta');
    expect(d.stopReason).toBe('tool_use');
    expect(d.usage).toEqual({ inputTokens: null, outputTokens: 42 });
    expect(a('content_block_stop', { index: 0 }).kind).toBe('meta');
    const stop = a('message_stop');
    expect(stop.terminal).toBe(true);
    expect(stop.kind).toBe('terminal');
    expect(a('ping').kind).toBe('meta');
  });

  it.each([
    ['overloaded_error', 529],
    ['rate_limit_error', 429],
    ['authentication_error', 401],
    ['permission_error', 403],
    ['api_error', 500],
    ['billing_error', 402],
  ])('an error event of type %s maps to %i', (type, status) => {
    const f = a('error', { error: { type, message: 'nope' } });
    expect(f.kind).toBe('error');
    expect(f.error).toEqual({ status, type, code: null, message: 'nope' });
  });

  it('an unknown event type is metadata, not an error', () => {
    expect(a('content_block_delta', { index: 0, delta: { type: 'citations_delta', citation: {} } }).kind).toBe('meta');
    expect(a('brand_new_event').kind).toBe('meta');
  });
});

describe('Chat frames', () => {
  const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    one('openai-chat', null, { id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }], ...extra });

  it('a role-only or empty delta is metadata', () => {
    expect(chunk({ role: 'assistant', content: '' }).kind).toBe('meta');
    expect(chunk({}).kind).toBe('meta');
    expect(chunk({ content: null }).kind).toBe('meta');
  });

  it('content and refusal are output with their lengths', () => {
    expect(chunk({ content: 'abc' })).toMatchObject({ kind: 'output', textChars: 3 });
    expect(chunk({ refusal: 'no' })).toMatchObject({ kind: 'output', textChars: 2 });
  });

  it('a tool call with id and name starts a call; arguments-only deltas are argument output', () => {
    const s = chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get', arguments: '' } }] });
    expect(s).toMatchObject({ kind: 'output', toolStart: true, toolArgChars: 0 });
    const d = chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":1}' } }] });
    expect(d).toMatchObject({ kind: 'output', toolStart: false, toolArgChars: 7 });
  });

  it('reasoning_content and reasoning deltas are reasoning progress, an empty string included (R-CC-33)', () => {
    expect(chunk({ reasoning_content: 'hmm' }).kind).toBe('reasoning');
    expect(chunk({ reasoning_content: '' }).kind).toBe('reasoning');
    expect(chunk({ reasoning: 'x' }).kind).toBe('reasoning');
    expect(chunk({ reasoning_content: null }).kind).toBe('meta');
  });

  it('a finish_reason is terminal with its reason; [DONE] is terminal', () => {
    const f = one('openai-chat', null, { id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'length' }] });
    expect(f).toMatchObject({ kind: 'terminal', terminal: true, stopReason: 'length' });
    const withText = one('openai-chat', null, { id: 'c1', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'stop' }] });
    expect(withText).toMatchObject({ kind: 'output', terminal: true, output: true });
    const done = one('openai-chat', null, '[DONE]');
    expect(done).toMatchObject({ type: '[DONE]', terminal: true, json: null });
  });

  it('a usage-only chunk is metadata with the usage', () => {
    const f = one('openai-chat', null, { id: 'c1', choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } });
    expect(f.kind).toBe('meta');
    expect(f.usage).toEqual({ inputTokens: 9, outputTokens: 4 });
  });

  it('an error chunk is an in-band error with a mapped status (numeric gateway codes win)', () => {
    expect(one('openai-chat', null, { error: { message: 'slow down', type: 'rate_limit_exceeded' } }).error).toMatchObject({
      status: 429,
      message: 'slow down',
    });
    expect(one('openai-chat', null, { error: { code: 502, message: 'Provider returned error' } }).error?.status).toBe(502);
    expect(one('openai-chat', null, { error: { message: 'Overloaded', type: 'overloaded_error' } }).error?.status).toBe(529);
    expect(one('openai-chat', null, { error: { message: 'bad key', code: 'invalid_api_key' } }).error?.status).toBe(401);
  });
});

describe('Responses frames', () => {
  const r = (type: string, rest: Record<string, unknown> = {}) => one('openai-responses', type, { type, sequence_number: 1, ...rest });

  it('lifecycle and message scaffolding are metadata', () => {
    expect(r('response.created', { response: { id: 'resp_1', status: 'in_progress' } }).kind).toBe('meta');
    expect(r('response.in_progress', { response: {} }).kind).toBe('meta');
    expect(r('response.output_item.added', { output_index: 0, item: { type: 'message', content: [] } }).kind).toBe('meta');
    expect(r('response.content_part.added', { part: { type: 'output_text', text: '' } }).kind).toBe('meta');
    expect(r('response.output_text.done', { text: 'abc' }).kind).toBe('meta');
  });

  it('text deltas are output; an empty delta is not', () => {
    expect(r('response.output_text.delta', { delta: 'hey' })).toMatchObject({ kind: 'output', textChars: 3 });
    expect(r('response.output_text.delta', { delta: '' }).kind).toBe('meta');
  });

  it('a function_call item starts a tool call; argument deltas are output', () => {
    expect(r('response.output_item.added', { item: { type: 'function_call', call_id: 'c', name: 'n', arguments: '' } })).toMatchObject({
      kind: 'output',
      toolStart: true,
    });
    expect(r('response.function_call_arguments.delta', { delta: '{"a"' })).toMatchObject({ kind: 'output', toolArgChars: 4 });
  });

  it('reasoning items and summary / reasoning text deltas are reasoning progress', () => {
    expect(r('response.output_item.added', { item: { type: 'reasoning', summary: [] } }).kind).toBe('reasoning');
    expect(r('response.output_item.done', { item: { type: 'reasoning', summary: [] } }).kind).toBe('reasoning');
    expect(r('response.reasoning_summary_part.added', { part: { type: 'summary_text', text: '' } }).kind).toBe('reasoning');
    expect(r('response.reasoning_summary_text.delta', { delta: '' }).kind).toBe('reasoning');
    expect(r('response.reasoning_text.delta', { delta: 'x' }).kind).toBe('reasoning');
  });

  it('completed and incomplete are terminal; failed is terminal and an error; error is an error', () => {
    const done = r('response.completed', { response: { status: 'completed', usage: { input_tokens: 3, output_tokens: 2 } } });
    expect(done).toMatchObject({ kind: 'terminal', terminal: true, stopReason: 'completed', usage: { inputTokens: 3, outputTokens: 2 } });
    expect(r('response.incomplete', { response: { incomplete_details: { reason: 'max_output_tokens' } } })).toMatchObject({
      terminal: true,
      stopReason: 'max_output_tokens',
    });
    const failed = r('response.failed', { response: { error: { code: 'rate_limit_exceeded', message: 'slow' } } });
    expect(failed).toMatchObject({ kind: 'error', terminal: true });
    expect(failed.error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', message: 'slow' });
    expect(r('error', { code: 'server_is_overloaded', message: 'busy', param: null }).error?.status).toBe(529);
  });
});

describe('FrameReader', () => {
  it('decodes a UTF-8 character split across chunks without corrupting it (one byte at a time)', () => {
    const text = 'héllo 🎉 世界';
    const bytes = Buffer.from(ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }));
    const reader = new FrameReader('anthropic-messages');
    const frames: Frame[] = [];
    for (let i = 0; i < bytes.length; i++) frames.push(...reader.push(bytes.subarray(i, i + 1)).frames);
    frames.push(...reader.end().frames);
    expect(frames).toHaveLength(1);
    expect(frames[0]!.json.delta.text).toBe(text);
    expect(frames[0]!.textChars).toBe(text.length);
  });

  it('yields a frame split across chunks once, when its blank line arrives', () => {
    const reader = new FrameReader('openai-chat');
    const whole = ev(null, { id: 'c', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] });
    const cut = 17;
    const first = reader.push(whole.slice(0, cut));
    expect(first.frames).toHaveLength(0);
    expect(first.output).toBe(false);
    const second = reader.push(whole.slice(cut));
    expect(second.frames).toHaveLength(1);
    expect(second.output).toBe(true);
    expect(second.frames[0]!.data).toBe(whole.slice(6, -2));
  });

  it('returns several frames from one chunk, with per-chunk flags', () => {
    const reader = new FrameReader('anthropic-messages');
    const res = reader.push(
      ev('ping', { type: 'ping' }) +
        ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: '' } }),
    );
    expect(res.frames.map((f) => f.kind)).toEqual(['meta', 'reasoning']);
    expect(res.output).toBe(false);
    expect(res.progress).toBe(true);
    expect(reader.sawOutput).toBe(false);
    expect(reader.sawReasoning).toBe(true);
  });

  it('heartbeat comments become comment frames that are never progress', () => {
    const reader = new FrameReader('openai-chat');
    const res = reader.push(': keep-alive\n\n:\n\n');
    expect(res.frames.map((f) => [f.kind, f.comment])).toEqual([
      ['comment', 'keep-alive'],
      ['comment', ''],
    ]);
    expect(res.progress).toBe(false);
    expect(reader.frameCount).toBe(2);
  });

  it('reads CRLF and CR line endings, including a CRLF split between chunks', () => {
    const crlf = 'event: message_stop\r\ndata: {"type":"message_stop"}\r\n\r\n';
    const reader = new FrameReader('anthropic-messages');
    const a = reader.push(crlf.slice(0, crlf.indexOf('\n') ));
    const b = reader.push(crlf.slice(crlf.indexOf('\n')));
    expect([...a.frames, ...b.frames].map((f) => [f.event, f.type, f.terminal])).toEqual([['message_stop', 'message_stop', true]]);
    const cr = framesOf('openai-chat', 'data: [DONE]\r\r');
    expect(cr.map((f) => f.type)).toEqual(['[DONE]']);
  });

  it('joins multi-line data', () => {
    const fs = framesOf('openai-chat', 'data: {"id":"c",\ndata: "choices":[{"index":0,"delta":{"content":"x"}}]}\n\n');
    expect(fs).toHaveLength(1);
    expect(fs[0]!.textChars).toBe(1);
  });

  it('turns bad JSON into a malformed frame instead of throwing, and keeps reading', () => {
    const reader = new FrameReader('openai-chat');
    const res = reader.push('data: {"id":"c", oops\n\n' + ev(null, { id: 'c', choices: [{ index: 0, delta: { content: 'ok' } }] }));
    expect(res.frames.map((f) => f.kind)).toEqual(['malformed', 'output']);
    expect(res.frames[0]!.json).toBeNull();
    expect(res.frames[0]!.data).toBe('{"id":"c", oops');
    expect(framesOf('openai-chat', 'data: 42\n\n')[0]!.kind).toBe('malformed');
  });

  it('an error event whose data is not JSON is still an error', () => {
    const f = framesOf('anthropic-messages', 'event: error\ndata: upstream exploded\n\n')[0]!;
    expect(f.kind).toBe('error');
    expect(f.error?.message).toBe('upstream exploded');
  });

  it('end() flushes a last event that lacked its blank line; a cut one is malformed, and the stream is not terminated', () => {
    const ok = new FrameReader('openai-chat');
    ok.push('data: [DONE]');
    expect(ok.end().frames.map((f) => f.type)).toEqual(['[DONE]']);
    expect(ok.sawTerminal).toBe(true);

    const cut = new FrameReader('openai-chat');
    cut.push(ev(null, { id: 'c', choices: [{ index: 0, delta: { content: 'partial' } }] }));
    cut.push('data: {"id":"c","choices":[{"index":0,"del');
    const last = cut.end();
    expect(last.frames.map((f) => f.kind)).toEqual(['malformed']);
    expect(cut.sawOutput).toBe(true);
    expect(cut.sawTerminal).toBe(false);
    expect(cut.push('data: [DONE]\n\n').frames).toHaveLength(0);
  });

  it('tracks the latest usage, the first error and the output frame count', () => {
    const reader = new FrameReader('anthropic-messages');
    reader.push(
      ev('message_start', { type: 'message_start', message: { usage: { input_tokens: 7, output_tokens: 1 } } }) +
        ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a' } }) +
        ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }) +
        ev('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    expect(reader.usage).toEqual({ inputTokens: 7, outputTokens: 5 });
    expect(reader.error?.status).toBe(529);
    expect(reader.outputFrameCount).toBe(1);
  });

  it('ignores a UTF-8 byte-order mark at the start', () => {
    const fs = framesOf('openai-chat', '\uFEFFdata: [DONE]\n\n');
    expect(fs.map((f) => f.type)).toEqual(['[DONE]']);
  });
});

describe('frameToSse', () => {
  it('re-emits frames (events, multi-line data, comments) so that reading them again gives the same frames', async () => {
    const { frameToSse } = await import('../../../src/main/engine/streams/frames');
    const text =
      'event: content_block_delta\r\ndata: {"type":"content_block_delta","index":0,\r\ndata: "delta":{"type":"text_delta","text":"hi"}}\r\n\r\n: keep-alive\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
    const first = framesOf('anthropic-messages', text);
    const again = framesOf('anthropic-messages', first.map(frameToSse).join(''));
    expect(again).toEqual(first);
    expect(first.map((f) => f.kind)).toEqual(['output', 'comment', 'terminal']);
  });
});
