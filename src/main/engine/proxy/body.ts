// Inbound request bodies: bounded read, JSON validation, and a model rewrite that splices the raw
// bytes instead of re-serialising the whole (often large) conversation.
import type { IncomingMessage } from 'node:http';
import type { UpstreamBody } from '../upstream/client';
import { jsonTooDeep, PROXY_JSON_MAX_DEPTH } from '../../../shared/jsonBounds';
import { ProxyError } from './errors';
import { topLevelValueSpans } from './jsonScan';
import type { MemberSpan } from './jsonSkeleton';
import { byteLengthOf, contiguousView, partsOf, type RequestBytes } from './requestBytes';
import { parseUtf8Json } from './utf8Json';

// The depth check is shared: whatever else handles a proxy body uses the same rule and limit.
export { jsonTooDeep, PROXY_JSON_MAX_DEPTH };

/**
 * The body, bounded by `limit`: one buffer, or from CHUNKED_MIN_BYTES the socket's chunks unjoined
 * (proxy/requestBytes.ts: the join would be a second copy of an agent-sized body).
 */
export function readRequestBody(req: IncomingMessage, limit: number): Promise<RequestBytes> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) {
        done = true;
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0]! : size >= CHUNKED_MIN_BYTES ? chunks : Buffer.concat(chunks, size));
    });
    req.on('error', (e) => {
      if (done) return;
      done = true;
      reject(e);
    });
    // A client that goes away mid-upload may close without 'end' or 'error'.
    req.on('close', () => {
      if (done) return;
      done = true;
      reject(new ProxyError(400, 'invalid_request', 'the client closed the connection before the body was complete'));
    });
  });
}

const tooLarge = (limit: number) =>
  new ProxyError(413, 'payload_too_large', `request body is larger than the ${Math.round(limit / 1024)} KiB limit`);

export function parseJsonObject(buf: RequestBytes): Record<string, unknown> {
  if (byteLengthOf(buf) === 0) throw new ProxyError(400, 'invalid_json', 'request body is empty; send a JSON object');
  let v: unknown;
  try {
    v = parseUtf8Json(contiguousView(buf));
  } catch (e) {
    throw new ProxyError(400, 'invalid_json', `request body is not valid JSON: ${(e as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new ProxyError(400, 'invalid_json', 'request body must be a JSON object');
  }
  // Parsing a deep body is safe; serialising or cloning it later is not (the stack overflows).
  if (jsonTooDeep(v, PROXY_JSON_MAX_DEPTH)) {
    throw new ProxyError(
      400,
      'invalid_json',
      `request body nests arrays/objects deeper than ${PROXY_JSON_MAX_DEPTH} levels; flatten it`,
    );
  }
  return v as Record<string, unknown>;
}

const MODEL_KEY = Buffer.from('"model"');

/** From this size a spliced body is sent as its parts (no copy): upstream/client.ts UpstreamBody. */
export const SPLICE_IN_PARTS_MIN_BYTES = 16 * 1024;

/** From this size a body read in several chunks is kept as them (requestBytes.ts). */
export const CHUNKED_MIN_BYTES = SPLICE_IN_PARTS_MIN_BYTES;

/**
 * Returns the body with the top-level "model" replaced. Its value is spliced in place when the
 * top-level object writes the key once, plainly, with the value the parse saw (no
 * re-serialisation): a body of SPLICE_IN_PARTS_MIN_BYTES or more as parts that point into the
 * original (the bytes before the value, the new value, the bytes after), a smaller one as one
 * buffer. Otherwise (a repeated or escaped key) the parsed object is serialised again.
 * `asked`: the top-level model the parse saw; `parsed`: the whole parsed body, read only to
 * re-serialise (a call that let go of it parses it again then: parsedCall.ts); `known`: the model
 * value's span when the call's skeleton found it.
 */
export function rewriteModel(
  body: RequestBytes,
  asked: unknown,
  model: string,
  parsed: () => Record<string, unknown>,
  known: Pick<MemberSpan, 'start' | 'end'> | null = null,
): UpstreamBody {
  const view = contiguousView(body);
  // A skeleton's span (proxy/jsonSkeleton.ts: a key written once, plainly) needs no second walk.
  const spans = known ? [[known.start, known.end] as const] : topLevelValueSpans(view, MODEL_KEY);
  if (spans?.length === 1) {
    const [start, end] = spans[0]!;
    if (sameString(view, start, end, asked)) {
      const value = JSON.stringify(model);
      if (view.length >= SPLICE_IN_PARTS_MIN_BYTES) return [...partsOf(body, 0, start), Buffer.from(value), ...partsOf(body, end)];
      // A small body: one buffer, written in place (the view may be a scratch copy: read it now).
      const size = Buffer.byteLength(value);
      const out = Buffer.allocUnsafe(start + size + (view.length - end));
      view.copy(out, 0, 0, start);
      out.write(value, start);
      view.copy(out, start + size, end);
      return out;
    }
  }
  return Buffer.from(JSON.stringify({ ...parsed(), model }));
}

const PLAIN_ASCII = /^[ !#-[\]-~]*$/;

/** Whether `view[start, end)` is the JSON string `expected`, however it was written (escapes included). */
function sameString(view: Buffer, start: number, end: number, expected: unknown): boolean {
  if (typeof expected !== 'string' || view[start] !== 0x22) return false;
  // A name of printable ASCII other than `"` and a backslash, written plainly (as nearly every client writes
  // a model): its bytes are its characters, one each, with no escape. Anything else is parsed.
  if (end - start === expected.length + 2 && PLAIN_ASCII.test(expected) && view.toString('latin1', start + 1, end - 1) === expected) return true;
  try {
    return JSON.parse(view.toString('utf8', start, end)) === expected;
  } catch {
    return false;
  }
}
