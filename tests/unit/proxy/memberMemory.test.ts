import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REMEMBERED_MIN_BYTES, rememberedBytesReused, scanSkeleton, type RememberedValue, type Skeleton } from '../../../src/main/engine/proxy/jsonSkeleton';
import { MemberMemory, VALUES_PER_KEY } from '../../../src/main/engine/proxy/memberMemory';

const DEPTH = 128;

/** A long text with escapes, quotes and non-ASCII characters, as agents' messages hold. */
const text = (seed: number, n = 300) => `line ${seed}: "quoted" \\ path\\to — ünïcode 🤖\n\t`.repeat(Math.ceil(n / 40)).slice(0, n);

function agentBody(turns: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const messages: unknown[] = [];
  for (let t = 0; t < turns; t++) messages.push({ role: t % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: text(t) }] });
  return {
    model: 'anth/claude-x',
    max_tokens: 1024,
    system: [{ type: 'text', text: text(-1, 2000) }],
    tools: [{ name: 'Read', description: text(-2, 1500), input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
    messages,
    metadata: { user_id: 'user_1_account__session_abc' },
    ...extra,
  };
}

const bytes = (o: unknown) => Buffer.from(JSON.stringify(o));

/** Same answer as a scan without memory: null for null, else the same members, spans, lengths and parsed values. */
function sameAsFresh(b: Buffer, got: Skeleton | null): void {
  const fresh = scanSkeleton(b, DEPTH);
  if (fresh === null) {
    expect(got).toBeNull();
    return;
  }
  expect(got).not.toBeNull();
  expect([...got!.members]).toEqual([...fresh.members]);
  expect([...got!.values]).toEqual([...fresh.values]);
}

describe('scanSkeleton with remembered members (memberMemory.ts): what an earlier turn checked is not checked again', () => {
  it('a body sent again is read from memory, with the same answer as a full scan', () => {
    const memory = new MemberMemory();
    const recall = memory.of('anthropic-messages', 'key-1');
    const b = bytes(agentBody(12));
    sameAsFresh(b, scanSkeleton(b, DEPTH, recall));
    const before = rememberedBytesReused();
    const again = Buffer.from(b); // other memory, same bytes
    sameAsFresh(again, scanSkeleton(again, DEPTH, recall));
    const sk = scanSkeleton(again, DEPTH)!;
    // system, tools and messages: every large member came from memory.
    const large = [...sk.members.values()].filter((m) => m.end - m.start >= REMEMBERED_MIN_BYTES).reduce((n, m) => n + m.end - m.start, 0);
    expect(rememberedBytesReused() - before).toBe(large);
  });

  it('a conversation grown by a turn: its earlier messages come from memory, the new ones are checked', () => {
    const memory = new MemberMemory();
    const recall = memory.of('anthropic-messages', 'key-1');
    scanSkeleton(bytes(agentBody(10)), DEPTH, recall);
    const grown = bytes(agentBody(12));
    const before = rememberedBytesReused();
    const sk = scanSkeleton(grown, DEPTH, recall);
    sameAsFresh(grown, sk);
    expect(sk!.members.get('messages')!.length).toBe(12);
    const reused = rememberedBytesReused() - before;
    const m = sk!.members.get('messages')!;
    const tenth = grown.indexOf(JSON.stringify(text(10)).slice(0, 20), m.start);
    // At least the first nine messages (the tenth's start is where the old array ended) and system/tools.
    expect(reused).toBeGreaterThan(tenth - m.start);
  });

  it('what follows a remembered prefix is checked: an invalid byte there is refused as a full scan refuses it', () => {
    const memory = new MemberMemory();
    const recall = memory.of('anthropic-messages', 'key-1');
    scanSkeleton(bytes(agentBody(10)), DEPTH, recall);
    const grown = JSON.stringify(agentBody(12));
    const at = grown.lastIndexOf('"text":"') + 9;
    for (const bad of ['\u0001', '\\x', '",]']) {
      const b = Buffer.from(grown.slice(0, at) + bad + grown.slice(at));
      expect(() => JSON.parse(b.toString())).toThrow();
      expect(scanSkeleton(b, DEPTH, recall)).toBeNull();
    }
    // A remembered system prompt followed by garbage instead of a comma.
    const o = JSON.stringify(agentBody(10));
    const sysEnd = o.indexOf('"tools"') - 1;
    expect(scanSkeleton(Buffer.from(`${o.slice(0, sysEnd)} x${o.slice(sysEnd)}`), DEPTH, recall)).toBeNull();
  });

  it('a value checked under one nesting limit is not reused under a lower one', () => {
    const memory = new MemberMemory();
    const recall = memory.of('anthropic-messages', 'key-1');
    const b = bytes(agentBody(10));
    expect(scanSkeleton(b, DEPTH, recall)).not.toBeNull();
    // messages → element → content → block: depth 5 under the top-level object.
    expect(scanSkeleton(b, 4, recall)).toBeNull();
    expect(scanSkeleton(b, 4)).toBeNull();
  });

  it('any sequence of turns, edits and broken bytes: the same answers as scans without memory', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('grow' as const), n: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('shrink' as const), n: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('same' as const) }),
      fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), value: fc.jsonValue({ maxDepth: 3 }) }),
      fc.record({ kind: fc.constant('tools' as const), value: fc.string({ maxLength: 30 }) }),
      fc.record({
        kind: fc.constant('bytes' as const),
        edits: fc.array(fc.tuple(fc.nat(), fc.constantFrom(0x00, 0x0a, 0x20, 0x22, 0x2c, 0x30, 0x3a, 0x5b, 0x5c, 0x5d, 0x75, 0x7b, 0x7d, 0x80, 0xff), fc.constantFrom('set', 'insert', 'delete')), { minLength: 1, maxLength: 3 }),
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 12 }), fc.array(op, { minLength: 1, maxLength: 8 }), fc.integer({ min: 16 * 1024, max: 64 * 1024 }), (turns, ops, ring) => {
        // A small ring, so that values are overwritten and forgotten along the way.
        const memory = new MemberMemory(ring, 4);
        const recall = memory.of('openai-chat', 'key-1');
        let body = agentBody(turns);
        let messages = body.messages as unknown[];
        for (const o of ops) {
          let b: Buffer;
          if (o.kind === 'bytes') {
            const raw = [...bytes(body)];
            for (const [p, byte, how] of o.edits) {
              const i = p % raw.length;
              if (how === 'set') raw[i] = byte;
              else if (how === 'insert') raw.splice(i, 0, byte);
              else raw.splice(i, 1);
            }
            b = Buffer.from(raw);
          } else {
            if (o.kind === 'grow') for (let k = 0; k < o.n; k++) messages = [...messages, { role: 'user', content: text(messages.length) }];
            if (o.kind === 'shrink') messages = messages.slice(0, Math.max(1, messages.length - o.n));
            if (o.kind === 'edit') messages = messages.map((m, i) => (i === o.at % messages.length ? { role: 'user', content: o.value } : m));
            if (o.kind === 'tools') body = { ...body, tools: [...(body.tools as unknown[]), { name: o.value }] };
            body = { ...body, messages };
            b = bytes(body);
          }
          sameAsFresh(b, scanSkeleton(b, DEPTH, recall));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('MemberMemory (memberMemory.ts)', () => {
  const value = (fill: string, n: number, marks: number[] | null = null): RememberedValue => ({ bytes: Buffer.from(fill.repeat(n)), length: marks ? marks.length + 1 : -1, marks, maxDepth: DEPTH });

  it('keeps values per client and protocol: one client never reads another one\'s', () => {
    const memory = new MemberMemory();
    memory.of('openai-chat', 'a').keep('messages', value('a', 2000), false);
    expect(memory.of('openai-chat', 'a').recall('messages')?.[0]?.bytes.toString()).toBe('a'.repeat(2000));
    expect(memory.of('openai-chat', 'b').recall('messages')).toBeUndefined();
    expect(memory.of('anthropic-messages', 'a').recall('messages')).toBeUndefined();
    // A client's body is scanned without its memory being used by another client.
    const body = bytes(agentBody(8));
    scanSkeleton(body, DEPTH, memory.of('anthropic-messages', 'a'));
    const before = rememberedBytesReused();
    scanSkeleton(body, DEPTH, memory.of('anthropic-messages', 'b'));
    expect(rememberedBytesReused()).toBe(before);
  });

  it(`keeps the ${VALUES_PER_KEY} most recent values of a member, most recent first; a reused one moves to the front`, () => {
    const memory = new MemberMemory();
    const c = memory.of('openai-chat', 'a');
    for (const f of ['w', 'x', 'y', 'z']) c.keep('messages', value(f, 1500), false);
    expect(c.recall('messages')!.map((v) => v.bytes.toString()[0])).toEqual(['z', 'y', 'x']);
    const x = c.recall('messages')![2]!;
    c.keep('messages', x, true);
    expect(c.recall('messages')!.map((v) => v.bytes.toString()[0])).toEqual(['x', 'z', 'y']);
  });

  it('copies a value\'s bytes (the scanned body may be a reused buffer), and forgets the values a wrap of its ring overwrites', () => {
    const memory = new MemberMemory(10_000);
    const c = memory.of('openai-chat', 'a');
    const src = Buffer.from('p'.repeat(4000));
    c.keep('system', { bytes: src, length: -1, marks: null, maxDepth: DEPTH }, false);
    src.fill('q');
    expect(c.recall('system')![0]!.bytes.toString()).toBe('p'.repeat(4000));
    c.keep('tools', value('t', 4000), false);
    expect(memory.heldBytes).toBe(8000);
    // 4,000 more do not fit after 8,000 of 10,000: written at the start, over the system prompt.
    c.keep('messages', value('m', 4000), false);
    expect(c.recall('system')).toBeUndefined();
    expect(c.recall('tools')![0]!.bytes.toString()).toBe('t'.repeat(4000));
    expect(c.recall('messages')![0]!.bytes.toString()).toBe('m'.repeat(4000));
    expect(memory.heldBytes).toBe(8000);
    // More than half the ring is not kept at all.
    c.keep('big', value('b', 6000), false);
    expect(c.recall('big')).toBeUndefined();
  });

  it('starts over past its number of clients; a client it let go of keeps nothing', () => {
    const memory = new MemberMemory(4000, 2);
    const a = memory.of('openai-chat', 'a');
    a.keep('messages', value('a', 1500), false);
    memory.of('openai-chat', 'b');
    const c = memory.of('openai-chat', 'c'); // the third: starts over
    expect(memory.of('openai-chat', 'a').recall('messages')).toBeUndefined();
    c.keep('messages', value('c', 1500), false);
    // The client let go of (its scan was under way) writes nothing over what the others keep.
    for (let k = 0; k < 3; k++) a.keep(`m${k}`, value('a', 1500), false);
    expect(c.recall('messages')![0]!.bytes.toString()).toBe('c'.repeat(1500));
    expect(memory.heldBytes).toBe(1500);
  });
});
