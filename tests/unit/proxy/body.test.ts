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
