// Inbound request bodies: bounded read, JSON validation, and a model rewrite that splices the raw
// bytes instead of re-serialising the whole (often large) conversation.
import type { IncomingMessage } from 'node:http';
import type { UpstreamBody } from '../upstream/client';
import { jsonTooDeep, PROXY_JSON_MAX_DEPTH } from '../../../shared/jsonBounds';
import { ProxyError } from './errors';

// The depth check is shared: whatever else handles a proxy body uses the same rule and limit.
export { jsonTooDeep, PROXY_JSON_MAX_DEPTH };

export function readRequestBody(req: IncomingMessage, limit: number): Promise<Buffer> {
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
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
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

export function parseJsonObject(buf: Buffer): Record<string, unknown> {
  if (buf.length === 0) throw new ProxyError(400, 'invalid_json', 'request body is empty; send a JSON object');
  let v: unknown;
  try {
    v = JSON.parse(buf.toString('utf8'));
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

/**
 * Returns the body with the top-level "model" replaced. When the raw bytes hold exactly one
 * `"model"` key, its value is spliced in place (no re-serialisation): a body of
 * SPLICE_IN_PARTS_MIN_BYTES or more as three parts (the bytes before the value, the new value, the
 * bytes after), a smaller one as one buffer. Otherwise the parsed object is serialised again.
 */
export function rewriteModel(buf: Buffer, parsed: Record<string, unknown>, model: string): UpstreamBody {
  const first = buf.indexOf(MODEL_KEY);
  if (first >= 0 && buf.indexOf(MODEL_KEY, first + MODEL_KEY.length) < 0) {
    let i = first + MODEL_KEY.length;
    while (i < buf.length && isSpace(buf[i]!)) i++;
    if (buf[i] === 0x3a /* : */) {
      i++;
      while (i < buf.length && isSpace(buf[i]!)) i++;
      if (buf[i] === 0x22 /* " */) {
        const start = i;
        let j = i + 1;
        while (j < buf.length) {
          const ch = buf[j]!;
          if (ch === 0x5c /* \ */) j += 2;
          else if (ch === 0x22) break;
          else j++;
        }
        if (j < buf.length && sameString(buf.subarray(start, j + 1), parsed.model)) {
          const parts = [buf.subarray(0, start), Buffer.from(JSON.stringify(model)), buf.subarray(j + 1)];
          return buf.length >= SPLICE_IN_PARTS_MIN_BYTES ? parts : Buffer.concat(parts);
        }
      }
    }
  }
  return Buffer.from(JSON.stringify({ ...parsed, model }));
}

function sameString(raw: Buffer, expected: unknown): boolean {
  try {
    return JSON.parse(raw.toString('utf8')) === expected;
  } catch {
    return false;
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
