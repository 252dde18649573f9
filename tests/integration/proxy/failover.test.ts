// Selection and failover: priority, round-robin, moving to the next connection on a retryable
// failure before any byte reached the client, and relaying the last error when nothing is left.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionView } from '../../../src/shared/model';
import { anthropicStream, FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

const SELECTED = 'x-switchyard-selected-connection-id';

describe('failover', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  let a: ConnectionView;
  let b: ConnectionView;
  let anthropic: Anthropic;

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    a = await t.addConnection({ name: 'Key A', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-key-aaaaaaaaaaaa', priority: 1 });
    b = await t.addConnection({ name: 'Key B', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-key-bbbbbbbbbbbb', priority: 2 });
    anthropic = new Anthropic({ baseURL: t.proxyUrl, apiKey: t.clientKey, maxRetries: 0 });
  });
  afterEach(async () => {
    fake.reset();
    // Each test starts from healthy connections: failures in one must not cool keys for the next.
    await t.api.clearCooldowns({ all: true });
    await t.api.resetResilience({});
  });
  afterAll(async () => {
    await t.stop();
    await fake.close();
  });

  const ask = (model = 'claude-x') =>
    anthropic.messages.create({ model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }).withResponse();

  it('uses the best priority first', async () => {
    const { response } = await ask();
    expect(response.headers.get(SELECTED)).toBe(a.id);
    expect(fake.requests.map((r) => r.key)).toEqual(['sk-ant-key-aaaaaaaaaaaa']);
  });

  it('a key answering 500 fails over to the second key and the client sees a 200', async () => {
    fake.script({ key: 'sk-ant-key-aaaaaaaaaaaa' }, [{ status: 500, json: { type: 'error', error: { type: 'api_error', message: 'boom' } } }]);
    const { data, response } = await ask();
    expect(response.status).toBe(200);
    expect(data.content[0]).toMatchObject({ type: 'text' });
    expect(response.headers.get(SELECTED)).toBe(b.id);
    expect(fake.requests.map((r) => r.key)).toEqual(['sk-ant-key-aaaaaaaaaaaa', 'sk-ant-key-bbbbbbbbbbbb']);
    const log = (await t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(log.attempts.map((x) => [x.connectionName, x.status, x.failedOver])).toEqual([
      ['Key A', 500, true],
      ['Key B', 200, false],
    ]);
  });

  it('fails over when the upstream refuses the connection', async () => {
    const dead = await t.addConnection({ name: 'Dead', kind: 'anthropic', baseUrl: 'http://127.0.0.1:9', secret: 'sk-ant-dead-dddddddddd', priority: 0 });
    try {
      const { response } = await ask();
      expect(response.status).toBe(200);
      expect(response.headers.get(SELECTED)).toBe(a.id);
      const log = (await t.api.listLogs({ limit: 1 })).entries[0]!;
      expect(log.attempts[0]).toMatchObject({ connectionName: 'Dead', status: null, failedOver: true });
    } finally {
      await t.api.deleteConnection({ id: dead.id });
    }
  });

  it('fails over when a 200 stream dies before its first byte', async () => {
    fake.script({ key: 'sk-ant-key-aaaaaaaaaaaa' }, [{ destroy: true }]);
    const stream = anthropic.messages.stream({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ text: 'Hello from the stream.' });
    expect(fake.requests.map((r) => r.key)).toEqual(['sk-ant-key-aaaaaaaaaaaa', 'sk-ant-key-bbbbbbbbbbbb']);
  });

  it('fails over when a stream opens with an error event', async () => {
    fake.script({ key: 'sk-ant-key-aaaaaaaaaaaa' }, [
      { chunks: [{ data: 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n' }] },
    ]);
    const stream = anthropic.messages.stream({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ text: 'Hello from the stream.' });
    expect(fake.requests).toHaveLength(2);
  });

  it('does not fail over a request the upstream calls malformed, and relays its error', async () => {
    fake.script({}, [{ status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' } } }]);
    const err = await ask().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('max_tokens: too large');
    expect(fake.requests).toHaveLength(1);
  });

  it('relays the last upstream error, with its retry hint, when every connection fails', async () => {
    // A hint longer than the longest cooldown wait (30 s): the request does not wait it out (issue 19).
    fake.script({}, [{ status: 429, headers: { 'retry-after': '45' }, json: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } }]);
    const res = await fetch(`${t.proxyUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': t.clientKey, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error).toMatchObject({ type: 'rate_limit_error', message: 'slow down' });
    expect(fake.requests).toHaveLength(2);
  });

  it('answers 502 in the inbound shape when no upstream can be reached', async () => {
    const t2 = await startTestEngine();
    try {
      await t2.addConnection({ name: 'Nowhere', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', secret: 'sk-nowhere-nnnnnnnnnn' });
      const openai = new OpenAI({ baseURL: `${t2.proxyUrl}/v1`, apiKey: t2.clientKey, maxRetries: 0 });
      const err = await openai.chat.completions.create({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_unreachable');
    } finally {
      await t2.stop();
    }
  });

  it('spreads requests round-robin across connections of the same priority', async () => {
    await t.api.updateConnection({ id: b.id, patch: { priority: 1 } });
    try {
      const seen = new Set<string | null>();
      for (let i = 0; i < 4; i++) seen.add((await ask()).response.headers.get(SELECTED));
      expect(seen).toEqual(new Set([a.id, b.id]));
      await t.api.patchSettings({ patch: { 'routing.strategy': 'fill-first' } });
      const fill = new Set<string | null>();
      for (let i = 0; i < 4; i++) fill.add((await ask()).response.headers.get(SELECTED));
      expect(fill.size).toBe(1);
    } finally {
      await t.api.patchSettings({ patch: { 'routing.strategy': null } });
      await t.api.updateConnection({ id: b.id, patch: { priority: 2 } });
    }
  });

  it('never sends anything to a disabled connection', async () => {
    await t.api.updateConnection({ id: a.id, patch: { enabled: false } });
    try {
      const { response } = await ask();
      expect(response.headers.get(SELECTED)).toBe(b.id);
      expect(fake.requests.map((r) => r.key)).toEqual(['sk-ant-key-bbbbbbbbbbbb']);
      const log = (await t.api.listLogs({ limit: 1 })).entries[0]!;
      expect(log.skipped).toEqual([expect.objectContaining({ connectionName: 'Key A', reason: 'disabled' })]);
    } finally {
      await t.api.updateConnection({ id: a.id, patch: { enabled: true } });
    }
  });

  it('times out an upstream that sends no headers and fails over', async () => {
    await t.api.updateConnection({ id: a.id, patch: { timeouts: { headersMs: 1_000 } } });
    fake.script({ key: 'sk-ant-key-aaaaaaaaaaaa' }, [{ hang: true }]);
    try {
      const { response } = await ask();
      expect(response.headers.get(SELECTED)).toBe(b.id);
      const log = (await t.api.listLogs({ limit: 1 })).entries[0]!;
      expect(log.attempts[0]).toMatchObject({ connectionName: 'Key A', failedOver: true });
      expect(log.attempts[0]!.errorMessage).toContain('response headers');
    } finally {
      await t.api.updateConnection({ id: a.id, patch: { timeouts: {} } });
    }
  });

  it('times out a stream that goes silent before its first chunk and fails over', async () => {
    await t.api.updateConnection({ id: a.id, patch: { timeouts: { idleMs: 1_000 } } });
    fake.script({ key: 'sk-ant-key-aaaaaaaaaaaa' }, [{ stallAfterHeaders: true }]);
    try {
      const stream = anthropic.messages.stream({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
      const final = await stream.finalMessage();
      expect(final.content[0]).toMatchObject({ text: 'Hello from the stream.' });
      expect(fake.requests.map((r) => r.key)).toEqual(['sk-ant-key-aaaaaaaaaaaa', 'sk-ant-key-bbbbbbbbbbbb']);
    } finally {
      await t.api.updateConnection({ id: a.id, patch: { timeouts: {} } });
    }
  });

  it('stops after the attempt budget', async () => {
    await t.api.patchSettings({ patch: { 'proxy.maxAttempts': 1 } });
    fake.script({}, [{ status: 503, json: { type: 'error', error: { type: 'overloaded_error', message: 'busy' } } }]);
    try {
      const err = await ask().catch((e: unknown) => e);
      expect((err as { status?: number }).status).toBe(503);
      expect(fake.requests).toHaveLength(1);
      const log = (await t.api.listLogs({ limit: 1 })).entries[0]!;
      expect(log.skipped).toEqual([expect.objectContaining({ connectionName: 'Key B', reason: 'attempt_budget' })]);
    } finally {
      await t.api.patchSettings({ patch: { 'proxy.maxAttempts': null } });
    }
  });

  it('passes each chunk to the client before the upstream sends the next one', async () => {
    // The upstream holds back the rest of the stream until the client has seen the first delta:
    // a proxy that buffered the stream would never deliver it, and this test would time out.
    let release!: () => void;
    const clientSawFirst = new Promise<void>((r) => (release = r));
    const chunks = anthropicStream('claude-x', ['first', ' second']);
    chunks[3] = { ...chunks[3]!, gate: clientSawFirst };
    fake.script({}, [{ chunks }]);
    const stream = anthropic.messages.stream({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    const seen: string[] = [];
    stream.on('text', (delta) => {
      seen.push(delta);
      release();
    });
    const final = await stream.finalMessage();
    expect(seen).toEqual(['first', ' second']);
    expect(final.content[0]).toMatchObject({ text: 'first second' });
  });
});
