import { describe, expect, it } from 'vitest';
import { parseJsonObject, rewriteModel, SPLICE_IN_PARTS_MIN_BYTES } from '../../../src/main/engine/proxy/body';
import { ProxyError } from '../../../src/main/engine/proxy/errors';
import { estimateInputTokens } from '../../../src/main/engine/proxy/requestRecord';

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
    const out = rewriteModel(raw, parseJsonObject(raw), 'glm-4.6');
    expect(out.toString()).toBe('{"model" : "glm-4.6","messages":[{"role":"user","content":"keep\\u00e9 \\"quoted\\""}],"stream":true}');
  });

  it('splices a large body as three parts of the original memory (no copy), a small one as one buffer', () => {
    const big = Buffer.from(JSON.stringify({ model: 'p/m', messages: [{ role: 'user', content: 'é'.repeat(SPLICE_IN_PARTS_MIN_BYTES) }] }));
    const parts = rewriteModel(big, parseJsonObject(big), 'glm-4.6');
    expect(Array.isArray(parts)).toBe(true);
    const list = parts as readonly Buffer[];
    expect(list).toHaveLength(3);
    expect(list[0]!.buffer).toBe(big.buffer);
    expect(list[2]!.buffer).toBe(big.buffer);
    expect(Buffer.concat(list).equals(Buffer.from(big.toString().replace('"model":"p/m"', '"model":"glm-4.6"')))).toBe(true);
    const small = Buffer.from(JSON.stringify({ model: 'p/m', messages: [{ role: 'user', content: 'x'.repeat(SPLICE_IN_PARTS_MIN_BYTES - 100) }] }));
    expect(small.length).toBeLessThan(SPLICE_IN_PARTS_MIN_BYTES);
    const one = rewriteModel(small, parseJsonObject(small), 'glm-4.6');
    expect(Buffer.isBuffer(one)).toBe(true);
  });

  it('re-serialises when "model" appears more than once in the bytes', () => {
    const raw = Buffer.from('{"metadata":{"model":"x"},"model":"p/m"}');
    const out = JSON.parse(rewriteModel(raw, parseJsonObject(raw), 'm').toString());
    expect(out).toEqual({ metadata: { model: 'x' }, model: 'm' });
  });

  it('estimates prompt tokens at about four characters each', () => {
    const n = estimateInputTokens({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(4000) }] });
    expect(n).toBeGreaterThanOrEqual(1000);
    expect(n).toBeLessThan(1100);
  });
});
