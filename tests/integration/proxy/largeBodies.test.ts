// An agent's request body is large (tens to hundreds of KiB of conversation). When its model is
// rewritten for the target, a body of 16 KiB or more leaves in three parts around the new value,
// not as a copy (proxy/body.ts, upstream/client.ts): the upstream must still get every other byte
// unchanged, multi-byte characters included, with a content-length and never chunked, and a
// failover to a target with another model must get its own rewrite of the original bytes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPLICE_IN_PARTS_MIN_BYTES } from '../../../src/main/engine/proxy/body';
import { rememberedBytesReused } from '../../../src/main/engine/proxy/jsonSkeleton';
import { bodiesParsedAgain } from '../../../src/main/engine/proxy/parsedCall';
import { startTestEngine, type TestEngine } from '../../support/harness';

interface Seen {
  key: string;
  contentLength: string | undefined;
  transferEncoding: string | undefined;
  body: Buffer;
}

const completion = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'served' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

const message = JSON.stringify({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-x',
  content: [{ type: 'text', text: 'served' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 3, output_tokens: 1 },
});

/** The same answer as Anthropic streams it. */
const messageEvents = [
  ['message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 0 } } }],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ser' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ved' } }],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }],
  ['message_stop', { type: 'message_stop' }],
]
  .map(([event, data]) => `event: ${event as string}\ndata: ${JSON.stringify(data)}\n\n`)
  .join('');

/**
 * A request shaped as Claude Code sends one: model first, a system prompt and tool descriptions
 * with a few non-ASCII characters, a tool whose schema has a `model` parameter (so the raw key
 * occurs more than once), then a long conversation of tool results, mostly ASCII.
 */
function claudeCodeShaped(model: string, kib: number): Record<string, unknown> {
  const messages: unknown[] = [{ role: 'user', content: [{ type: 'text', text: 'Summarise src/ — briefly…' }] }];
  for (let i = 0; JSON.stringify(messages).length < kib * 1024; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: `/repo/src/f${i}.ts` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `export const f${i} = (a: number) => a * 2; // "model" ${i}\n`.repeat(60) }] });
  }
  return {
    model,
    max_tokens: 64,
    system: [{ type: 'text', text: 'You are Claude Code 🤖 — an agent; use tools → report ≤ 4 lines.' }],
    tools: [
      { name: 'Task', description: 'Launch a sub-agent – pick its model.', input_schema: { type: 'object', properties: { prompt: { type: 'string' }, model: { type: 'string', enum: ['sonnet', 'opus', 'haiku'] } } } },
      { name: 'Read', description: 'Read a file.', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } },
    ],
    metadata: { user_id: 'user_1' },
    messages,
  };
}

/** A conversation of about `kib` KiB, with accents, CJK and emoji, and quotes to escape. */
function conversation(kib: number): { role: 'user' | 'assistant'; content: string }[] {
  const messages: { role: 'user' | 'assistant'; content: string }[] = [];
  for (let i = 0, size = 0; size < kib * 1024; i++) {
    const content = `Step ${i}: read "src/módulo-${i}.ts" — 日本語のコメント 🚀, then {"ok": true}\n`.repeat(4);
    messages.push({ role: i % 2 ? 'assistant' : 'user', content });
    size += Buffer.byteLength(content);
  }
  return messages;
}

/** What the upstream should get: the client's own bytes with only the model's value replaced. */
const expected = (raw: string, from: string, to: string) => Buffer.from(raw.replace(`"model":"${from}"`, `"model":"${to}"`));

