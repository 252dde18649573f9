// A Gemini upstream stream read into frames, in either framing Google sends: with `alt=sse` each
// SSE `data:` event is one GenerateContentResponse chunk; without it the body is one JSON array
// of them, streamed (`[{…}` then `,{…}` … `]`). Each chunk is classified like the other shapes'
// frames (output, reasoning, terminal on a finishReason or a blocked prompt, in-band error, usage),
// so stream resilience can read the same flags (streams/frame.ts classifies them). The proxy calls
// Gemini upstreams with SSE; the JSON-array framing is read for completeness and for tests.
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';
import { classifyFrame, commentFrame, type Frame } from '../streams/frame';
import type { ApiShape } from '../streams/shape';

export type GeminiFraming = 'sse' | 'json-array';

/** The shape tag of Gemini frames. */
export const GEMINI_SHAPE: ApiShape = 'gemini';

/** Classifies one Gemini chunk (the JSON text of a GenerateContentResponse, or of `{ error }`). Never throws. */
export const classifyGeminiChunk = (data: string): Frame => classifyFrame('gemini', null, data);

/**
 * The elements of a streamed JSON array, each as its JSON text, as soon as its closing brace
 * arrives. Strings (and braces inside them) are skipped exactly; separators and whitespace between
 * elements are ignored. A body that is one object rather than an array (an error answer) is read
 * as a one-element stream.
 */
export class JsonArraySplitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private partial = '';

  push(text: string): string[] {
    const out: string[] = [];
    let start = this.depth > 0 ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 92 /* \ */) this.escaped = true;
        else if (c === 34 /* " */) this.inString = false;
        continue;
      }
      if (this.depth === 0) {
        if (c === 123 /* { */) {
          this.depth = 1;
          start = i;
        }
        continue;
      }
      if (c === 34) this.inString = true;
      else if (c === 123 || c === 91 /* [ */) this.depth++;
      else if (c === 125 /* } */ || c === 93 /* ] */) {
        this.depth--;
        if (this.depth === 0) {
          out.push(this.partial + text.slice(start, i + 1));
          this.partial = '';
          start = -1;
        }
      }
    }
    if (this.depth > 0 && start >= 0) this.partial += text.slice(start);
    return out;
  }

  /** Text of an element cut off by the end of the body ('' when none). */
  rest(): string {
    return this.partial;
  }
}

/** Body chunks of a Gemini stream in, frames out (one per chunk of the answer; comments as heartbeats). */
export class GeminiFrameReader {
  private readonly decoder = new StringDecoder('utf8');
  private atStart = true;
  private readonly parser: EventSourceParser | null;
  private readonly splitter: JsonArraySplitter | null;
  private pending: Frame[] = [];
  private ended = false;

  constructor(readonly framing: GeminiFraming) {
    this.parser =
      framing === 'sse'
        ? createParser({
            onEvent: (e) => this.pending.push(classifyGeminiChunk(e.data)),
            onComment: (c) => this.pending.push(commentFrame(GEMINI_SHAPE, c)),
          })
        : null;
    this.splitter = framing === 'json-array' ? new JsonArraySplitter() : null;
  }

  push(chunk: Uint8Array | string): Frame[] {
    if (this.ended) return [];
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk as Buffer);
    if (this.atStart && text) {
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.feed(text);
    return this.take();
  }

  /** The body ended: a last SSE event without its blank line is still read; a cut array element is malformed. */
  end(): Frame[] {
    if (this.ended) return [];
    this.ended = true;
    this.feed(this.decoder.end());
    if (this.parser) this.parser.feed('\n\n');
    const rest = this.splitter?.rest() ?? '';
    if (rest) this.pending.push(classifyGeminiChunk(rest));
    return this.take();
  }

  private feed(text: string): void {
    if (!text) return;
    if (this.parser) this.parser.feed(text);
    else for (const el of this.splitter!.push(text)) this.pending.push(classifyGeminiChunk(el));
  }

  private take(): Frame[] {
    const f = this.pending;
    this.pending = [];
    return f;
  }
}
