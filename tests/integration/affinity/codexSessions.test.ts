// Codex CLI's sessions (issue 20): Codex names its session in the `session-id` and `thread-id`
// headers and in the body as client_metadata.session_id and prompt_cache_key. A 4-turn Codex run
// (the openai client's Responses API, streamed, its default tools) over three connections stays
// on one of them, whichever of those it carries; plain requests are still spread.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { codexBody, codexHeaders } from '../../support/codexRequest';
import { rigPerTest } from '../resilience/support';
import { ENV, SELECTED, say, trio } from './support';

const SESSION = '019a3c5e-7b4d-7e2a-9c61-0d5e8f7a1b23';

async function codexTurn(openai: OpenAI, turn: number, headers: Record<string, string>, body: (b: Record<string, unknown>) => Record<string, unknown>): Promise<string | null> {
  const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `turn ${turn}` }] }];
  const { data, response } = await openai.responses.create(body(codexBody('anthropic/claude-x', input, SESSION, true)) as any, { headers }).withResponse();
  for await (const _ev of data as unknown as AsyncIterable<unknown>) {
    // drain the stream
  }
  return response.headers.get(SELECTED);
}

describe('Codex CLI sessions', () => {
  const { startRig } = rigPerTest();

  const shapes: [string, Record<string, string>, (b: Record<string, unknown>) => Record<string, unknown>, string][] = [
    ['its headers and body', codexHeaders(SESSION), (b) => b, 'session-id'],
    ['the thread-id header alone', { 'thread-id': SESSION }, ({ prompt_cache_key: _k, client_metadata: _m, ...b }) => b, 'thread-id'],
    ['the body alone (client_metadata)', {}, (b) => b, 'client_metadata.session_id'],
    ['the prompt cache key alone', {}, ({ client_metadata: _m, ...b }) => b, 'prompt_cache_key'],
  ];

  it.each(shapes)('a 4-turn run identified by %s stays on one connection of three', async (_label, headers, body, source) => {
    const { rig, conns } = await trio(await startRig({ env: ENV }));
    const plain = new Set<string | null>();
    for (let i = 0; i < 3; i++) plain.add((await say(rig.client)).selected);
    expect(plain.size).toBe(3);

    const openai = new OpenAI({ baseURL: `${rig.t.proxyUrl}/v1`, apiKey: rig.t.clientKey, maxRetries: 0 });
    const served: (string | null)[] = [];
    for (let turn = 1; turn <= 4; turn++) served.push(await codexTurn(openai, turn, headers, body));
    expect(new Set(served).size).toBe(1);
    expect(conns.map((c) => c.id)).toContain(served[0]);
    const entry = (await rig.t.api.listLogs({ limit: 1 })).entries[0]!;
    expect(entry.affinity).toMatchObject({ session: SESSION, source, pin: 'followed', result: 'kept' });
  });
});
