// Property-based fuzzing of the proxy's inputs (fast-check, seeded and bounded): arbitrary model
// ids, bodies and headers sent to the running proxy on every endpoint, with combos and wildcard
// mappings in place. Bad input is answered with a 4xx in the endpoint's shape — never a 500 —
// and every request is answered (the client's timeouts are only a safety net against a hang).
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from '../../support/fakeUpstream';
import { startTestEngine, type TestEngine } from '../../support/harness';

const SEED = 21_023;
const PATHS = ['/v1/messages', '/v1/messages/count_tokens', '/v1/chat/completions', '/v1/responses'] as const;
type Path = (typeof PATHS)[number];

/** Model ids of every kind: real-looking, wildcard-bait, control and broken characters, emoji, very long. */
const modelId = fc.oneof(
  fc.constantFrom('claude-x', 'gpt-listed', 'anthropic/claude-y', 'combo/pool', 'claude-3-5-haiku-latest', '*', '?', ''),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom('a', '-', '*', '\r', '\n', '\u0000', '🚀', 'é', '%', ' '), maxLength: 30 }),
  fc.nat({ max: 3_000 }).map((n) => `claude-${'a-'.repeat(n)}latest`),
  fc.nat({ max: 120_000 }).map((n) => 'm'.repeat(n)),
);

const PRINTABLE = [...Array(95)].map((_, i) => String.fromCharCode(32 + i));
const headerValue = fc.string({ unit: fc.constantFrom(...PRINTABLE), maxLength: 60 }).map((s) => s.trim());
const headerName = fc.constantFrom(
  'anthropic-version',
  'anthropic-beta',
  'x-session-id',
  'x-switchyard-session',
  'x-switchyard-lease-owner',
  'x-switchyard-lease-generation',
  'session_id',
  'x-stainless-retry-count',
  'accept',
  'x-whatever',
);

function send(t: TestEngine, agent: Agent, path: Path, body: string, headers: Record<string, string> = {}) {
  return request(`${t.proxyUrl}${path}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { ...headers, 'content-type': 'application/json', 'x-api-key': t.clientKey },
    body,
  }).then(async (res) => ({ status: res.statusCode, text: await res.body.text() }));
}

/** The error shape of the endpoint (Anthropic's for /v1/messages*, OpenAI's otherwise). */
function expectShaped(path: Path, status: number, text: string, what: string): void {
  expect(status, what).toBeLessThan(500);
  if (status < 400) return;
  const j = JSON.parse(text);
  if (path.startsWith('/v1/messages')) expect(j, what).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
  else expect(j, what).toMatchObject({ error: { type: expect.any(String), message: expect.any(String) } });
  expect(text, what).not.toMatch(/\n\s+at /);
}

describe('proxy under arbitrary input', () => {
  let fake: FakeUpstream;
  let t: TestEngine;
  // Safety net only: a request the proxy never answers fails here instead of hanging the run.
  const agent = new Agent({ headersTimeout: 30_000, bodyTimeout: 30_000 });

  beforeAll(async () => {
    fake = await FakeUpstream.start();
    t = await startTestEngine();
    await t.addConnection({ name: 'Claude A', kind: 'anthropic', baseUrl: fake.anthropicUrl, secret: 'sk-ant-upstream-fuzz-aaaa' });
    await t.addConnection({ name: 'OpenAI A', kind: 'openai', baseUrl: fake.openaiUrl, secret: 'sk-openai-upstream-fuzz-a', models: ['gpt-listed'] });
    await t.api.createCombo({ name: 'pool', targets: [{ provider: 'anthropic', model: 'claude-x' }] });
    for (const pattern of ['*-*-*-latest', `${'*a'.repeat(7)}*`, 'claude-?-*-*', '*/*/*']) await t.api.createModelMapping({ pattern, combo: 'pool' });
  });
  afterAll(async () => {
    await agent.close();
    await t.stop();
    await fake.close();
  });

  it('arbitrary model ids: a 200 or a typed 4xx on every endpoint', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS), modelId, async (path, model) => {
        const body = path === '/v1/responses' ? { model, input: 'hi' } : { model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
        const r = await send(t, agent, path, JSON.stringify(body), { 'anthropic-version': '2023-06-01' });
        expectShaped(path, r.status, r.text, `${path} ${JSON.stringify(model).slice(0, 200)}`);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('arbitrary bodies: JSON of any shape, with and without a model, and bytes that are not JSON', async () => {
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
      fc.tuple(fc.constantFrom('claude-x', 'gpt-listed', 'combo/pool'), fc.dictionary(fc.constantFrom('messages', 'input', 'stream', 'max_tokens', 'tools', 'system', 'metadata', 'model', 'stream_options', 'background'), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 })).map(
        ([model, rest]) => JSON.stringify({ model, ...rest }),
      ),
      fc.string({ unit: 'binary', maxLength: 200 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS), body, async (path, text) => {
        const r = await send(t, agent, path, text, { 'anthropic-version': '2023-06-01' });
        expectShaped(path, r.status, r.text, `${path} ${text.slice(0, 300)}`);
      }),
      { seed: SEED, numRuns: 250 },
    );
  });

  it('arbitrary headers on a good request: never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATHS), fc.dictionary(headerName, headerValue, { maxKeys: 5 }), async (path, headers) => {
        const body = path === '/v1/responses' ? { model: 'gpt-listed', input: 'hi' } : { model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
        const r = await send(t, agent, path, JSON.stringify(body), headers);
        expectShaped(path, r.status, r.text, `${path} ${JSON.stringify(headers)}`);
      }),
      { seed: SEED, numRuns: 120 },
    );
    // The proxy still serves afterwards.
    const ok = await send(t, agent, '/v1/messages', JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }), { 'anthropic-version': '2023-06-01' });
    expect(ok.status).toBe(200);
  });
});
