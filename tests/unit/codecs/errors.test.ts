import { describe, expect, it } from 'vitest';
import { codecFor, type UpstreamShape } from '../../../src/main/engine/codecs';
import type { ApiShape } from '../../../src/main/engine/streams/shape';
import { fixtureJson } from './support';

interface Case {
  name: string;
  upstream: UpstreamShape;
  status: number;
  body: string;
  chat?: unknown;
  anthropic?: unknown;
  responses?: unknown;
}

const cases = fixtureJson<Case[]>('errors/cases.json');

describe('upstream errors in the inbound protocol’s shape', () => {
  const rows: [string, Case, ApiShape, unknown][] = [];
  for (const c of cases) {
    if (c.chat) rows.push([`${c.name} → Chat`, c, 'openai-chat', c.chat]);
    if (c.anthropic) rows.push([`${c.name} → Anthropic`, c, 'anthropic-messages', c.anthropic]);
    if (c.responses) rows.push([`${c.name} → Responses`, c, 'openai-responses', c.responses]);
  }
  it.each(rows)('%s', (_name, c, inbound, expected) => {
    const codec = codecFor(inbound, c.upstream)!;
    expect(codec.error(c.status, c.body)).toEqual({ status: c.status, body: expected });
  });

  it('an Anthropic client gets "prompt is too long" wording for any context-length error (Claude Code compacts on it)', () => {
    const codec = codecFor('anthropic-messages', 'openai-chat')!;
    const out = codec.error(400, JSON.stringify({ error: { message: 'Input is too long for requested model.', type: 'invalid_request_error' } }));
    expect((out.body as any).error.message).toBe('prompt is too long: Input is too long for requested model.');
  });
});
