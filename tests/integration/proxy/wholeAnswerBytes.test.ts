// A complete non-stream answer is read whole (the empty-answer check decodes and parses it) and
// written in one go (proxy/commit.ts writeWhole): the client still gets the upstream's bytes
// unchanged, multi-byte characters and bytes that are not UTF-8 at all included.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from '../../support/harness';

const completion = (content: Buffer) =>
  Buffer.concat([
    Buffer.from('{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"'),
    content,
    Buffer.from('"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}'),
  ]);

describe('a whole answer reaches the client byte for byte', () => {
  let upstream: Server;
  let answer: Buffer = Buffer.alloc(0);
  let t: TestEngine;

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
        res.end(answer);
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    t = await startTestEngine();
    await t.addConnection({ name: 'OpenAI A', kind: 'openai', baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, secret: 'sk-openai-upstream-aaaa' });
  });
  afterAll(async () => {
    await t.stop();
    await new Promise((r) => upstream.close(r));
  });

  async function raw(): Promise<{ status: number; length: string | null; bytes: Buffer }> {
    const res = await fetch(`${t.proxyUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.clientKey}` },
      body: JSON.stringify({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: res.status, length: res.headers.get('content-length'), bytes: Buffer.from(await res.arrayBuffer()) };
  }

  it('multi-byte UTF-8 (accents, CJK, emoji) is sent unchanged, and the SDK reads it', async () => {
    answer = completion(Buffer.from('héllo 日本語 🚀 done'));
    const r = await raw();
    expect(r.status).toBe(200);
    expect(r.length).toBe(String(answer.length));
    expect(r.bytes.equals(answer)).toBe(true);
    const openai = new OpenAI({ baseURL: `${t.proxyUrl}/v1`, apiKey: t.clientKey, maxRetries: 0 });
    const c = await openai.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] });
    expect(c.choices[0]!.message.content).toBe('héllo 日本語 🚀 done');
  });

  it('bytes that are not UTF-8 are sent as they came, not replaced', async () => {
    answer = completion(Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0x20, 0xc3, 0x28, 0x21]));
    const r = await raw();
    expect(r.status).toBe(200);
    expect(r.length).toBe(String(answer.length));
    expect(r.bytes.equals(answer)).toBe(true);
  });
});
