// Committing a ready non-stream upstream response to the client (streams go through
// clientStream.ts): the status and the upstream's headers (minus hop-by-hop ones, plus what served
// it), then the body piped with backpressure while its token usage is read from the head and tail;
// or, for an answer already in memory, written in one go (writeWhole).
// What happens when the body breaks after commit is delivery.ts's decision; this only reports it.
import { HOP_BY_HOP } from '../upstream/headers';
import { UsageTap, type TappedUsage } from '../upstream/usage';
import type { Target } from '../routing/target';
import type { ReadyResponse } from './attempt';
import type { ResponseBody, WholeAnswer } from './bodyReader';
import type { InboundCall } from './inbound';
import { servedHeaders } from './requestRecord';

export type CommitResult = ({ completed: true } & TappedUsage) | ({ completed: false; error: unknown } & TappedUsage);

/** The client's headers: the upstream's (minus hop-by-hop ones), what served it, the request id. */
function answerHeaders(call: InboundCall, target: Target, upstream: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in upstream) if (!HOP_BY_HOP.has(k)) out[k] = upstream[k]!;
  Object.assign(out, servedHeaders(target));
  out['x-switchyard-request-id'] = call.requestId;
  return out;
}

export async function commitResponse(call: InboundCall, target: Target, ready: ReadyResponse<ResponseBody>): Promise<CommitResult> {
  const res = call.res;
  res.writeHead(ready.status, answerHeaders(call, target, ready.headers));
  const tap = new UsageTap();
  const piped = await ready.reader.pipeTo(res, ready.first.kind === 'chunk' ? ready.first.chunk : null, tap);
  const usage = ready.reader.usage?.() ?? tap.result();
  return piped.ok ? { completed: true, ...usage } : { completed: false, ...usage, error: piped.error };
}

/** An answer already in memory: status, headers and body in one write (one system call). */
export function writeWhole(call: InboundCall, target: Target, ready: ReadyResponse<ResponseBody>, whole: WholeAnswer): void {
  const headers = answerHeaders(call, target, ready.headers);
  headers['content-length'] = String(whole.body.length);
  call.res.writeHead(ready.status, headers);
  call.res.end(whole.body);
}
