import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EAGER_MEMBER_MAX_BYTES, MAX_MEMBERS, scanSkeleton, type Skeleton } from '../../../src/main/engine/proxy/jsonSkeleton';

const DEPTH = 128;

/** The bytes at `offset` inside a larger buffer (the word reads must not assume an aligned start). */
function at(text: string | Buffer, offset = 0): Buffer {
  const raw = typeof text === 'string' ? Buffer.from(text) : text;
  const big = Buffer.alloc(raw.length + offset + 8, 0x20);
  raw.copy(big, offset);
  return big.subarray(offset, offset + raw.length);
}

/** What the skeleton says the body is: each member parsed from its span. */
function rebuilt(b: Buffer, sk: Skeleton): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, m] of sk.members) Object.defineProperty(out, k, { value: JSON.parse(b.toString('utf8', m.start, m.end)), enumerable: true, writable: true, configurable: true });
  return out;
}

/**
 * The skeleton agrees with JSON.parse of the decoded text: keys in the order an object holds them,
 * values, array lengths, the eager values. (An object puts array-index keys such as "0" first, where
 * the skeleton keeps the body's order; its members are only ever looked up by key.)
 */
function agrees(b: Buffer, sk: Skeleton): void {
  const whole = JSON.parse(b.toString('utf8')) as Record<string, unknown>;
  const fromSkeleton = rebuilt(b, sk);
  expect(Object.keys(fromSkeleton)).toEqual(Object.keys(whole));
  expect(fromSkeleton).toEqual(whole);
  for (const [k, m] of sk.members) {
    const v = whole[k];
    expect(m.length).toBe(Array.isArray(v) ? v.length : -1);
    if (m.end - m.start < EAGER_MEMBER_MAX_BYTES) expect(sk.values.get(k)).toEqual(v);
    else expect(sk.values.has(k)).toBe(false);
  }
}

/** A body JSON.parse refuses (or that is not an object) is never accepted. */
function refused(text: string | Buffer): void {
  for (const offset of [0, 1, 2, 3]) expect(scanSkeleton(at(text, offset), DEPTH)).toBeNull();
}

