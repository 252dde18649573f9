// Mid-stream recovery for a Gemini client: a stream cut after some text, with mid-stream recovery
// on, is continued on the next connection; the SDK reads the whole text once, and the second
// connection got the answer so far (a model turn and a "continue" ask on Gemini, a prefill on
// Anthropic). With recovery off the SDK's stream ends in an error after the first part.
import type { GenerateContentResponse } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { CONTINUE_PROMPT } from '../../../src/main/engine/streams/continuation';
import { anthropicText, chatEvents, geminiStream, type Chunk } from '../../support/fakeUpstream';
import { until, words } from '../streams/support';
import { geminiRigPerTest, turns, type GeminiRig, type TargetShape } from './support';

const MODEL = 'gemini-2.5-pro';
const KA = 'sk-first-key-aaaaaaaaaaaa';
const KB = 'sk-second-key-bbbbbbbbbbbb';
const FULL = words(0, 60);
const CUT = 25;
const SO_FAR = FULL.slice(0, CUT).join('');

/** Reads an SDK stream in the background: what it has seen so far, and how it ended. */
function reading(gen: Promise<AsyncGenerator<GenerateContentResponse>>) {
  let text = '';
  const done = (async () => {
    try {
      for await (const ch of await gen) text += ch.text ?? '';
      return { text, error: null as unknown };
    } catch (error) {
      return { text, error };
    }
  })();
  return { seen: () => text, done };
}

/** The first CUT words as the first connection's frames (no finish). */
function firstPart(shape: 'gemini' | 'chat'): Chunk[] {
  if (shape === 'gemini') return geminiStream(MODEL, FULL.slice(0, CUT)).slice(0, -1);
  return [chatEvents.role(MODEL), ...FULL.slice(0, CUT).map((w) => chatEvents.text(MODEL, w))];
}

/** Checks the second connection was asked to continue from the answer so far, in its own shape. */
function expectContinued(second: Exclude<TargetShape, 'chat'>, body: Record<string, any>) {
  if (second === 'gemini') {
    const contents = body.contents as { role: string; parts: { text?: string }[] }[];
    expect(contents.at(-2)!.role).toBe('model');
    expect(contents.at(-2)!.parts.map((p) => p.text ?? '').join('').trimEnd()).toBe(SO_FAR.trimEnd());
    expect(contents.at(-1)).toEqual({ role: 'user', parts: [{ text: CONTINUE_PROMPT }] });
  } else {
    // A prefill: the final assistant turn is the answer so far (as a string or one text block).
    const last = (body.messages as { role: string; content: string | { type: string; text: string }[] }[]).at(-1)!;
    expect(last.role).toBe('assistant');
    expect(typeof last.content === 'string' ? last.content : last.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toBe(SO_FAR.trimEnd());
  }
}

describe('Gemini client: a stream cut mid-way', () => {
  const s = geminiRigPerTest();

  async function cutAndContinue(first: 'gemini' | 'chat', second: 'gemini' | 'anthropic', recovery = true): Promise<{ r: GeminiRig; out: { text: string; error: unknown }; a: string }> {
    const r = await s.start();
    const a = await r.add(first, 'First', KA, { priority: 1, models: [MODEL] });
    await r.add(second, 'Second', KB, { priority: 2, models: [MODEL] });
    if (recovery) await r.settings({ streamRecovery: { midstream: { enabled: true } } });
    const live = r.live(KA);
    s.fake.script({ key: KB }, [{ chunks: second === 'gemini' ? geminiStream(MODEL, FULL.slice(CUT)) : anthropicText(MODEL, FULL.slice(CUT)) }]);
    const read = reading(r.ai.models.generateContentStream({ model: MODEL, contents: 'Write the words.' }));
    await live.attached;
    live.send(...firstPart(first));
    await until(() => read.seen() === SO_FAR, 'the SDK to read the first part');
    live.cut();
    return { r, out: await read.done, a: a.id };
  }

  async function expectRecovered(r: GeminiRig, out: { text: string; error: unknown }, a: string, second: 'gemini' | 'anthropic') {
    expect(out.error).toBeNull();
    expect(out.text).toBe(FULL.join(''));
    const cont = turns(s.fake.requestsFor({ key: KB }));
    expect(cont).toHaveLength(1);
    expectContinued(second, cont[0]!.body!);
    const log = await r.logOf(MODEL);
    expect(log).toMatchObject({ status: 200, errorCode: null });
    expect(log.attempts).toHaveLength(2);
    expect(log.attempts[0]).toMatchObject({ connectionId: a, continuedElsewhere: true, errorCode: 'stream_interrupted' });
    expect(log.attempts[1]!.errorCode).toBeNull();
  }

  for (const second of ['gemini', 'anthropic'] as const) {
    it(`a translated stream (Chat connection) cut after ${CUT} words, recovery on: the ${second} connection continues; the SDK reads the whole text once`, async () => {
      const { r, out, a } = await cutAndContinue('chat', second);
      await expectRecovered(r, out, a, second);
    });

    // A native Gemini stream is tracked in Gemini's words (codecs/clientState.ts), so its text so far
    // can be continued like any other.
    it(`a native Gemini stream cut after ${CUT} words, recovery on: the ${second} connection continues; the SDK reads the whole text once`, async () => {
      const { r, out, a } = await cutAndContinue('gemini', second);
      await expectRecovered(r, out, a, second);
    });
  }

  for (const first of ['gemini', 'chat'] as const) {
    it(`recovery off (${first} connection first): the SDK reads the first part, then its stream ends in an error; nothing is continued`, async () => {
      const { out } = await cutAndContinue(first, 'gemini', false);
      expect(out.error).not.toBeNull();
      expect(out.text).toBe(SO_FAR);
      expect(turns(s.fake.requestsFor({ key: KB }))).toHaveLength(0);
    });
  }

  // The watchdogs read Gemini frames like the others': a native Gemini stream that goes silent (a
  // heartbeat comment does not count) trips the content-stall watchdog, and the answer is continued.
  it('a native Gemini stream that goes silent after 25 words: the content-stall watchdog fires and the next connection continues', async () => {
    const r = await s.start();
    const a = await r.add('gemini', 'First', KA, { priority: 1, models: [MODEL] });
    await r.add('gemini', 'Second', KB, { priority: 2, models: [MODEL] });
    await r.settings({ streamRecovery: { midstream: { enabled: true } } });
    const live = r.live(KA);
    s.fake.script({ key: KB }, [{ chunks: geminiStream(MODEL, FULL.slice(CUT)) }]);
    const read = reading(r.ai.models.generateContentStream({ model: MODEL, contents: 'Write the words.' }));
    await live.attached;
    live.send(...firstPart('gemini'));
    await until(() => read.seen() === SO_FAR, 'the SDK to read the first part');
    live.send(': keep-alive\n\n');
    await new Promise((res) => setTimeout(res, 50));
    r.clock.advance(120_001);
    const out = await read.done;
    expect(out.error).toBeNull();
    expect(out.text).toBe(FULL.join(''));
    expectContinued('gemini', turns(s.fake.requestsFor({ key: KB }))[0]!.body!);
    const log = await r.logOf(MODEL);
    expect(log.attempts[0]).toMatchObject({ connectionId: a.id, continuedElsewhere: true, watchdog: 'content_stall', errorCode: 'stream_stalled' });
  });
});
