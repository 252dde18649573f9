// Translation when things go wrong: a failover that crosses protocols before the first byte is
// invisible to the client; an error inside a translated 2xx fails over; a translated stream that
// ends without its stop event is a failure (connection, request log) and ends the client's stream
// with an error event; a request a target cannot express is skipped there and answered 400 naming
// the field when nothing else can take it; upstream errors reach the client in its own protocol's
// shape; count_tokens on a non-Anthropic target is estimated; OpenAI reasoning models get
// max_completion_tokens.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionCreateInput } from '../../../src/shared/contract';
import type { ConnectionView, RequestLogEntry } from '../../../src/shared/model';
import { anthropicStream, FakeUpstream, openaiStream, sse } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

const question: Anthropic.MessageParam = { role: 'user', content: 'hi' };
/** An Anthropic server tool: runs only on Anthropic, so a Chat target cannot take a request whose only tool it is. */
const webSearch: Anthropic.WebSearchTool20250305 = { type: 'web_search_20250305', name: 'web_search' };

describe('translation failures and errors', () => {
  const fake = new FakeUpstream();
  let t: TestEngine | null = null;
  beforeAll(() => fake.listen());
  afterEach(async () => {
    await t?.stop();
    t = null;
    fake.reset();
  });
  afterAll(() => fake.close());

  async function engine(...conns: ConnectionCreateInput[]) {
    t = await startTestEngine();
    const views: ConnectionView[] = [];
    for (const c of conns) views.push(await t.addConnection(c));
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    const log = async (model: string): Promise<RequestLogEntry> => {
      const e = (await t!.api.listLogs({ limit: 20 })).entries.find((x) => x.requestedModel === model);
      if (!e) throw new Error(`no log entry for ${model}`);
      return e;
    };
    return { views, anthropic, openai, log, t };
  }

  const claude = (o: Partial<ConnectionCreateInput> = {}): ConnectionCreateInput => ({ name: 'Claude', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-primary-1', ...o });
  const backup = (o: Partial<ConnectionCreateInput> = {}): ConnectionCreateInput => ({
    name: 'Backup',
    kind: 'openai-compatible',
    provider: 'backup',
    baseUrl: fake.openaiUrl,
    secret: 'sk-backup-key-1',
    models: ['claude-sonnet-4-6'],
    priority: 2,
    ...o,
  });

  it('fails over from an Anthropic target that breaks before the first byte to an OpenAI-compatible one, invisibly', async () => {
    const { views, anthropic, log } = await engine(claude(), backup());
    fake.script({ key: 'sk-ant-primary-1' }, [{ status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }]);
    fake.script({ key: 'sk-backup-key-1' }, [{ chunks: openaiStream('claude-sonnet-4-6', ['Served ', 'by the backup.']) }]);
    const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [question] });
    const text: string[] = [];
    stream.on('text', (x) => text.push(x));
    const { response } = await stream.withResponse();
    const final = await stream.finalMessage();
    expect(text.join('')).toBe('Served by the backup.');
    expect(final.stop_reason).toBe('end_turn');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-switchyard-selected-connection-id')).toBe(views[1]!.id);
    const e = await log('claude-sonnet-4-6');
    expect(e.attempts.map((a) => [a.connectionName, a.status, a.failedOver, a.translated ?? null])).toEqual([
      ['Claude', 529, true, null],
      ['Backup', 200, false, 'anthropic-messages→openai-chat'],
    ]);
  });

  it('fails over when the Anthropic stream opens with an error event, and when the translated stream does', async () => {
    const { anthropic, log } = await engine(claude(), backup({ priority: 1, name: 'Backup first' }), backup({ name: 'Backup second', secret: 'sk-backup-key-2' }));
    // Backup first: a Chat stream that opens with an in-band error; Claude: an Anthropic stream that opens with one.
    fake.script({ key: 'sk-backup-key-1' }, [{ chunks: [sse(null, { error: { message: 'upstream overloaded', type: 'overloaded_error', code: 529 } })] }]);
    fake.script({ key: 'sk-ant-primary-1' }, [{ chunks: [sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })] }]);
    fake.script({ key: 'sk-backup-key-2' }, [{ chunks: openaiStream('claude-sonnet-4-6', ['third time lucky']) }]);
    const final = await anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [question] }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'third time lucky' });
    const e = await log('claude-sonnet-4-6');
    expect(e.attempts.map((a) => [a.connectionName, a.status, a.failedOver])).toEqual([
      ['Claude', 529, true],
      ['Backup first', 529, true],
      ['Backup second', 200, false],
    ]);
  });

  it('fails over when a translated non-stream answer is an error wearing a 200', async () => {
    const { anthropic } = await engine(backup({ priority: 1 }), claude({ priority: 2 }));
    fake.script({ key: 'sk-backup-key-1' }, [{ json: { error: { message: 'Rate limit reached', type: 'rate_limit_exceeded' } } }]);
    const msg = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: [question] });
    expect(msg.content[0]).toMatchObject({ text: 'Hello from the fake upstream.' });
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/messages']);
  });

  it('treats a translated stream that ends without its stop event as a failure, never a clean end', async () => {
    const { views, anthropic, log, t } = await engine(backup({ priority: 1 }));
    // Text arrives, then the body ends: no finish_reason, no [DONE].
    fake.script({ key: 'sk-backup-key-1' }, [{ chunks: openaiStream('claude-sonnet-4-6', ['partial ', 'answer']).slice(0, 3) }]);
    const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [question] });
    const text: string[] = [];
    stream.on('text', (x) => text.push(x));
    const err = await stream.finalMessage().then(
      () => null,
      (e: unknown) => e,
    );
    expect(text.join('')).toBe('partial answer');
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String((err as Error).message)).toMatch(/ended before its stop event/);
    const e = await log('claude-sonnet-4-6');
    expect(e).toMatchObject({ status: 200, errorCode: 'stream_truncated' });
    expect(e.attempts[0]).toMatchObject({ errorCode: 'stream_truncated' });
    const conn = await t.api.getConnection({ id: views[0]!.id });
    expect(conn.health.lastError).toMatch(/stop event/);
    // Truncation is a failure of the connection (it counts toward the breaker), never a success.
    expect(conn.health.lastErrorType).toBe('stream_truncated');
  });

  it('turns an in-band error after commit into the inbound protocol error event', async () => {
    const { openai, log } = await engine(claude({ models: ['claude-sonnet-4-6'], passthroughModels: false }));
    const start = anthropicStream('claude-sonnet-4-6', ['Half ']).slice(0, 3);
    fake.script({ key: 'sk-ant-primary-1' }, [{ chunks: [...start, sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded mid-way' } })] }]);
    const stream = await openai.chat.completions.create({ model: 'claude-sonnet-4-6', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    const err = await (async () => {
      for await (const ch of stream) text += ch.choices[0]?.delta?.content ?? '';
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(text).toBe('Half ');
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as Error).message).toContain('Overloaded mid-way');
    expect((await log('claude-sonnet-4-6')).errorCode).toBe('upstream_stream_error');
  });

  it('answers 400 naming the field when no target can express the request, and sends nothing upstream', async () => {
    const { anthropic, openai, log } = await engine(backup({ priority: 1 }));
    const err = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, tools: [webSearch], messages: [question] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const body = (err as InstanceType<typeof Anthropic.APIError>).error as { type: string; error: { type: string; code: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'untranslatable_request' } });
    expect(body.error.message).toContain('every tool in this request (web_search_20250305) runs only on Anthropic');
    const e = await log('claude-sonnet-4-6');
    expect(e.skipped).toEqual([expect.objectContaining({ connectionName: 'Backup', reason: 'untranslatable', detail: expect.stringMatching(/^tools: .*runs only on Anthropic/) })]);
    expect(e.attempts).toEqual([]);

    // The same target takes a Chat request natively (n passes through untouched)...
    const native = await openai.chat.completions.create({ model: 'backup/any', messages: [{ role: 'user', content: 'hi' }], n: 2 });
    expect(native.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect(fake.requests.at(-1)!.body).toMatchObject({ n: 2 });
    // ...but not a hosted tool through Chat; the OpenAI shape names the field in `param`.
    const r = await openai.responses.create({ model: 'backup/any', input: 'hi', tools: [{ type: 'web_search' }] }).catch((x: unknown) => x);
    expect(r).toBeInstanceOf(OpenAI.BadRequestError);
    expect((r as InstanceType<typeof OpenAI.APIError>).code).toBe('untranslatable_request');
    expect((r as InstanceType<typeof OpenAI.APIError>).param).toBe('tools');
    expect(fake.requests.map((x) => x.path)).toEqual(['/v1/chat/completions']);
  });

  it('skips a target that cannot express the request and serves it from one that can', async () => {
    const { anthropic, log } = await engine(backup({ priority: 1 }), claude({ priority: 2 }));
    const msg = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, tools: [webSearch], messages: [question] });
    expect(msg.content[0]).toMatchObject({ text: 'Hello from the fake upstream.' });
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/messages']);
    const e = await log('claude-sonnet-4-6');
    expect(e.skipped.map((s) => [s.connectionName, s.reason])).toEqual([['Backup', 'untranslatable']]);
    expect(e.attempts.map((a) => a.connectionName)).toEqual(['Claude']);
  });

  it('a translated request refused as malformed is taken natively by the next target; translated ones are skipped from then on', async () => {
    const { views, anthropic, log } = await engine(
      backup({ priority: 1 }),
      backup({ name: 'Backup two', secret: 'sk-backup-key-2', priority: 2 }),
      claude({ priority: 3 }),
    );
    fake.script({ key: 'sk-backup-key-1' }, [{ status: 400, json: { error: { message: "Invalid value for 'tool_choice'.", type: 'invalid_request_error', code: 'invalid_value' } } }]);
    const msg = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: [question] });
    expect(msg.content[0]).toMatchObject({ text: 'Hello from the fake upstream.' });
    // One translated attempt, none on the second translated target, then the native one.
    expect(fake.requests.map((r) => [r.key, r.path])).toEqual([
      ['sk-backup-key-1', '/v1/chat/completions'],
      ['sk-ant-primary-1', '/v1/messages'],
    ]);
    const e = await log('claude-sonnet-4-6');
    expect(e.status).toBe(200);
    expect(e.attempts.map((a) => [a.connectionName, a.status, a.errorClass])).toEqual([
      ['Backup', 400, 'bad_request'],
      ['Claude', 200, null],
    ]);
    expect(e.skipped).toEqual([
      expect.objectContaining({ connectionName: 'Backup two', reason: 'untranslatable', detail: expect.stringMatching(/refused the translated request as malformed/) }),
    ]);
    // A bad request is not held against the connection.
    const cd = (await t!.api.listCooldowns({})).connections.find((c) => c.connectionId === views[0]!.id);
    expect(cd?.status).toBe('active');
  });

  it('a translated content-policy refusal is relayed after one attempt: any target would repeat it', async () => {
    const { anthropic } = await engine(backup({ priority: 1 }), claude({ priority: 2 }));
    fake.script({ key: 'sk-backup-key-1' }, [{ status: 400, json: { error: { message: 'Your request was flagged by our content management policy.', type: 'invalid_request_error', code: 'content_filter' } } }]);
    const policy = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: [question] }).catch((x: unknown) => x);
    expect(policy).toBeInstanceOf(Anthropic.BadRequestError);
    expect((policy as Error).message).toContain('content management policy');
    expect(fake.requests.map((r) => r.key)).toEqual(['sk-backup-key-1']);
  });

  it('a translated 400 with no native target left is relayed after one attempt', async () => {
    const { openai } = await engine(claude({ models: ['claude-opus-4-1'], passthroughModels: false }));
    fake.script({ key: 'sk-ant-primary-1' }, [{ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: text content blocks must be non-empty' } } }]);
    const chat = await openai.chat.completions.create({ model: 'claude-opus-4-1', messages: [{ role: 'user', content: 'hi' }] }).catch((x: unknown) => x);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as Error).message).toContain('must be non-empty');
    expect(fake.requests).toHaveLength(1);
  });

  it('a native 400 is the client request\'s fault: relayed, and no translated target is asked', async () => {
    const { anthropic } = await engine(claude({ priority: 1 }), backup({ priority: 2 }));
    fake.script({ key: 'sk-ant-primary-1' }, [{ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: must be positive' } } }]);
    const native = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: [question] }).catch((x: unknown) => x);
    expect(native).toBeInstanceOf(Anthropic.BadRequestError);
    expect(fake.requests.map((r) => r.key)).toEqual(['sk-ant-primary-1']);
  });

  it('a tool-count refusal fails over to a model that takes the tools, and later requests with as many tools skip that model (R-OTH-04)', async () => {
    const { views, anthropic, log } = await engine(
      backup({ priority: 1 }),
      backup({ name: 'Backup two', secret: 'sk-backup-key-2', priority: 2 }),
      claude({ priority: 3 }),
    );
    const many = Array.from({ length: 130 }, (_, i) => ({ name: `tool_${i}`, description: `tool ${i}`, input_schema: { type: 'object' as const, properties: {} } }));
    fake.script({ key: 'sk-backup-key-1' }, [
      { status: 400, json: { error: { message: "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 130 instead.", type: 'invalid_request_error', param: 'tools', code: 'array_above_max_length' } } },
    ], { repeatLast: false });
    const first = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, tools: many, messages: [question] });
    expect(first.content[0]).toMatchObject({ text: 'Hello from the fake upstream.' });
    // One refused call; the other key of the same provider and model is not tried: it has the same limit.
    expect(fake.requests.map((r) => r.key)).toEqual(['sk-backup-key-1', 'sk-ant-primary-1']);
    const e1 = await log('claude-sonnet-4-6');
    expect(e1.attempts.map((a) => [a.connectionName, a.status])).toEqual([['Backup', 400], ['Claude', 200]]);
    expect(e1.skipped).toEqual([expect.objectContaining({ connectionName: 'Backup two', reason: 'too_many_tools', detail: expect.stringMatching(/takes at most 128 tools.*this request has 130/) })]);
    // Not held against the connection.
    expect((await t!.api.listCooldowns({})).connections.find((c) => c.connectionId === views[0]!.id)?.status).toBe('active');

    // The next request with as many tools goes straight to Claude: no call wasted on the backup.
    fake.requests.length = 0;
    await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, tools: many, messages: [question] });
    expect(fake.requests.map((r) => r.key)).toEqual(['sk-ant-primary-1']);
    // A request with a few tools still goes to the backup first.
    fake.requests.length = 0;
    const few = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, tools: many.slice(0, 5), messages: [question] });
    expect(few.content[0]).toMatchObject({ text: 'Hello from the fake upstream.' });
    expect(fake.requests.map((r) => r.key)).toEqual(['sk-backup-key-1']);
  });

  it('relays upstream errors in the inbound protocol shape, context length included', async () => {
    const { anthropic, openai } = await engine(
      backup({ priority: 1 }),
      backup({ name: 'Backup small', secret: 'sk-backup-key-2', models: ['claude-haiku-4-5'] }),
      claude({ name: 'Claude only', models: ['claude-opus-4-1'], passthroughModels: false }),
    );
    fake.script({ key: 'sk-backup-key-1' }, [
      { status: 429, headers: { 'retry-after': '7' }, json: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } } },
    ]);
    fake.script({ key: 'sk-backup-key-2' }, [
      { status: 400, json: { error: { message: "This model's maximum context length is 65536 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } } },
    ]);
    const limited = await anthropic.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 50, messages: [question] }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'Rate limit reached for requests' } });
    expect((limited as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after')).toBe('7');

    const long = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [question] }).catch((e: unknown) => e);
    expect(long).toBeInstanceOf(Anthropic.BadRequestError);
    expect((long as Error).message).toContain('prompt is too long');

    fake.script({ key: 'sk-ant-primary-1' }, [{ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' } } }]);
    const chat = await openai.chat.completions.create({ model: 'claude-opus-4-1', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as InstanceType<typeof OpenAI.APIError>).code).toBe('context_length_exceeded');
    expect((chat as Error).message).toContain('prompt is too long');
  });

  it('answers count_tokens on a non-Anthropic target with the local estimate, without calling it', async () => {
    const { anthropic } = await engine(backup({ priority: 1 }));
    const r = await anthropic.messages.countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'x'.repeat(400) }] }).withResponse();
    expect(r.data.input_tokens).toBeGreaterThanOrEqual(100);
    expect(r.response.headers.get('x-switchyard-estimated')).toBe('true');
    expect(fake.requests).toEqual([]);
  });

  it('sends max_completion_tokens to OpenAI itself and to reasoning models, max_tokens elsewhere', async () => {
    const { anthropic } = await engine(
      { name: 'OpenAI', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-openai-own-1' },
      backup({ priority: 1, passthroughModels: true, models: [] }),
    );
    await anthropic.messages.create({ model: 'openai/gpt-4.1', max_tokens: 77, messages: [question] });
    await anthropic.messages.create({ model: 'backup/o4-mini', max_tokens: 78, messages: [question] });
    await anthropic.messages.create({ model: 'backup/deepseek-chat', max_tokens: 79, messages: [question] });
    const bodies = fake.requests.map((r) => r.body!);
    expect(bodies.map((b) => [b.model, b.max_completion_tokens ?? null, b.max_tokens ?? null])).toEqual([
      ['gpt-4.1', 77, null],
      ['o4-mini', 78, null],
      ['deepseek-chat', null, 79],
    ]);
  });
});
