// The inbound call as the proxy server builds it, with a body it need not build. An agent-sized
// request (a Claude Code or Codex turn: 40-110 KB, later in a session several hundred) parses into
// a graph of thousands of objects and a copy of every string. Routing reads a handful of top-level
// members (the model, the stream flag, the session's id, the tool count, a combo's prompt key),
// then a native attempt sends the client's own bytes and reads only the top-level model.
// - A large body is read as its top level only (`fromBytes`, proxy/jsonSkeleton.ts): every byte
//   checked as JSON, the small members parsed, the large ones left as bytes
//   (docs/decisions/lean-25-skeleton.md).
// - A body parsed whole is let go of after routing when its first target is native (`letGo`,
//   docs/decisions/lean-25-released-body.md): kept, the graph outlived the young generation.
// Either way the members at hand are read through `topLevel` / `arrayLength`, and a reader of
// `json` (a translation, a continuation, an error event, a combo's prompt key) gets the body parsed
// from its bytes, which the call keeps anyway. Assigning `json` pins the new value: it is never let
// go, and the bytes are no longer its source.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InboundProtocol, WireProtocol } from '../../../shared/model';
import type { UpstreamEndpoint } from '../upstream/headers';
import { CHUNKED_MIN_BYTES, parseJsonObject, PROXY_JSON_MAX_DEPTH } from './body';
import type { GeminiRoute, InboundCall } from './inbound';
import { scanSkeleton, type MemberRecall, type MemberSpan } from './jsonSkeleton';
import { clientScope } from './memberMemory';
import { byteLengthOf, contiguousView, type RequestBytes } from './requestBytes';

export { arrayLengthOf, topLevelOf } from './inbound';

/** The call's fields as the server reads them (the parsed body included). */
export type CallFields = Omit<InboundCall, 'gemini' | 'topLevel' | 'arrayLength'>;

type Scalar = string | number | boolean | null;

/**
 * Whether a call's body may go unbuilt: read as its top level (`fromBytes`), or let go of after
 * routing. Bodies of CHUNKED_MIN_BYTES or more on Messages, Chat and Responses; not a Gemini route
 * (its URL names the model; its body is translated or read whole), not count_tokens.
 */
export function readsTopLevelOnly(protocol: InboundProtocol, gemini: GeminiRoute | undefined, body: RequestBytes): boolean {
  if (gemini) return false;
  if (protocol !== 'anthropic-messages' && protocol !== 'openai-chat' && protocol !== 'openai-responses') return false;
  return byteLengthOf(body) >= CHUNKED_MIN_BYTES;
}

/**
 * How the server reads the next large body of a client key on a protocol, from what the last one
 * met at its first target. A translating first target reads the whole body at once, so for it the
 * scan would only add its cost (a translated Claude Code-sized request: −10 % req/s at c=32); a
 * native one needs only the top level. A guess: a wrong one costs what the other way costs, never
 * a different answer.
 */
export class BodyReads {
  private readonly translated = new Map<string, boolean>();

  constructor(private readonly maxKeys = 1024) {}

  /** Whether to read the next large body of this client key and protocol as its top level. */
  topLevel(protocol: InboundProtocol, clientKeyId: string | null): boolean {
    return this.translated.get(clientScope(protocol, clientKeyId)) !== true;
  }

  /** What a call's first target did with its large body: translated it, or took it natively. */
  routed(protocol: InboundProtocol, clientKeyId: string | null, translated: boolean): void {
    const k = clientScope(protocol, clientKeyId);
    if (!this.translated.has(k) && this.translated.size >= this.maxKeys) this.translated.clear();
    this.translated.set(k, translated);
  }
}

let parsedLate = 0;

/**
 * How many times a call parsed its body from the bytes after it was built (a let-go body read again,
 * or a skeleton's body read whole), in this process (for tests and the bench).
 */
export function bodiesParsedAgain(): number {
  return parsedLate;
}

