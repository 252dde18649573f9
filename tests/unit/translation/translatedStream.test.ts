// A translated stream (proxy/translatedBody.ts) writes the inbound protocol's events with
// backpressure: while the client's buffer is full the upstream body is paused, and it resumes on
// drain; it ends with the terminal event, or with an error event when the upstream stops short.
import type { ServerResponse } from 'node:http';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { anthropicToChat } from '../../../src/main/engine/codecs';
import { BodyReader } from '../../../src/main/engine/proxy/bodyReader';
import { StreamFailure, TranslatedStream } from '../../../src/main/engine/proxy/translatedBody';
import { FrameReader } from '../../../src/main/engine/streams/frames';
import { UsageTap } from '../../../src/main/engine/upstream/usage';
import { openaiStream } from '../../support/fakeUpstream';

/** A client whose writes complete only when released: its buffer fills like a slow socket's. */
class SlowClient extends Writable {
  text = '';
  private held: (() => void)[] = [];
  constructor() {
    super({ highWaterMark: 64 });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void) {
    this.text += chunk.toString();
    this.held.push(cb);
  }
  release() {
    const h = this.held;
    this.held = [];
    h.forEach((cb) => cb());
  }
}

const tick = () => new Promise((r) => setImmediate(r));

async function setup(chunks: string[]) {
  const upstream = new PassThrough();
  const reader = new BodyReader(upstream);
  upstream.write(chunks[0]!);
  const first = await reader.first();
  if (first.kind !== 'chunk') throw new Error('no first chunk');
  const frames = new FrameReader('openai-chat');
  const held = frames.push(first.chunk).frames;
  const translator = anthropicToChat.response({ request: { model: 'claude-x', messages: [] }, model: 'm', now: 0, requestId: 'req_1' });
  const body = new TranslatedStream(reader, frames, translator, held, (s) => s);
  const client = new SlowClient();
  const done = body.pipeTo(client as unknown as ServerResponse, first.chunk, new UsageTap());
  return { upstream, client, done, body };
}

describe('translated stream', () => {
  it('pauses the upstream while the client is slow and finishes with the terminal event', async () => {
    const pieces = Array.from({ length: 40 }, (_, i) => `piece-${i} `);
    const chunks = openaiStream('m', pieces).map((c) => c.data);
    const { upstream, client, done, body } = await setup(chunks);
    for (const c of chunks.slice(1)) upstream.write(c);
    await tick();
    // The client's buffer is full and nothing was released: the upstream body is not flowing.
    expect(upstream.readableFlowing).toBe(false);
    expect(client.text).toContain('event: message_start');
    expect(client.text).not.toContain('message_stop');
    upstream.end();
    for (let i = 0; i < 200 && !client.text.includes('message_stop'); i++) {
      client.release();
      await tick();
    }
    client.release();
    expect(await done).toEqual({ ok: true });
    const deltas = [...client.text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((m) => m[1]);
    expect(deltas.join('')).toBe(pieces.join(''));
    expect(client.text.trimEnd().endsWith('data: {"type":"message_stop"}')).toBe(true);
    expect(body.usage()).toEqual({ inputTokens: 9, outputTokens: 40 });
  });

  it('ends with an error event and reports stream_truncated when the upstream stops before its terminal event', async () => {
    const chunks = openaiStream('m', ['a', 'b']).map((c) => c.data).slice(0, 3);
    const { upstream, client, done } = await setup(chunks);
    upstream.write(chunks[1]!);
    upstream.write(chunks[2]!);
    upstream.end();
    for (let i = 0; i < 20; i++) {
      client.release();
      await tick();
    }
    const r = await done;
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toBeInstanceOf(StreamFailure);
    expect(!r.ok && (r.error as StreamFailure).code).toBe('stream_truncated');
    expect(client.text).toContain('event: error');
    expect(client.text).not.toContain('message_stop');
  });
});
