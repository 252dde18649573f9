// An empty non-stream answer (a 200 completion with no text and no tool call) is a failure that
// fails over, like an empty stream (SPEC §2.5), in each API shape, with the real SDK clients:
// Anthropic Messages, OpenAI Chat and OpenAI Responses, natively and translated. An answer that is
// only a tool call is an answer; one whose emptiness its own token limit caused is passed on; a
// reasoning-only one is empty, and so is a 200 with no body. With nobody left, the client gets an error, never the empty answer.
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { anthropicMessage, openaiCompletion, openaiToolCompletion, responsesResult } from '../../support/fakeUpstream';
import { CHAT_MODEL, MODEL, SELECTED, streamRigPerTest } from './support';

const KA = 'sk-ant-empty-a-aaaaaaaaaaaa';
const KB = 'sk-ant-empty-b-bbbbbbbbbbbb';
const OA = 'sk-openai-empty-a-aaaaaaaaaa';
const OB = 'sk-openai-empty-b-bbbbbbbbbb';

const emptyMessage = (over: Record<string, unknown> = {}) => ({ ...anthropicMessage(MODEL), content: [], usage: { input_tokens: 12, output_tokens: 0 }, ...over });
const emptyChat = (over: Record<string, unknown> = {}) => {
  const c = openaiCompletion(CHAT_MODEL);
  return { ...c, choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop', ...over }] };
};
const emptyResponse = () => ({ ...responsesResult(CHAT_MODEL), output: [] });

describe('an empty non-stream answer fails over', () => {
  const s = streamRigPerTest();

  async function anthropicPair() {
    const r = await s.start();
    const a = (await r.addAnthropic('Key A', KA, { priority: 1 })).id;
    const b = (await r.addAnthropic('Key B', KB, { priority: 2 })).id;
    s.fake.script({ key: KB }, [{ json: anthropicMessage(MODEL, 'Served by B.') }]);
    return { r, a, b };
  }

  async function openaiPair() {
    const r = await s.start();
    const a = (await r.addOpenAI('Key A', OA, { priority: 1 })).id;
    const b = (await r.addOpenAI('Key B', OB, { priority: 2 })).id;
    s.fake.script({ key: OB }, [{ json: openaiCompletion(CHAT_MODEL, 'Served by B.') }]);
    return { r, a, b };
  }

  it('Anthropic Messages: an end_turn with no content goes on to the next key', async () => {
    const { r, a, b } = await anthropicPair();
    s.fake.script({ key: KA }, [{ json: emptyMessage() }]);
    const { data, response } = await r.anthropic.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Served by B.' }]);
    expect(response.headers.get(SELECTED)).toBe(b);
    const log = await r.logOf(MODEL);
    expect(log).toMatchObject({ status: 200, connectionId: b, errorCode: null });
    expect(log.attempts[0]).toMatchObject({ connectionId: a, status: 200, errorClass: 'empty_response', failedOver: true });
    expect(log.attempts[0]!.errorMessage).toMatch(/empty completion/);
  });

  it('OpenAI Chat: a stop with empty content goes on to the next key', async () => {
    const { r, a, b } = await openaiPair();
    s.fake.script({ key: OA }, [{ json: emptyChat() }]);
    const { data, response } = await r.openai.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe('Served by B.');
    expect(response.headers.get(SELECTED)).toBe(b);
    const log = await r.logOf(CHAT_MODEL);
    expect(log.attempts.map((x) => [x.connectionId, x.errorClass])).toEqual([
      [a, 'empty_response'],
      [b, null],
    ]);
  });

  it('OpenAI Chat: null content and no tool call (the other way to say nothing) fails over too', async () => {
    const { r, b } = await openaiPair();
    s.fake.script({ key: OA }, [{ json: emptyChat({ message: { role: 'assistant', content: null } }) }]);
    const { response } = await r.openai.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(response.headers.get(SELECTED)).toBe(b);
  });

  it('OpenAI Responses: a completed response with no output goes on to the next key', async () => {
    const { r, a, b } = await openaiPair();
    s.fake.script({ key: OA }, [{ json: emptyResponse() }]);
    s.fake.script({ key: OB }, [{ json: responsesResult(CHAT_MODEL, 'Served by B.') }]);
    const { data, response } = await r.openai.responses.create({ model: CHAT_MODEL, input: 'hi' }).withResponse();
    expect(data.output_text).toBe('Served by B.');
    expect(response.headers.get(SELECTED)).toBe(b);
    const log = await r.logOf(CHAT_MODEL);
    expect(log.attempts[0]).toMatchObject({ connectionId: a, errorClass: 'empty_response' });
  });

  it('translated (an OpenAI Chat client on Anthropic keys): the empty Anthropic answer fails over', async () => {
    const { r, a, b } = await anthropicPair();
    s.fake.script({ key: KA }, [{ json: emptyMessage() }]);
    const { data, response } = await r.openai.chat.completions.create({ model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe('Served by B.');
    expect(response.headers.get(SELECTED)).toBe(b);
    const log = await r.logOf(`anthropic/${MODEL}`);
    expect(log.attempts[0]).toMatchObject({ connectionId: a, errorClass: 'empty_response', translated: 'openai-chat→anthropic-messages' });
  });

  it('a 200 with no body at all is empty too: it fails over', async () => {
    const { r, a, b } = await anthropicPair();
    s.fake.script({ key: KA }, [{ status: 200, body: '' }]);
    const { data, response } = await r.anthropic.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Served by B.' }]);
    expect(response.headers.get(SELECTED)).toBe(b);
    expect((await r.logOf(MODEL)).attempts[0]).toMatchObject({ connectionId: a, status: 200, errorClass: 'empty_response' });
  });

  it('a reasoning-only answer is empty: it fails over', async () => {
    const { r, b } = await anthropicPair();
    s.fake.script({ key: KA }, [{ json: emptyMessage({ content: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig' }] }) }]);
    const { response } = await r.anthropic.messages.create({ model: MODEL, max_tokens: 2000, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(response.headers.get(SELECTED)).toBe(b);
  });

  it('an answer that is only a tool call is an answer: served, no failover', async () => {
    const { r, a } = await openaiPair();
    s.fake.script({ key: OA }, [{ json: openaiToolCompletion(CHAT_MODEL, [{ id: 'call_1', name: 'read_file', arguments: { path: 'a.ts' } }]) }]);
    const { data, response } = await r.openai.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]!.message.tool_calls?.[0]).toMatchObject({ id: 'call_1' });
    expect(response.headers.get(SELECTED)).toBe(a);
    expect(s.fake.requestsFor({ key: OB })).toHaveLength(0);
  });

  it('an empty answer its own token limit caused (max_tokens, length) is passed on as it is', async () => {
    const { r, a } = await anthropicPair();
    s.fake.script({ key: KA }, [{ json: emptyMessage({ stop_reason: 'max_tokens' }) }]);
    const { data, response } = await r.anthropic.messages.create({ model: MODEL, max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data).toMatchObject({ content: [], stop_reason: 'max_tokens' });
    expect(response.headers.get(SELECTED)).toBe(a);
    expect(s.fake.requestsFor({ key: KB })).toHaveLength(0);
  });

  it('with no other key, the client gets an error saying the answer was empty, never the empty 200', async () => {
    const r = await s.start();
    await r.addAnthropic('Key A', KA);
    s.fake.script({ key: KA }, [{ json: emptyMessage() }]);
    const err = await r.anthropic.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect(String((err as Error).message)).toMatch(/empty completion/);
  });

  it('a long answer read ahead in many pieces reaches the client byte for byte', async () => {
    const { r, a } = await openaiPair();
    const text = 'x'.repeat(150_000);
    const body = JSON.stringify(openaiCompletion(CHAT_MODEL, text));
    const pieces = Array.from({ length: Math.ceil(body.length / 10_000) }, (_, i) => ({ data: body.slice(i * 10_000, (i + 1) * 10_000) }));
    s.fake.script({ key: OA }, [{ headers: { 'content-type': 'application/json' }, chunks: pieces }]);
    const { data, response } = await r.openai.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.choices[0]!.message.content).toBe(text);
    expect(response.headers.get(SELECTED)).toBe(a);
    // A short one in pieces too.
    const small = JSON.stringify(openaiCompletion(CHAT_MODEL, 'In three pieces.'));
    s.fake.script({ key: OA }, [{ headers: { 'content-type': 'application/json' }, chunks: [{ data: small.slice(0, 20) }, { data: small.slice(20, 60) }, { data: small.slice(60) }] }]);
    const again = await r.openai.chat.completions.create({ model: CHAT_MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(again.choices[0]!.message.content).toBe('In three pieces.');
  });
});
