// The dispatch step that turns an empty non-stream answer into a failed attempt, so it fails over
// like an empty stream does (holdBack.ts): a complete JSON completion with no text, no tool call
// and no refusal, whose stop reason does not say the emptiness was asked for (streams/emptyAnswer.ts),
// or a 2xx with no body at all. It sits right around the HTTP call, so it reads the upstream's own
// shape for native and translated attempts alike, and the translation step turns its error answer
// into the inbound protocol's.
//
// To tell, the answer is read ahead before anything reaches the client (non-stream clients wait for
// the whole body anyway) up to PEEK_LIMIT bytes; a longer answer is not empty and is passed on
// untouched, as is a compressed one. The bytes read stay held for the commit.
import type { UpstreamFailure } from '../resilience/port';
import { emptyJsonAnswer } from '../streams/emptyAnswer';
import { errorBodyFor } from '../streams/errorEvents';
import type { ApiShape } from '../streams/shape';
import type { AttemptOutcome, Dispatch, ReadyResponse } from './attempt';
import { BodyReader } from './bodyReader';
import type { InboundCall } from './inbound';
import { upstreamShapeOf } from './translation';
import { usageOfText } from '../upstream/usage';
import type { UpstreamStream } from './upstreamStream';

/** Answers longer than this are never empty ones: passed on without being read ahead. */
export const PEEK_LIMIT = 64 * 1024;

export const EMPTY_ANSWER_MESSAGE = 'the upstream answered with an empty completion (no text, no tool call)';

/** Requests whose answer is a completion (not count_tokens, not the model list). */
const completes = (call: InboundCall): boolean =>
  call.protocol === 'anthropic-messages' || call.protocol === 'openai-chat' || call.protocol === 'openai-responses' || call.protocol === 'gemini';

function emptyFailure(shape: ApiShape, ready: ReadyResponse): AttemptOutcome<BodyReader | UpstreamStream> {
  const failure: UpstreamFailure = { kind: 'empty', status: null, headers: ready.headers, body: '', message: EMPTY_ANSWER_MESSAGE };
  const answer = JSON.stringify(errorBodyFor(shape, { status: 502, code: null, message: EMPTY_ANSWER_MESSAGE }));
  return { kind: 'failed', failure, response: { status: 502, headers: { 'content-type': 'application/json' }, body: answer }, ttfbMs: ready.ttfbMs };
}

/** The step around the HTTP call: a ready non-stream completion is read ahead and an empty one fails. */
export function emptyAnswerDispatch(next: Dispatch<BodyReader | UpstreamStream>): Dispatch<BodyReader | UpstreamStream> {
  return async (ctx) => {
    const out = await next(ctx);
    if (out.kind !== 'ready' || ctx.stream || !completes(ctx.call)) return out;
    const ready = out.response;
    const reader = ready.reader;
    if (!(reader instanceof BodyReader)) return out;
    const enc = ready.headers['content-encoding'];
    if (enc !== undefined && enc !== 'identity') return out;
    const shape = upstreamShapeOf(ctx.call, ctx.target);
    // The log shows the upstream's own status for an attempt that fails here.
    ctx.entry.status = ready.status;
    if (ready.first.kind === 'end') return emptyFailure(shape, ready);
    const peeked = await reader.peek(ready.first.kind === 'chunk' ? ready.first.chunk : null, PEEK_LIMIT);
    // A body that breaks while read ahead is the commit's to report, as before.
    if (!peeked.ok || peeked.body === null) return out;
    const text = peeked.body.toString('utf8');
    if (text.trim() !== '') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return out;
      }
      if (!emptyJsonAnswer(shape, parsed)) {
        // Read whole already: delivered in one write, its usage read from the text at hand, and
        // a translated answer is translated from this parse (translation.ts).
        reader.holdWhole(peeked.body, usageOfText(text), { text, value: parsed });
        return out;
      }
    }
    reader.destroy();
    return emptyFailure(shape, ready);
  };
}
