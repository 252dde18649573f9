import { describe, expect, it } from 'vitest';
import { parseJsonObject, rewriteModel, SPLICE_IN_PARTS_MIN_BYTES } from '../../../src/main/engine/proxy/body';
import { ProxyError } from '../../../src/main/engine/proxy/errors';
import { estimateInputTokens } from '../../../src/main/engine/proxy/requestRecord';

/** The rewrite as the attempt calls it: the body's model, and the parsed body for a re-serialisation. */
const rewrite = (raw: Buffer | readonly Buffer[], parsed: Record<string, unknown>, model: string) => rewriteModel(raw, parsed.model, model, () => parsed);

describe('request bodies', () => {
  it('rejects non-objects and malformed JSON with a typed 400', () => {
    for (const raw of ['', 'null', '[1]', '"x"', '{"a":']) {
      const err = (() => {
        try {
          parseJsonObject(Buffer.from(raw));
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(ProxyError);
      expect((err as ProxyError).status).toBe(400);
      expect((err as ProxyError).code).toBe('invalid_json');
    }
  });

  it('splices the new model into the raw bytes and leaves everything else byte-identical', () => {
    const raw = Buffer.from('{"model" : "glm/glm-4.6","messages":[{"role":"user","content":"keep\\u00e9 \\"quoted\\""}],"stream":true}');
    const out = rewrite(raw, parseJsonObject(raw), 'glm-4.6');
    expect(out.toString()).toBe('{"model" : "glm-4.6","messages":[{"role":"user","content":"keep\\u00e9 \\"quoted\\""}],"stream":true}');
  });

  it('splices a large body as three parts of the original memory (no copy), a small one as one buffer', () => {
    const big = Buffer.from(JSON.stringify({ model: 'p/m', messages: [{ role: 'user', content: 'é'.repeat(SPLICE_IN_PARTS_MIN_BYTES) }] }));
    const parts = rewrite(big, parseJsonObject(big), 'glm-4.6');
    expect(Array.isArray(parts)).toBe(true);
    const list = parts as readonly Buffer[];
    expect(list).toHaveLength(3);
    expect(list[0]!.buffer).toBe(big.buffer);
    expect(list[2]!.buffer).toBe(big.buffer);
    expect(Buffer.concat(list).equals(Buffer.from(big.toString().replace('"model":"p/m"', '"model":"glm-4.6"')))).toBe(true);
    const small = Buffer.from(JSON.stringify({ model: 'p/m', messages: [{ role: 'user', content: 'x'.repeat(SPLICE_IN_PARTS_MIN_BYTES - 100) }] }));
    expect(small.length).toBeLessThan(SPLICE_IN_PARTS_MIN_BYTES);
    const one = rewrite(small, parseJsonObject(small), 'glm-4.6');
    expect(Buffer.isBuffer(one)).toBe(true);
  });

  it('splices the top-level value when "model" also names nested members (Claude Code\'s tool schemas do)', () => {
    const raw = Buffer.from('{"metadata":{"model":"x"},"tools":[{"input_schema":{"properties":{"model":{"enum":["model"]}}}}],\n "model" : "p/m", "n": 1.50}');
    const out = rewrite(raw, parseJsonObject(raw), 'm');
    // Byte for byte but the value: the layout and the number's spelling show it was not re-serialised.
    expect(out.toString()).toBe(raw.toString().replace('"p/m"', '"m"'));
  });

  it('re-serialises when the top-level key is repeated or escaped, so that the value the parse saw is the one replaced', () => {
    for (const text of ['{"model":"p/x","a":1,"model":"p/m"}', '{"mod\\u0065l":"p/m"}', '{"model":"p/x","mod\\u0065l":"p/m"}']) {
      const raw = Buffer.from(text);
      const parsed = parseJsonObject(raw);
      expect(parsed.model).toBe('p/m');
      expect(JSON.parse(rewrite(raw, parsed, 'm').toString())).toEqual({ ...parsed, model: 'm' });
    }
  });

  it('takes a plainly written value as the parsed one only when its bytes cannot spell anything else', () => {
    // The plain key's value reads, byte for byte in Latin-1, as the escaped key's value the parse
    // kept (a backslash escape; UTF-8 bytes read one by one): the value the parse saw must still be
    // the one replaced, so the body is re-serialised.
    for (const text of ['{"model":"a\\nb","mod\\u0065l":"a\\\\nb"}', '{"model":"é","mod\\u0065l":"Ã©"}']) {
      const raw = Buffer.from(text);
      const parsed = parseJsonObject(raw);
      // The premise: the plain value's bytes, read one character each, are the value the parse kept.
      expect(raw.toString('latin1', 10, raw.indexOf('"', 10))).toBe(parsed.model);
      const out = JSON.parse(rewrite(raw, parsed, 'm').toString()) as Record<string, unknown>;
      expect(out.model).toBe('m');
    }
    // A name with an escape, or outside ASCII, written once: spliced, byte for byte but the value.
    for (const text of ['{"model":"p\\/m","n":1.50}', '{"model":"modèle-😀","n":1.50}', '{"model":"p/m","n":1.50}']) {
      const raw = Buffer.from(text);
      const out = rewrite(raw, parseJsonObject(raw), 'glm-4.6');
      expect(Buffer.isBuffer(out)).toBe(true);
      expect(out.toString()).toBe(text.replace(/"model":"[^"]*"/, '"model":"glm-4.6"'));
    }
    // A small body read in chunks (joined through the reused scratch buffer): one buffer of its own.
    const chunks = [Buffer.from('{"mo'), Buffer.from('del":"p/m","n":'), Buffer.from('1.50}')];
    const out = rewrite(chunks, parseJsonObject(chunks), 'ü');
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(out.toString()).toBe('{"model":"ü","n":1.50}');
    rewrite([Buffer.from('{"model":"p/q",'), Buffer.from('"x":"overwrite the scratch"}')], { model: 'p/q', x: 'overwrite the scratch' }, 'z');
    expect(out.toString()).toBe('{"model":"ü","n":1.50}');
  });

  it('reads a body kept as socket chunks: the parse, and a rewrite whose parts are views of the chunks', () => {
    const text = JSON.stringify({ model: 'p/m', system: 'Claude — 🤖', messages: [{ role: 'user', content: 'é'.repeat(SPLICE_IN_PARTS_MIN_BYTES) }] });
    const whole = Buffer.from(text);
    for (const at of [[1], [5, 6, 7], [12, 13, 14, 15], [whole.length - 3]]) {
      // Cut inside the key, inside the value, inside a multi-byte character.
      const chunks = [0, ...at].map((from, i) => whole.subarray(from, [...at, whole.length][i]));
      const parsed = parseJsonObject(chunks);
      expect(parsed).toEqual(JSON.parse(text));
      const parts = rewrite(chunks, parsed, 'glm-4.6') as readonly Buffer[];
      expect(Array.isArray(parts)).toBe(true);
      expect(Buffer.concat(parts).toString()).toBe(text.replace('"model":"p/m"', '"model":"glm-4.6"'));
      for (const p of parts) if (p.toString() !== '"glm-4.6"') expect(p.buffer).toBe(whole.buffer);
    }
  });

  it('estimates prompt tokens at about four characters each', () => {
    const n = estimateInputTokens({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(4000) }] });
    expect(n).toBeGreaterThanOrEqual(1000);
    expect(n).toBeLessThan(1100);
  });
});
