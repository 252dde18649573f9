// The inbound call as the proxy server builds it, with a parsed body it can let go of. An
// agent-sized request (a Claude Code or Codex turn: 40-110 KB) parses into a graph of thousands of
// objects. Routing reads it (the model, the session's id, the tool count, a combo's prompt key),
// then a native attempt sends the client's own bytes and reads only the top-level model. Kept for
// the whole request, the graph outlives the young generation's collections: at c=32 it was copied
// and promoted with every request in flight, and filled the old generation until a full collection
// (docs/decisions/lean-25-released-body.md). So after routing, a large native request lets go of
// it (`letGo`); the top-level scalars stay at hand (`topLevel`), and a late reader of `json` (a
// failover to a translated target, a continuation, an error event) gets the body parsed again from
// its bytes, which the call keeps anyway. Assigning `json` pins the new value: it is never let go.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InboundProtocol, WireProtocol } from '../../../shared/model';
import type { UpstreamEndpoint } from '../upstream/headers';
import { parseJsonObject } from './body';
import type { GeminiRoute, InboundCall } from './inbound';
import type { RequestBytes } from './requestBytes';

/** The call's fields as the server reads them (the parsed body included). */
export type CallFields = Omit<InboundCall, 'gemini'>;

type Scalar = string | number | boolean | null;

let parsedAgain = 0;

/** How many times a let-go body was parsed again, in this process (for tests and the bench). */
export function bodiesParsedAgain(): number {
  return parsedAgain;
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
  /** The top-level members whose values are scalars, kept when the tree is let go. */
  private scalars: Map<string, Scalar> | null = null;
  /** The top-level members whose values are objects or arrays, when the tree is let go. */
  private nested: Set<string> | null = null;
  /** `json` was assigned: the bytes may no longer be its source. */
  private pinned = false;

  constructor(f: CallFields) {
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

  get json(): Record<string, unknown> {
    if (this.tree === null) {
      parsedAgain++;
      // The same bytes parsed before: they are valid, and parse to the same value.
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
    const scalars = new Map<string, Scalar>();
    const nested = new Set<string>();
    const t = this.tree;
    for (const k in t) {
      const v = t[k];
      if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') scalars.set(k, v);
      else nested.add(k);
    }
    this.scalars = scalars;
    this.nested = nested;
    this.tree = null;
    return true;
  }

  /** A top-level member of the body, without parsing it again when it is a scalar (or absent). */
  topLevel(key: string): unknown {
    if (this.tree !== null) return this.tree[key];
    if (this.scalars!.has(key)) return this.scalars!.get(key);
    return this.nested!.has(key) ? this.json[key] : undefined;
  }
}

/** A top-level member of the call's body: from a let-go body's kept scalars where it can. */
export function topLevelOf(call: InboundCall, key: string): unknown {
  return call instanceof ParsedCall ? call.topLevel(key) : call.json[key];
}
