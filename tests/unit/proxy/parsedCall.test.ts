import type { IncomingMessage, ServerResponse } from 'node:http';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonObject } from '../../../src/main/engine/proxy/body';
import { bodiesParsedAgain, ParsedCall, topLevelOf } from '../../../src/main/engine/proxy/parsedCall';
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
