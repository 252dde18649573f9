import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DENSITY_WINDOW_BYTES, DENSITY_WINDOWS, denseInNonAscii, parseUtf8Json } from '../../../src/main/engine/proxy/utf8Json';

/** What the proxy used to do, and what parseUtf8Json must always equal. */
const reference = (b: Buffer) => JSON.parse(b.toString('utf8')) as unknown;

function outcome(f: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: f() };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

const same = (b: Buffer) => expect(outcome(() => parseUtf8Json(b))).toEqual(outcome(() => reference(b)));

/** An array holding the JSON text and enough ASCII to make its non-ASCII bytes sparse (the Latin-1 parse). */
const sparse = (json: Buffer) => {
  const b = Buffer.concat([Buffer.from('['), json, Buffer.from(`,"${'x'.repeat(Math.max(json.length * 20, 8192))}"]`)]);
  expect(denseInNonAscii(b)).toBe(false);
  return b;
};

/** Both paths: the text as it is (often dense: decoded first) and padded to sparse. */
const bothWays = (json: Buffer) => {
  same(json);
  same(sparse(json));
};

/** JSON text with every character of 0x80 or more escaped, as Python's json.dumps writes it. */
const asciiOnly = (text: string) => text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

describe('JSON.parse of UTF-8 bytes without decoding the whole text first', () => {
  it('gives the decoded parse for an agent-shaped body with a few non-ASCII characters', () => {
    const body = {
      model: 'anth/opus',
      system: [{ type: 'text', text: 'You are Claude — an agent 🤖. Use tools → report…' }],
      tools: [{ name: 'Task', description: 'x ≤ y × z – done', input_schema: { properties: { model: { type: 'string' } } } }],
      messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'plain ASCII '.repeat(500) }] }, { role: 'assistant', content: 'módulo 日本語' }],
    };
    const b = Buffer.from(JSON.stringify(body));
    expect(parseUtf8Json(b)).toEqual(body);
    // A value that is itself one string.
    expect(parseUtf8Json(Buffer.from(`"é${'x'.repeat(8192)}"`))).toBe(`é${'x'.repeat(8192)}`);
  });

  it('calls a text dense when most of its sampled windows hold a non-ASCII byte', () => {
    const line = (i: number) => `Step ${i}: read "src/módulo-${i}.ts" — 日本語 — then report.\n`;
    const conversation = Buffer.from(JSON.stringify({ messages: Array.from({ length: 400 }, (_, i) => line(i)) }));
    expect(denseInNonAscii(conversation)).toBe(true);
    // Claude Code's shape: a prompt and tool descriptions with a few, then ASCII tool results.
    const agent = Buffer.from(JSON.stringify({ system: line(0).repeat(40), messages: Array.from({ length: 200 }, (_, i) => `export const f${i} = 1;\n`.repeat(20)) }));
    expect(denseInNonAscii(agent)).toBe(false);
    expect(denseInNonAscii(Buffer.from('{"a":"x"}'))).toBe(false);
    // Up to the windows' total size, any non-ASCII byte makes the whole text dense.
    expect(denseInNonAscii(Buffer.from(`{"a":"é${'x'.repeat(DENSITY_WINDOWS * DENSITY_WINDOW_BYTES - 20)}"}`))).toBe(true);
    // The last window reaches the text's end.
    const tail = Buffer.alloc(DENSITY_WINDOWS * DENSITY_WINDOW_BYTES * 4, 0x78);
    for (let w = 0; w < DENSITY_WINDOWS; w++) tail[Math.min(tail.length - 1, w * Math.floor((tail.length - DENSITY_WINDOW_BYTES) / (DENSITY_WINDOWS - 1)) + DENSITY_WINDOW_BYTES - 1)] = 0xc3;
    expect(denseInNonAscii(tail)).toBe(true);
  });

  it('takes the decoded path where an escape makes a character of 0x80 or more, or a key needs decoding; mends a __proto__ member', () => {
    // A raw é next to an escaped one, which a Latin-1 parse could not tell apart.
    bothWays(Buffer.from('{"a":"é\\u00e9"}'));
    bothWays(Buffer.from('{"a":"é","b":"\\u0080"}'));
    bothWays(Buffer.from('{"a":"é","b":"\\ud83d\\ude80 🚀"}'));
    bothWays(Buffer.from('{"clé":"valeur","k":"x"}'));
    bothWays(Buffer.from('{"__proto__":"é","k":{"__proto__":["ü"]}}'));
    const v = (parseUtf8Json(sparse(Buffer.from('{"__proto__":"é"}'))) as Record<string, unknown>[])[0]!;
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toBe('é');
    // An escaped backslash before "u00e9" is no escape, but it is safe to take the slow path.
    bothWays(Buffer.from('{"a":"\\\\u00e9 é"}'));
    // Nesting deeper than the walk goes.
    bothWays(Buffer.from(`${'['.repeat(300)}"é"${']'.repeat(300)}`));
  });

  it('turns invalid UTF-8 into U+FFFD as the decoder does, sequences cut by a quote or an escape included', () => {
    for (const bytes of [[0xc3], [0xe2, 0x80], [0xf0, 0x9f, 0x9a], [0xff], [0xc3, 0x5c, 0x6e], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0x80, 0x80]]) {
      bothWays(Buffer.concat([Buffer.from('{"a":"x'), Buffer.from(bytes), Buffer.from('","b":["'), Buffer.from(bytes), Buffer.from('"]}')]));
    }
  });

  it('fails as JSON.parse of the decoded text fails, with the same message', () => {
    for (const t of ['{"a":é}', '{"a":"é"', 'é', '{"a":"é",}', '\ufeff{"a":"é"}', '{"a":"é"} x', '']) {
      same(Buffer.from(t));
      same(Buffer.from(`${t}${' '.repeat(200)}`));
    }
    same(Buffer.from([0x7b, 0xff, 0x7d]));
  });

  it('equals the decoded parse for any JSON value, raw or escaped, and for any bytes inside a string (property)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 30 });
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('v'), { maxLength: 4 }), fc.dictionary(text, tie('v'), { maxKeys: 4 })),
    })).v;
    fc.assert(
      fc.property(value, fc.boolean(), (v, escape) => {
        const json = JSON.stringify(v);
        bothWays(Buffer.from(escape ? asciiOnly(json) : json));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }).map((s) => Buffer.from(s)), fc.uint8Array({ minLength: 1, maxLength: 4 }).map((a) => Buffer.from(a))), { maxLength: 6 }), (parts) => {
        // Arbitrary bytes (quotes and backslashes escaped) inside a string value and a key.
        const inner = Buffer.concat(parts).map((byte) => (byte < 0x20 || byte === 0x22 || byte === 0x5c ? 0x20 : byte));
        bothWays(Buffer.concat([Buffer.from('{"k":"'), Buffer.from(inner), Buffer.from('","'), Buffer.from(inner), Buffer.from('":1}')]));
      }),
      { numRuns: 500 },
    );
  });
});