describe('large request bodies with a rewritten model', () => {
  let upstream: Server;
  const seen: Seen[] = [];
  const failKeys = new Set<string>();
  let t: TestEngine;
  let port = 0;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const key = String(req.headers.authorization ?? req.headers['x-api-key'] ?? '').replace(/^Bearer /, '');
        seen.push({ key, contentLength: req.headers['content-length'], transferEncoding: req.headers['transfer-encoding'], body: Buffer.concat(chunks) });
        if (failKeys.has(key)) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"boom","type":"server_error"}}');
          return;
        }
        if (req.url === '/v1/messages' && (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { stream?: boolean }).stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(messageEvents);
          return;
        }
        const answer = req.url === '/v1/messages' ? message : completion;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
        res.end(answer);
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    port = (upstream.address() as AddressInfo).port;
    t = await startTestEngine();
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    await t.addConnection({ name: 'Alpha', kind: 'openai-compatible', provider: 'alpha', baseUrl, secret: 'sk-alpha-upstream-aaaa', models: ['model-x'] });
    await t.addConnection({ name: 'Beta', kind: 'openai-compatible', provider: 'beta', baseUrl, secret: 'sk-beta-upstream-bbbb', models: ['model-y'] });
    await t.addConnection({ name: 'Gamma', kind: 'anthropic', provider: 'gamma', baseUrl: `http://127.0.0.1:${port}`, secret: 'sk-ant-gamma-upstream-cccc', models: ['claude-x'] });
    await t.api.createCombo({ name: 'pool', strategy: 'priority', targets: [{ provider: 'alpha', model: 'model-x' }, { provider: 'beta', model: 'model-y' }] });
    await t.api.createCombo({ name: 'claude-then-chat', strategy: 'priority', targets: [{ provider: 'gamma', model: 'claude-x' }, { provider: 'alpha', model: 'model-x' }] });
  });
  afterAll(async () => {
    await t.stop();
    await new Promise((r) => upstream.close(r));
  });

  async function send(model: string, kib: number): Promise<{ status: number; raw: string }> {
    const raw = JSON.stringify({ model, messages: conversation(kib) });
    const res = await fetch(`${t.proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.clientKey}` },
      body: raw,
    });
    await res.arrayBuffer();
    return { status: res.status, raw };
  }

  it('a 200 KiB body reaches the upstream byte for byte but the model, with its length and not chunked', async () => {
    seen.length = 0;
    const { status, raw } = await send('alpha/model-x', 200);
    expect(Buffer.byteLength(raw)).toBeGreaterThan(200 * 1024);
    expect(status).toBe(200);
    expect(seen).toHaveLength(1);
    const want = expected(raw, 'alpha/model-x', 'model-x');
    expect(seen[0]!.body.equals(want)).toBe(true);
    expect(seen[0]!.contentLength).toBe(String(want.length));
    expect(seen[0]!.transferEncoding).toBeUndefined();
  });

  it('a large body whose model needs no rewrite leaves as it came, from its socket chunks, with its length', async () => {
    seen.length = 0;
    const { status, raw } = await send('model-x', 200);
    expect(status).toBe(200);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body.equals(Buffer.from(raw))).toBe(true);
    expect(seen[0]!.contentLength).toBe(String(Buffer.byteLength(raw)));
    expect(seen[0]!.transferEncoding).toBeUndefined();
  });

  it('a failover to a target with another model gets its own rewrite of the original bytes', async () => {
    seen.length = 0;
    failKeys.add('sk-alpha-upstream-aaaa');
    try {
      const { status, raw } = await send('pool', 64);
      expect(status).toBe(200);
      // The failing target may be tried again before the failover (a same-target retry): each
      // attempt sends the parts anew.
      const alpha = seen.filter((s) => s.key === 'sk-alpha-upstream-aaaa');
      expect(alpha.length).toBeGreaterThanOrEqual(1);
      expect(seen.at(-1)!.key).toBe('sk-beta-upstream-bbbb');
      for (const s of alpha) expect(s.body.equals(expected(raw, 'pool', 'model-x'))).toBe(true);
      expect(seen.at(-1)!.body.equals(expected(raw, 'pool', 'model-y'))).toBe(true);
      for (const s of seen) expect(s.contentLength).toBe(String(s.body.length));
    } finally {
      failKeys.clear();
    }
  });

  it('a body below the threshold is rewritten as one buffer, with the same result', async () => {
    seen.length = 0;
    const { status, raw } = await send('alpha/model-x', 2);
    expect(Buffer.byteLength(raw)).toBeLessThan(SPLICE_IN_PARTS_MIN_BYTES);
    expect(status).toBe(200);
    expect(seen[0]!.body.equals(expected(raw, 'alpha/model-x', 'model-x'))).toBe(true);
    expect(seen[0]!.contentLength).toBe(String(seen[0]!.body.length));
  });

  it('a large translated body (an Anthropic client on a Chat upstream) arrives whole, with its length and not chunked', async () => {
    seen.length = 0;
    const messages = conversation(200);
    const res = await fetch(`${t.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.clientKey, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'alpha/model-x', max_tokens: 64, messages }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: { text: string }[] }).content[0]!.text).toBe('served');
    expect(seen).toHaveLength(1);
    const sent = seen[0]!;
    expect(sent.contentLength).toBe(String(sent.body.length));
    expect(sent.transferEncoding).toBeUndefined();
    const chat = JSON.parse(sent.body.toString('utf8')) as { model: string; messages: { role: string; content: unknown }[] };
    expect(chat.model).toBe('model-x');
    // Every turn's text arrives intact, multi-byte characters included.
    const text = (c: unknown) => (typeof c === 'string' ? c : (c as { text: string }[]).map((p) => p.text).join(''));
    expect(chat.messages.map((m) => text(m.content))).toEqual(messages.map((m) => m.content));
  });

  it('the OpenAI SDK gets its answer for a large conversation', async () => {
    const openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    const c = await openai.chat.completions.create({ model: 'alpha/model-x', messages: conversation(100) });
    expect(c.choices[0]!.message.content).toBe('served');
  });

  it('a Claude Code-shaped body, its model key also in a tool schema, reaches a native upstream byte for byte but the model', async () => {
    seen.length = 0;
    // Pretty-printed and with a number spelled 1.50: a re-serialised body would differ.
    const raw = JSON.stringify(claudeCodeShaped('gamma/claude-x', 120), null, 1).replace('"max_tokens": 64', '"max_tokens": 64, "temperature": 1.50');
    const res = await fetch(`${t.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.clientKey, 'anthropic-version': '2023-06-01' },
      body: raw,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: { text: string }[] }).content[0]!.text).toBe('served');
    expect(seen).toHaveLength(1);
    const want = Buffer.from(raw.replace('"model": "gamma/claude-x"', '"model": "claude-x"'));
    expect(seen[0]!.body.equals(want)).toBe(true);
    expect(seen[0]!.contentLength).toBe(String(want.length));
    expect(seen[0]!.transferEncoding).toBeUndefined();
  });

  it('the Anthropic SDK gets its answer for a Claude Code-shaped request', async () => {
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const m = await anthropic.messages.create(claudeCodeShaped('gamma/claude-x', 60) as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(m.content[0]).toMatchObject({ type: 'text', text: 'served' });
    const sent = JSON.parse(seen.at(-1)!.body.toString('utf8')) as { model: string; tools: { input_schema: { properties: Record<string, unknown> } }[] };
    expect(sent.model).toBe('claude-x');
    expect(sent.tools[0]!.input_schema.properties.model).toEqual({ type: 'string', enum: ['sonnet', 'opus', 'haiku'] });
  });
  // A large native request lets go of its parsed body after routing (proxy/parsedCall.ts): its
  // attempt reads only the top-level model, and a late reader gets the bytes parsed again.
  it('a large native request, plain or streamed, is sent without parsing its body a second time', async () => {
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const before = bodiesParsedAgain();
    const m = await anthropic.messages.create(claudeCodeShaped('gamma/claude-x', 60) as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(m.content[0]).toMatchObject({ type: 'text', text: 'served' });
    const stream = await anthropic.messages.create({ ...claudeCodeShaped('gamma/claude-x', 60), stream: true } as unknown as Anthropic.MessageCreateParamsStreaming);
    let text = '';
    for await (const e of stream) if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
    expect(text).toBe('served');
    expect(bodiesParsedAgain()).toBe(before);
  });

  it('a large native request that fails over to a translated target is translated from its bytes, parsed again once', async () => {
    seen.length = 0;
    failKeys.add('sk-ant-gamma-upstream-cccc');
    try {
      const body = claudeCodeShaped('claude-then-chat', 60);
      const before = bodiesParsedAgain();
      const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
      const m = await anthropic.messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming);
      expect(m.content[0]).toMatchObject({ type: 'text', text: 'served' });
      expect(seen.some((s) => s.key === 'sk-ant-gamma-upstream-cccc')).toBe(true);
      const chat = seen.at(-1)!;
      expect(chat.key).toBe('sk-alpha-upstream-aaaa');
      const sent = JSON.parse(chat.body.toString('utf8')) as { model: string; messages: unknown[]; tools: { function: { name: string } }[] };
      expect(sent.model).toBe('model-x');
      // The system prompt, then every turn of the conversation, tool calls and results included.
      expect(sent.messages.length).toBeGreaterThan((body.messages as unknown[]).length);
      expect(sent.tools.map((x) => x.function.name)).toEqual(['Task', 'Read']);
      expect(JSON.stringify(sent)).toContain('You are Claude Code 🤖 — an agent');
      expect(bodiesParsedAgain()).toBe(before + 1);
    } finally {
      failKeys.clear();
    }
  });

  // A large Messages, Chat or Responses body is read as its top level only (proxy/jsonSkeleton.ts):
  // every byte checked as JSON, the body itself never built for a native attempt.
  it('a large body that is not JSON is refused 400 invalid_json, as a small one is, and nothing goes upstream', async () => {
    const before = seen.length;
    const filler = 'x'.repeat(SPLICE_IN_PARTS_MIN_BYTES + 1024);
    const cases = [
      ['{"model":"alpha/model-x","messages":[{"role":"user","content":"hi"},]}', `{"model":"alpha/model-x","pad":"${filler}","messages":[{"role":"user","content":"hi"},]}`],
      // A raw tab inside a string.
      ['{"model":"alpha/model-x","messages":[{"role":"user","content":"a\tb"}]}', `{"model":"alpha/model-x","pad":"${filler}","messages":[{"role":"user","content":"a\tb"}]}`],
    ];
    for (const [small, large] of cases) {
      const answers = [];
      for (const body of [small!, large!]) {
        const res = await fetch(`${t.proxyUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.clientKey}` }, body });
        answers.push({ status: res.status, error: ((await res.json()) as { error: { code: string; message: string } }).error });
      }
      expect(answers[1]!.status).toBe(400);
      expect(answers[1]!.error.code).toBe('invalid_json');
      expect(answers[0]!.status).toBe(400);
      expect(answers[0]!.error.code).toBe('invalid_json');
      expect(answers[1]!.error.message).toMatch(/^request body is not valid JSON: /);
    }
    expect(seen.length).toBe(before);
  });

  it('a large body naming its top-level model twice goes upstream with the model JSON.parse reads, re-serialised', async () => {
    const messages = conversation(24);
    const raw = `{"model":"beta/model-y","messages":${JSON.stringify(messages)},"model":"alpha/model-x"}`;
    const res = await fetch(`${t.proxyUrl}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.clientKey}` }, body: raw });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const last = seen.at(-1)!;
    expect(last.key).toBe('sk-alpha-upstream-aaaa');
    expect(JSON.parse(last.body.toString('utf8'))).toEqual({ model: 'model-x', messages });
  });

  // The members a large body shares with the client's recent ones are not checked again
  // (proxy/memberMemory.ts): an agent's next turn repeats its system prompt, tools and messages.
  it("an agent's next turn is read with what its last one checked; its new bytes are still checked, and it reaches the upstream byte for byte", async () => {
    const turn = (n: number) => {
      const body = claudeCodeShaped('gamma/claude-x', 40);
      const messages = body.messages as unknown[];
      for (let i = 0; i < n; i++) messages.push({ role: i % 2 ? 'user' : 'assistant', content: [{ type: 'text', text: `turn ${i} — "done" ✓`.repeat(20) }] });
      return JSON.stringify(body);
    };
    const post = (raw: string) =>
      fetch(`${t.proxyUrl}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': t.clientKey, 'anthropic-version': '2023-06-01' }, body: raw });
    seen.length = 0;
    for (const n of [0, 2, 4]) {
      const raw = turn(n);
      const before = rememberedBytesReused();
      const res = await post(raw);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { content: { text: string }[] }).content[0]!.text).toBe('served');
      expect(seen.at(-1)!.body.equals(Buffer.from(raw.replace('"model":"gamma/claude-x"', '"model":"claude-x"')))).toBe(true);
      // The second and third turns: the system prompt, the tools and the earlier messages came from memory.
      if (n > 0) expect(rememberedBytesReused() - before).toBeGreaterThan(Buffer.byteLength(turn(0)) / 2);
    }
    // A raw tab in the newest message, after everything the memory holds: refused as before.
    const broken = turn(6).replace('turn 5 — ', 'turn 5 —\t');
    expect(broken).not.toBe(turn(6));
    const count = seen.length;
    const res = await post(broken);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_json');
    expect(seen.length).toBe(count);
  });

  it('a large Claude Code request names its session from metadata.user_id without building its body', async () => {
    const session = '1b2c3d4e-0000-4000-8000-00000000abcd';
    const body = { ...claudeCodeShaped('gamma/claude-x', 40), metadata: { user_id: `user_${'ab'.repeat(32)}_account__session_${session}` } };
    const before = bodiesParsedAgain();
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    await anthropic.messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(bodiesParsedAgain()).toBe(before);
    const entry = (await t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(entry.affinity).toMatchObject({ source: 'metadata.user_id', session });
  });

  it('a client whose large requests are translated at their first target has the next ones parsed at once, not scanned first', async () => {
    const anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
    const send = (model: string) => anthropic.messages.create(claudeCodeShaped(model, 40) as unknown as Anthropic.MessageCreateParamsNonStreaming);
    await send('gamma/claude-x'); // native: the next one is read as its top level
    let before = bodiesParsedAgain();
    await send('alpha/model-x'); // translated: read as its top level, then parsed for the translation
    expect(bodiesParsedAgain()).toBe(before + 1);
    before = bodiesParsedAgain();
    await send('alpha/model-x'); // parsed at once: nothing parsed later
    expect(bodiesParsedAgain()).toBe(before);
    expect(JSON.parse(seen.at(-1)!.body.toString('utf8'))).toMatchObject({ model: 'model-x' });
    await send('gamma/claude-x'); // native again: parsed at once this time, then let go
    before = bodiesParsedAgain();
    await send('gamma/claude-x');
    expect(bodiesParsedAgain()).toBe(before);
    await send('alpha/model-x'); // and back to reading the top level first
    expect(bodiesParsedAgain()).toBe(before + 1);
  });
});
