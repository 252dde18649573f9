import type { IncomingMessage, ServerResponse } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonObject } from '../../../src/main/engine/proxy/body';
import { ProxyError } from '../../../src/main/engine/proxy/errors';
import { BodyReads, bodiesParsedAgain, ParsedCall, topLevelOf } from '../../../src/main/engine/proxy/parsedCall';
import type { RequestBytes } from '../../../src/main/engine/proxy/requestBytes';

function callOf(body: RequestBytes): ParsedCall {
  return new ParsedCall({
    protocol: 'anthropic-messages',
    endpoint: 'messages',
    wire: 'anthropic',
    req: {} as IncomingMessage,
    res: {} as ServerResponse,
    requestId: 'r1',
    startedAt: 0,
    startMono: 0,
    clientKeyId: null,
    body,
    json: parseJsonObject(body),
  });
}

const agentBody = () =>
  Buffer.from(
    JSON.stringify({
      model: 'anth/claude-x',
      max_tokens: 1024,
      stream: true,
      temperature: null,
      system: [{ type: 'text', text: 'You are an agent — 🤖' }],
      tools: [{ name: 'Task', input_schema: { properties: { model: { type: 'string' } } } }],
      metadata: { user_id: 'user_1' },
      messages: [{ role: 'user', content: 'héllo' }],
    }),
  );

describe('a call that lets go of its parsed body (parsedCall.ts)', () => {
  it('keeps the top-level scalars at hand: reading them parses nothing again', () => {
    const call = callOf(agentBody());
    expect(call.letGo()).toBe(true);
    const before = bodiesParsedAgain();
    expect(call.topLevel('model')).toBe('anth/claude-x');
    expect(topLevelOf(call, 'max_tokens')).toBe(1024);
    expect(call.topLevel('stream')).toBe(true);
    expect(call.topLevel('temperature')).toBeNull();
    expect(call.topLevel('absent')).toBeUndefined();
    expect(bodiesParsedAgain()).toBe(before);
  });

  it('parses the bytes again, once, when a late reader asks for the whole body or a nested member', () => {
    const raw = agentBody();
    const call = callOf(raw);
    call.letGo();
    const before = bodiesParsedAgain();
    expect(call.topLevel('metadata')).toEqual({ user_id: 'user_1' });
    expect(bodiesParsedAgain()).toBe(before + 1);
    expect(call.json).toEqual(JSON.parse(raw.toString()));
    expect(call.json.tools).toEqual([{ name: 'Task', input_schema: { properties: { model: { type: 'string' } } } }]);
    expect(bodiesParsedAgain()).toBe(before + 1);
  });

  it('reads a body kept as socket chunks again, a character cut between two chunks included', () => {
    const raw = agentBody();
    const cut = raw.indexOf(Buffer.from('🤖')) + 2;
    const call = callOf([raw.subarray(0, cut), raw.subarray(cut)]);
    call.letGo();
    expect(call.json).toEqual(JSON.parse(raw.toString()));
  });

  it('never lets go of a body that was assigned: the bytes may no longer be its source', () => {
    const call = callOf(agentBody());
    const { stream: _s, ...rest } = call.json;
    call.json = rest;
    expect(call.letGo()).toBe(false);
    expect(call.json).toBe(rest);
    expect(call.topLevel('stream')).toBeUndefined();
  });

  it('a plain call (no ParsedCall) is read as it is', () => {
    expect(topLevelOf({ json: { model: 'm' } } as never, 'model')).toBe('m');
  });

  it('any object: after letting go, every top-level member and the whole body read as the first parse gave them', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }), (obj) => {
        const raw = Buffer.from(JSON.stringify(obj));
        const first = JSON.parse(raw.toString()) as Record<string, unknown>;
        const call = callOf(raw);
        call.letGo();
        for (const k of [...Object.keys(first), 'not-a-member']) expect(call.topLevel(k)).toEqual(first[k]);
        expect(call.json).toEqual(first);
      }),
      { numRuns: 200 },
    );
  });
});

