// Committing a ready non-stream upstream response to the client (streams go through
// clientStream.ts): the status and the upstream's headers (minus hop-by-hop ones, plus what served
// it), then the body piped with backpressure while its token usage is read from the head and tail.
// What happens when the body breaks after commit is delivery.ts's decision; this only reports it.
import { HOP_BY_HOP } from '../upstream/headers';
import { UsageTap, type TappedUsage } from '../upstream/usage';
import type { Target } from '../routing/target';
import type { ReadyResponse } from './attempt';
import type { ResponseBody } from './bodyReader';
import type { InboundCall } from './inbound';
import { servedHeaders } from './requestRecord';

export type CommitResult = ({ completed: true } & TappedUsage) | ({ completed: false; error: unknown } & TappedUsage);

export async function commitResponse(call: InboundCall, target: Target, ready: ReadyResponse<ResponseBody>): Promise<CommitResult> {
  const res = call.res;
  const out: Record<string, string> = {};
  for (const k in ready.headers) if (!HOP_BY_HOP.has(k)) out[k] = ready.headers[k]!;
  Object.assign(out, servedHeaders(target));
  out['x-switchyard-request-id'] = call.requestId;
  res.writeHead(ready.status, out);
  const tap = new UsageTap();
  const piped = await ready.reader.pipeTo(res, ready.first.kind === 'chunk' ? ready.first.chunk : null, tap);
  const usage = ready.reader.usage?.() ?? tap.result();
  return piped.ok ? { completed: true, ...usage } : { completed: false, ...usage, error: piped.error };
}