export class ParsedCall implements InboundCall {
  protocol: InboundProtocol;
  endpoint: UpstreamEndpoint;
  wire: WireProtocol;
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  startedAt: number;
  startMono: number;
  clientKeyId: string | null;
  body: RequestBytes;
  gemini?: GeminiRoute;
  private tree: Record<string, unknown> | null;
  /** Without the tree: the top-level members at hand (scalars, and a skeleton's small members). */
  private kept: Map<string, unknown> | null = null;
  /** Without the tree: the other top-level members, with their length when an array (-1 otherwise). */
  private rest: Map<string, number> | null = null;
  /** A skeleton's members: where each value lies in the bytes (the model is spliced there). */
  private spans: Map<string, MemberSpan> | null = null;
  /** `json` was assigned: the bytes may no longer be its source. */
  private pinned = false;
  /** Told, after routing, whether the first target translates the body (BodyReads). */
  onRouted: ((translated: boolean) => void) | null = null;

  /** `json` null: only through `fromBytes`, which sets the skeleton's members. */
  constructor(f: Omit<CallFields, 'json'> & { json: Record<string, unknown> | null }) {
    // Fields spelled out (not a spread): V8 builds the object the fast way.
    this.protocol = f.protocol;
    this.endpoint = f.endpoint;
    this.wire = f.wire;
    this.req = f.req;
    this.res = f.res;
    this.requestId = f.requestId;
    this.startedAt = f.startedAt;
    this.startMono = f.startMono;
    this.clientKeyId = f.clientKeyId;
    this.body = f.body;
    this.tree = f.json;
  }

  /**
   * A call whose body is read as its top level only (proxy/jsonSkeleton.ts), or parsed whole when
   * the scan cannot settle it (then with parseJsonObject's errors: invalid JSON, too deep).
   */
  static fromBytes(f: Omit<CallFields, 'json'>, recall?: MemberRecall): ParsedCall {
    const sk = scanSkeleton(contiguousView(f.body), PROXY_JSON_MAX_DEPTH, recall);
    if (!sk) return new ParsedCall({ ...f, json: parseJsonObject(f.body) });
    const call = new ParsedCall({ ...f, json: null });
    const rest = new Map<string, number>();
    for (const [k, m] of sk.members) if (!sk.values.has(k)) rest.set(k, m.length);
    call.kept = sk.values;
    call.rest = rest;
    call.spans = sk.members;
    return call;
  }

  get json(): Record<string, unknown> {
    if (this.tree === null) {
      parsedLate++;
      // Bytes a parse or the skeleton's scan accepted: they parse, to the same top level.
      this.tree = parseJsonObject(this.body);
    }
    return this.tree;
  }

  set json(v: Record<string, unknown>) {
    this.tree = v;
    this.pinned = true;
  }

  /** Lets go of the parsed body (kept: its top-level scalars); false when it is pinned. */
  letGo(): boolean {
    if (this.pinned) return false;
    if (this.tree === null) return true;
    const kept = new Map<string, unknown>();
    const rest = new Map<string, number>();
    const t = this.tree;
    for (const k in t) {
      const v = t[k] as unknown;
      if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') kept.set(k, v as Scalar);
      else rest.set(k, Array.isArray(v) ? v.length : -1);
    }
    this.kept = kept;
    this.rest = rest;
    this.tree = null;
    return true;
  }

  /** A top-level member of the body, without parsing it (again) when it is at hand (or absent). */
  topLevel(key: string): unknown {
    if (this.tree !== null) return this.tree[key];
    if (this.kept!.has(key)) return this.kept!.get(key);
    return this.rest!.has(key) ? this.json[key] : undefined;
  }

  /** The length of a top-level array member (0 when it is absent or not an array), without parsing it. */
  arrayLength(key: string): number {
    if (this.tree !== null) {
      const v = this.tree[key];
      return Array.isArray(v) ? v.length : 0;
    }
    const n = this.rest!.get(key);
    if (n !== undefined) return Math.max(0, n);
    const v = this.kept!.get(key);
    return Array.isArray(v) ? v.length : 0;
  }

  /** Where a top-level member's value lies in the body's bytes, when a skeleton read them (else null). */
  valueSpan(key: string): MemberSpan | null {
    return this.pinned ? null : (this.spans?.get(key) ?? null);
  }
}
