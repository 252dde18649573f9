// JSON bounds: depth, prototype keys, and plain-JSON-within-limits checks, and the contract's
// boundary (shared by IPC and HTTP) refusing what they catch with a field-named 400.
import { describe, expect, it } from 'vitest';
import { parseInput } from '../../../src/shared/contract';
import { jsonTooDeep, jsonValueProblem, MANAGEMENT_JSON_MAX_DEPTH, prototypeKeyPath } from '../../../src/shared/jsonBounds';

const nest = (depth: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? { k: v } : [v];
  return v;
};

describe('jsonTooDeep', () => {
  it('counts objects and arrays, not scalars, and stops at the limit', () => {
    expect(jsonTooDeep(1, 0)).toBe(false);
    expect(jsonTooDeep({}, 0)).toBe(true);
    expect(jsonTooDeep(nest(5), 5)).toBe(false);
    expect(jsonTooDeep(nest(6), 5)).toBe(true);
    // A value far too deep to serialise is judged without overflowing the stack.
    expect(jsonTooDeep(JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`), 128)).toBe(true);
  });

  it('treats a cycle as too deep', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(jsonTooDeep(a, 32)).toBe(true);
  });
});

describe('prototypeKeyPath', () => {
  it('finds __proto__, constructor and prototype as own keys at any depth', () => {
    expect(prototypeKeyPath(JSON.parse('{"a":[{"__proto__":{}}]}'), 10)).toEqual(['a', '0', '__proto__']);
    expect(prototypeKeyPath({ x: { constructor: 1 } }, 10)).toEqual(['x', 'constructor']);
    expect(prototypeKeyPath({ prototype: 1 }, 10)).toEqual(['prototype']);
    expect(prototypeKeyPath({ a: { b: 'constructor' } }, 10)).toBeNull();
  });
});

describe('jsonValueProblem', () => {
  const limits = { maxDepth: 3, maxChars: 100 };
  it('accepts plain JSON within the limits', () => {
    expect(jsonValueProblem({ a: [1, 'x', null, true], b: { c: 2 } }, limits)).toBeNull();
    expect(jsonValueProblem({ left: undefined }, limits)).toBeNull();
  });
  it.each([
    [{ a: { b: { c: {} } } }, 'nests deeper than 3 levels'],
    [{ s: 'x'.repeat(200) }, 'larger than 100 characters'],
    [{ s: '"'.repeat(60) }, 'larger than 100 characters'],
    [{ n: Number.NaN }, 'NaN or Infinity'],
    [{ d: new Date(0) }, 'not plain JSON'],
    [{ m: new Map() }, 'not plain JSON'],
    [{ b: 1n }, 'not plain JSON'],
    [{ f: () => 1 }, 'not plain JSON'],
    [JSON.parse('{"__proto__":{"x":1}}'), 'key named "__proto__"'],
  ])('refuses %o (%s)', (value, problem) => {
    expect(jsonValueProblem(value, limits)).toContain(problem);
  });
});

describe('the contract boundary (IPC and HTTP)', () => {
  it('refuses a prototype key anywhere in the input, naming its path', () => {
    const r = parseInput('patchSettings', JSON.parse('{"patch":{"logs":{"__proto__":{"retentionDays":3}}}}'));
    expect(r).toEqual({
      ok: false,
      error: { code: 'invalid_input', field: 'logs.__proto__', message: 'logs.__proto__: a key named "__proto__" is not allowed' },
    });
    const c = parseInput('createConnection', { name: 'x', kind: 'local', providerSpecificData: { constructor: 1 } });
    expect(c).toMatchObject({ ok: false, error: { field: 'providerSpecificData.constructor' } });
  });

  it('refuses a null settings patch naming the body', () => {
    for (const name of ['patchSettings', 'patchResilience'] as const) {
      expect(parseInput(name, { patch: null })).toMatchObject({ ok: false, error: { code: 'invalid_input', field: '(body)' } });
    }
  });

  it('refuses input nested deeper than the management limit', () => {
    const r = parseInput('createConnection', { name: 'x', kind: 'local', providerSpecificData: { deep: nest(MANAGEMENT_JSON_MAX_DEPTH + 5) } });
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_input', message: `nests deeper than ${MANAGEMENT_JSON_MAX_DEPTH} levels` } });
  });

  it('names providerSpecificData when it is too deep or too large', () => {
    const deep = parseInput('createConnection', { name: 'x', kind: 'local', providerSpecificData: { a: nest(10) } });
    expect(deep).toMatchObject({ ok: false, error: { field: 'providerSpecificData', message: 'providerSpecificData: nests deeper than 8 levels' } });
    const big = parseInput('updateConnection', { id: 'c1', patch: { providerSpecificData: { note: 'x'.repeat(70_000) } } });
    expect(big).toMatchObject({ ok: false, error: { field: 'providerSpecificData' } });
    expect(parseInput('createConnection', { name: 'x', kind: 'local', providerSpecificData: { lowPriorityMode: true } }).ok).toBe(true);
  });
});