describe('scanSkeleton (jsonSkeleton.ts): a large body read as its top level', () => {
  it('reads an agent-shaped body: small members parsed, large ones left as spans with their lengths', () => {
    const long = 'line of code\\n\\t"quoted" — ünïcode 🤖 '.repeat(60);
    const text = JSON.stringify({
      model: 'anth/claude-x',
      max_tokens: 1024,
      stream: true,
      temperature: null,
      metadata: { user_id: 'user_1_account__session_abc' },
      system: [{ type: 'text', text: long }],
      tools: [{ name: 'Task', input_schema: { properties: { model: { type: 'string' } } } }, { name: 'Read', description: long }],
      messages: [{ role: 'user', content: long }, { role: 'assistant', content: [{ type: 'text', text: long }] }],
    });
    for (const offset of [0, 1, 2, 3]) {
      const b = at(text, offset);
      const sk = scanSkeleton(b, DEPTH)!;
      expect(sk).not.toBeNull();
      agrees(b, sk);
      expect(sk.values.get('model')).toBe('anth/claude-x');
      expect(sk.values.get('metadata')).toEqual({ user_id: 'user_1_account__session_abc' });
      expect(sk.members.get('tools')!.length).toBe(2);
      expect(sk.members.get('messages')!.length).toBe(2);
      expect(sk.values.has('messages')).toBe(false);
      const m = sk.members.get('model')!;
      expect(b.toString('utf8', m.start, m.end)).toBe('"anth/claude-x"');
    }
  });

  it('accepts what JSON allows: whitespace anywhere, every escape, numbers in every form, empty containers, deep nesting to the limit', () => {
    const ok = [
      '{}',
      ' \t\r\n{ \n "a" \t: \r [ ] , "b" : { } , "c":[[ ]] } \n',
      '{"s":"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83E\\uDD16 \\uDC00 \\u0000"}',
      '{"n":[0,-0,1,-1,10,0.5,-0.25,1e5,1E+5,1e-5,2.5E-3,123456789012345678901234567890]}',
      '{"l":[true,false,null],"k":"ünïcode — 🤖","raw":"\u00ff\u0080"}',
      `{"d":${'['.repeat(DEPTH - 1)}${']'.repeat(DEPTH - 1)}}`,
      `{"d":${'{"x":'.repeat(DEPTH - 1)}1${'}'.repeat(DEPTH - 1)}}`,
      '{"__proto__":{"a":1},"constructor":2}',
      `{"big":"${'x'.repeat(70_000)}","esc":"${'ab\\n'.repeat(20_000)}"}`,
    ];
    for (const text of ok) {
      for (const offset of [0, 1, 2, 3]) {
        const b = at(text, offset);
        const sk = scanSkeleton(b, DEPTH);
        expect(sk, text.slice(0, 60)).not.toBeNull();
        agrees(b, sk!);
      }
    }
    // Raw bytes of 0x80 and more inside strings (invalid UTF-8 included: the decoder makes U+FFFD).
    const invalidUtf8 = Buffer.concat([Buffer.from('{"s":"a'), Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]), Buffer.from('b"}')]);
    agrees(invalidUtf8, scanSkeleton(invalidUtf8, DEPTH)!);
  });

  it('refuses what JSON.parse refuses', () => {
    const bad = [
      '',
      ' ',
      '[]',
      '"s"',
      '1',
      'null',
      '{',
      '{"a"}',
      '{"a":}',
      '{"a" 1}',
      '{"a":1,}',
      '{,"a":1}',
      '{"a":1 "b":2}',
      '{"a":[1,]}',
      '{"a":[,1]}',
      '{"a":[1 2]}',
      '{"a":{"b"}}',
      '{"a":{"b":1,}}',
      '{"a":1}}',
      '{"a":1}x',
      '{"a":1}{}',
      '{"a":[}',
      '{"a":{]}',
      "{'a':1}",
      '{a:1}',
      '{"a":01}',
      '{"a":-}',
      '{"a":1.}',
      '{"a":.5}',
      '{"a":+1}',
      '{"a":1e}',
      '{"a":1e+}',
      '{"a":NaN}',
      '{"a":Infinity}',
      '{"a":tru}',
      '{"a":nul}',
      '{"a":True}',
      '{"a":undefined}',
      '{"a":"\\x41"}',
      '{"a":"\\u12"}',
      '{"a":"\\u12G4"}',
      '{"a":"\\\'"}',
      '{"a":"abc}',
      '{"a":"abc\\"}',
      '{"a":"tab\there"}',
      '{"a":"nl\nhere"}',
      `{"a":"${'x'.repeat(100)}\u0001${'y'.repeat(100)}"}`,
      `{"a":"${'x'.repeat(100)}\\q${'y'.repeat(100)}"}`,
      '{"a":1}\u0000',
      '{"a":\u00a01}',
      '\ufeff{"a":1}',
      '{"a":1/*c*/}',
    ];
    for (const text of bad) {
      let parses = true;
      try {
        const v: unknown = JSON.parse(text);
        parses = v !== null && typeof v === 'object' && !Array.isArray(v);
      } catch {
        parses = false;
      }
      expect(parses, text).toBe(false);
      refused(text);
    }
    // A byte of 0x80 or more outside a string.
    refused(Buffer.concat([Buffer.from('{"a":1'), Buffer.from([0xc2, 0xa0]), Buffer.from('}')]));
  });

  it('a control byte is found at every position and alignment of a long string', () => {
    for (let len = 1; len <= 80; len += 7) {
      for (let pos = 0; pos < len; pos++) {
        const chars = Array.from({ length: len }, () => 'a');
        chars[pos] = '\u001f';
        refused(`{"k":"${chars.join('')}"}`);
      }
    }
  });

  it('leaves to the whole parse what it does not settle: too deep, a key twice, an escaped or non-ASCII key, too many members', () => {
    expect(scanSkeleton(at(`{"d":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`), DEPTH)).toBeNull();
    expect(scanSkeleton(at('{"model":"a","x":1,"model":"b"}'), DEPTH)).toBeNull();
    expect(scanSkeleton(at('{"mod\\u0065l":"a"}'), DEPTH)).toBeNull();
    expect(scanSkeleton(at('{"clé":"a"}'), DEPTH)).toBeNull();
    const many = `{${Array.from({ length: MAX_MEMBERS + 1 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    expect(scanSkeleton(at(many), DEPTH)).toBeNull();
    const enough = `{${Array.from({ length: MAX_MEMBERS }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    agrees(at(enough), scanSkeleton(at(enough), DEPTH)!);
  });

  it('an array-index key ("0") among the members: accepted, the body\'s order kept, each member as JSON.parse reads it', () => {
    // Found by the mutated-bodies property (seed 1275622604): JSON.parse's object lists "0" first.
    const b = at('{"stream":null,"0":-1.0000491883376051e+170,"12":[1,2]}');
    const sk = scanSkeleton(b, DEPTH)!;
    expect([...sk.members.keys()]).toEqual(['stream', '0', '12']);
    agrees(b, sk);
    expect(sk.values.get('0')).toBe(-1.0000491883376051e170);
    expect(sk.members.get('12')!.length).toBe(2);
  });

  it('any JSON object: accepted exactly as JSON.parse reads it (generated values, random whitespace, any alignment)', () => {
    const space = fc.constantFrom('', ' ', '\n', '\t', '\r\n  ');
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 10 }).filter((k) => /^[\x20-\x7e]*$/.test(k) && !k.includes('\\') && !k.includes('"')), fc.jsonValue({ maxDepth: 5 }), { maxKeys: 10 }),
        space,
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        (obj, ws, offset, pretty) => {
          const text = pretty ? JSON.stringify(obj, null, 2) : `${ws}${JSON.stringify(obj)}${ws}`;
          const b = at(text, offset);
          const sk = scanSkeleton(b, DEPTH);
          expect(sk).not.toBeNull();
          agrees(b, sk!);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('never accepts a byte string JSON.parse refuses, and never disagrees with it (mutated bodies)', () => {
    const base = fc.dictionary(fc.constantFrom('model', 'messages', 'tools', 'stream', 'metadata', 'n'), fc.jsonValue({ maxDepth: 4 }), { minKeys: 1, maxKeys: 5 }).map((o) => Buffer.from(JSON.stringify(o)));
    const mutation = fc.tuple(fc.nat(), fc.constantFrom(0x00, 0x09, 0x0a, 0x1f, 0x20, 0x22, 0x2c, 0x2d, 0x2e, 0x30, 0x3a, 0x5b, 0x5c, 0x5d, 0x65, 0x6e, 0x74, 0x75, 0x7b, 0x7d, 0x80, 0xff), fc.constantFrom('set', 'insert', 'delete'));
    fc.assert(
      fc.property(base, fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.integer({ min: 0, max: 3 }), (raw, edits, offset) => {
        const bytes = [...raw];
        for (const [p, byte, op] of edits) {
          const i = bytes.length ? p % bytes.length : 0;
          if (op === 'set') bytes[i] = byte;
          else if (op === 'insert') bytes.splice(i, 0, byte);
          else bytes.splice(i, 1);
        }
        const b = at(Buffer.from(bytes), offset);
        const sk = scanSkeleton(b, DEPTH);
        if (sk === null) return;
        // Accepted: JSON.parse must accept it too, as an object with the same members.
        agrees(b, sk);
      }),
      { numRuns: 3000 },
    );
  });
});