describe('a call read as its top level (ParsedCall.fromBytes, jsonSkeleton.ts)', () => {
  const fieldsOf = (body: RequestBytes) => ({
    protocol: 'anthropic-messages' as const,
    endpoint: 'messages' as const,
    wire: 'anthropic' as const,
    req: {} as IncomingMessage,
    res: {} as ServerResponse,
    requestId: 'r2',
    startedAt: 0,
    startMono: 0,
    clientKeyId: null,
    body,
  });
  const errorOf = (f: () => unknown): unknown => {
    try {
      f();
    } catch (e) {
      return e;
    }
    return null;
  };

  it('reads the top level without building the body: scalars, small members, array lengths, the model span', () => {
    const raw = agentBody();
    const before = bodiesParsedAgain();
    const call = ParsedCall.fromBytes(fieldsOf(raw));
    expect(call.topLevel('model')).toBe('anth/claude-x');
    expect(call.topLevel('stream')).toBe(true);
    expect(call.topLevel('temperature')).toBeNull();
    expect(call.topLevel('metadata')).toEqual({ user_id: 'user_1' });
    expect(call.topLevel('absent')).toBeUndefined();
    expect(call.arrayLength('tools')).toBe(1);
    expect(call.arrayLength('messages')).toBe(1);
    expect(call.arrayLength('metadata')).toBe(0);
    expect(call.arrayLength('absent')).toBe(0);
    const span = call.valueSpan('model')!;
    expect(raw.toString('utf8', span.start, span.end)).toBe('"anth/claude-x"');
    expect(call.letGo()).toBe(true);
    expect(bodiesParsedAgain()).toBe(before);
    // The whole body, once, when asked.
    expect(call.json).toEqual(JSON.parse(raw.toString()));
    expect(call.json.tools).toEqual([{ name: 'Task', input_schema: { properties: { model: { type: 'string' } } } }]);
    expect(bodiesParsedAgain()).toBe(before + 1);
  });

  it('large members stay bytes until asked, then the body is parsed once', () => {
    const raw = Buffer.from(JSON.stringify({ model: 'm', system: 'x'.repeat(5000), messages: [{ role: 'user', content: 'y'.repeat(5000) }] }));
    const call = ParsedCall.fromBytes(fieldsOf(raw));
    const before = bodiesParsedAgain();
    expect(call.arrayLength('messages')).toBe(1);
    expect(bodiesParsedAgain()).toBe(before);
    expect(call.topLevel('system')).toBe('x'.repeat(5000));
    expect(bodiesParsedAgain()).toBe(before + 1);
    expect(call.topLevel('messages')).toEqual([{ role: 'user', content: 'y'.repeat(5000) }]);
    expect(bodiesParsedAgain()).toBe(before + 1);
  });

  it('a body kept as socket chunks, a character cut between two of them', () => {
    const raw = agentBody();
    const cut = raw.indexOf(Buffer.from('🤖')) + 2;
    const call = ParsedCall.fromBytes(fieldsOf([raw.subarray(0, cut), raw.subarray(cut)]));
    expect(call.topLevel('model')).toBe('anth/claude-x');
    expect(call.json).toEqual(JSON.parse(raw.toString()));
  });

  it('a body the scan does not settle is parsed whole, with the same answers and the same errors as before', () => {
    const dup = Buffer.from('{"model":"a","messages":[],"model":"b"}');
    const call = ParsedCall.fromBytes(fieldsOf(dup));
    expect(call.topLevel('model')).toBe('b');
    expect(call.valueSpan('model')).toBeNull();
    for (const bad of ['', '{"model":"a",}', '[1]', '{"a":"tab\there"}', `{"d":${'['.repeat(200)}${']'.repeat(200)}}`]) {
      const e = errorOf(() => ParsedCall.fromBytes(fieldsOf(Buffer.from(bad))));
      expect(e).toBeInstanceOf(ProxyError);
      expect(e).toEqual(errorOf(() => parseJsonObject(Buffer.from(bad))));
      expect((e as ProxyError).code).toBe('invalid_json');
    }
  });

  it('an assigned body is pinned: no span into the old bytes, the new value read', () => {
    const call = ParsedCall.fromBytes(fieldsOf(agentBody()));
    const { stream: _s, ...rest } = call.json;
    call.json = rest;
    expect(call.valueSpan('model')).toBeNull();
    expect(call.topLevel('stream')).toBeUndefined();
    expect(call.letGo()).toBe(false);
  });

  it('any object: every top-level member, array length and the whole body read as JSON.parse gives them', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }), (obj) => {
        const raw = Buffer.from(JSON.stringify(obj));
        const first = JSON.parse(raw.toString()) as Record<string, unknown>;
        const call = ParsedCall.fromBytes(fieldsOf(raw));
        for (const k of [...Object.keys(first), 'not-a-member']) {
          expect(call.arrayLength(k)).toBe(Array.isArray(first[k]) ? (first[k] as unknown[]).length : 0);
          expect(call.topLevel(k)).toEqual(first[k]);
        }
        expect(call.json).toEqual(first);
      }),
      { numRuns: 200 },
    );
  });
});

describe('BodyReads: how the next large body of a client is read (parsedCall.ts)', () => {
  it('as its top level, unless the same client and protocol last went to a translating first target', () => {
    const reads = new BodyReads();
    expect(reads.topLevel('anthropic-messages', 'k1')).toBe(true);
    reads.routed('anthropic-messages', 'k1', true);
    expect(reads.topLevel('anthropic-messages', 'k1')).toBe(false);
    // Another client, another protocol: their own.
    expect(reads.topLevel('anthropic-messages', 'k2')).toBe(true);
    expect(reads.topLevel('openai-chat', 'k1')).toBe(true);
    reads.routed('anthropic-messages', 'k1', false);
    expect(reads.topLevel('anthropic-messages', 'k1')).toBe(true);
  });

  it('remembers a bounded number of clients', () => {
    const reads = new BodyReads(3);
    for (const k of ['a', 'b', 'c']) reads.routed('openai-chat', k, true);
    expect(reads.topLevel('openai-chat', 'a')).toBe(false);
    reads.routed('openai-chat', 'd', true); // full: starts over
    expect(reads.topLevel('openai-chat', 'a')).toBe(true);
    expect(reads.topLevel('openai-chat', 'd')).toBe(false);
  });
});
