import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endOfString, topLevelValueSpans } from '../../../src/main/engine/proxy/jsonScan';

const KEY = Buffer.from('"model"');
const spansOf = (text: string) => topLevelValueSpans(Buffer.from(text), KEY);
const valuesOf = (text: string) => {
  const b = Buffer.from(text);
  return topLevelValueSpans(b, KEY)?.map(([s, e]) => b.subarray(s, e).toString());
};

describe('top-level value spans (the model rewrite finds its value without parsing)', () => {
  it('finds the top-level key wherever it stands, not a nested one or a string that reads "model"', () => {
    expect(valuesOf('{"model":"a/x","messages":[]}')).toEqual(['"a/x"']);
    expect(valuesOf('{"messages":[{"role":"user","content":"say \\"model\\""}],"model":"a/x"}')).toEqual(['"a/x"']);
    // Claude Code's Task tool names a `model` parameter: the raw key occurs three times here.
    const claude = JSON.stringify({
      model: 'anth/opus',
      tools: [{ name: 'Task', input_schema: { type: 'object', properties: { model: { type: 'string', enum: ['model', 'sonnet'] } } } }],
      metadata: { model: 'x' },
      messages: [{ role: 'user', content: [{ type: 'text', text: '"model": "y"' }] }],
    });
    expect(valuesOf(claude)).toEqual(['"anth/opus"']);
  });

  it('reads pretty-printed text, values of every kind, and escapes before a closing quote', () => {
    const text = '{\n  "a" : 1.5e3 ,\n  "b": [true, null, {"c": "}]"}],\n  "s": "x\\\\",\n  "model" :  "p/m"  ,\n  "z": false\n}';
    expect(valuesOf(text)).toEqual(['"p/m"']);
    const [start, end] = spansOf(text)![0]!;
    expect(text.slice(start, end)).toBe('"p/m"');
    expect(valuesOf('{"model":{"id":"x"}}')).toEqual(['{"id":"x"}']);
    expect(valuesOf('{"model":42}')).toEqual(['42']);
    expect(valuesOf('{}')).toEqual([]);
  });

  it('reports each occurrence of a repeated key, and ignores an escaped spelling', () => {
    expect(valuesOf('{"model":"a","x":1,"model":"b"}')).toEqual(['"a"', '"b"']);
    expect(valuesOf('{"mod\\u0065l":"a"}')).toEqual([]);
  });

  it('answers null for what is not an object, or is cut short', () => {
    for (const t of ['[1]', '"model"', '', '{"a":1', '{"model" "a"}', '{"model":"a" "b":1,"model":2}', '{"model":', '{"a" 1}']) expect(spansOf(t)).toBeNull();
    // Past the last occurrence of the key's bytes, the rest is not read.
    expect(valuesOf('{"model":"a", and then anything')).toEqual(['"a"']);
  });

  it('finds the end of a string past long runs and escaped quotes, counting backslashes from where it looks', () => {
    const long = 'x'.repeat(200);
    for (const inner of [long, `${long}\\"${long}`, `${long}\\\\`, `\\\\${long}`, `${'\\\\'.repeat(40)}`, `${long}\\\\\\"${long}`, '\\\\"'.slice(0, 2), 'a\\"', '\\"', `${'x'.repeat(31)}\\"y`, `${'x'.repeat(32)}\\\\`]) {
      const s = `"${inner}"`;
      expect(endOfString(Buffer.from(`${s},`), 0), inner.slice(0, 20)).toBe(s.length);
    }
    expect(endOfString(Buffer.from('"abc'), 0)).toBe(-1);
    expect(endOfString(Buffer.from(`"${long}\\"`), 0)).toBe(-1);
  });

  it('on any object, in any layout, the span holds exactly the top-level value (property)', () => {
    const keyName = fc.constantFrom('model', 'messages', 'a', 'mödel', '"model"', 'tools', '');
    const obj = fc.dictionary(keyName, fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 });
    fc.assert(
      fc.property(obj, fc.jsonValue({ maxDepth: 3 }), fc.nat(6), fc.constantFrom(undefined, 0, 1, 2, '\t'), (o, model, at, indent) => {
        const entries = Object.entries(o).filter(([k]) => k !== 'model' && k !== '__proto__');
        entries.splice(Math.min(at, entries.length), 0, ['model', model]);
        // A nested "model" too, so that the raw key occurs more than once.
        entries.push(['nested', { model: 'inner', list: ['model'] }]);
        const value = Object.fromEntries(entries);
        const text = JSON.stringify(value, null, indent);
        const b = Buffer.from(text);
        const spans = topLevelValueSpans(b, KEY);
        expect(spans).toHaveLength(1);
        const [s, e] = spans![0]!;
        expect(JSON.parse(b.subarray(s, e).toString())).toEqual(JSON.parse(JSON.stringify(model)));
        // Splicing another value there changes that member only.
        const spliced = JSON.parse(Buffer.concat([b.subarray(0, s), Buffer.from('"new"'), b.subarray(e)]).toString()) as Record<string, unknown>;
        expect(spliced).toEqual({ ...JSON.parse(text), model: 'new' });
      }),
      { numRuns: 400 },
    );
  });
});
