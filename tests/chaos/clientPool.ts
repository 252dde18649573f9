// The chaos suite's clients: real Anthropic SDK calls (streamed and not) through the proxy,
// started at a steady pace with bounded concurrency, each tagged with an id (metadata.user_id)
// that the chaos upstream records, so every upstream call can be tied to its client request.
import Anthropic from '@anthropic-ai/sdk';
import { seededRandom } from '../support/chaosUpstream';

export interface ClientResult {
  id: string;
  stream: boolean;
  /** ms since the phase began. */
  startedAt: number;
  endedAt: number;
  ok: boolean;
  /** HTTP status of a failed call, when there was one. */
  status: number | null;
  /** Switchyard's error code, or the upstream's error type, of a failed call. */
  code: string | null;
  /** The SDK's error class and message of a failed call. */
  error: string | null;
  /** The client gave up waiting (the proxy left it hanging). */
  timedOut: boolean;
}

export interface PoolOptions {
  /** One client, or several (a team of instances): request n goes to client n mod count. */
  client: Anthropic | readonly Anthropic[];
  model: string;
  idPrefix: string;
  /** Time 0 of the phase (Date.now() at the phase start). */
  t0: number;
  /** No new request starts after this (ms since t0). */
  durationMs: number;
  maxRequests: number;
  /** One request starts every intervalMs, unless `concurrency` are already in flight. */
  intervalMs: number;
  concurrency: number;
  /** Share of requests that are streamed. */
  streamShare: number;
  seed: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function one(client: Anthropic, model: string, id: string, stream: boolean, t0: number): Promise<ClientResult> {
  const startedAt = Date.now() - t0;
  const params = { model, max_tokens: 16, metadata: { user_id: id }, messages: [{ role: 'user' as const, content: 'chaos' }] };
  try {
    if (stream) {
      const s = await client.messages.create({ ...params, stream: true });
      let stopped = false;
      for await (const ev of s) if (ev.type === 'message_stop') stopped = true;
      if (!stopped) throw new Error('stream ended without message_stop');
    } else {
      const m = await client.messages.create(params);
      if (m.content.length === 0) throw new Error('empty message');
    }
    return { id, stream, startedAt, endedAt: Date.now() - t0, ok: true, status: null, code: null, error: null, timedOut: false };
  } catch (e) {
    const status = e instanceof Anthropic.APIError && typeof e.status === 'number' ? e.status : null;
    const body = e instanceof Anthropic.APIError ? (e.error as { error?: { code?: string; type?: string } } | undefined) : undefined;
    return {
      id,
      stream,
      startedAt,
      endedAt: Date.now() - t0,
      ok: false,
      status,
      code: body?.error?.code ?? body?.error?.type ?? null,
      error: `${(e as Error).constructor?.name ?? 'Error'}: ${(e as Error).message}`.slice(0, 200),
      timedOut: e instanceof Anthropic.APIConnectionTimeoutError,
    };
  }
}

/** Runs the pool until durationMs or maxRequests, then waits for the requests in flight. */
export async function runPool(o: PoolOptions): Promise<ClientResult[]> {
  const rnd = seededRandom(o.seed);
  const results: ClientResult[] = [];
  const inFlight = new Set<Promise<void>>();
  // A steady pace with no catch-up: a start delayed by full concurrency moves the next one too.
  let next = o.t0;
  for (let n = 0; n < o.maxRequests; n++) {
    const wait = next - Date.now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= o.concurrency) await Promise.race(inFlight);
    if (Date.now() - o.t0 >= o.durationMs) break;
    next = Math.max(next, Date.now()) + o.intervalMs;
    const stream = rnd() < o.streamShare;
    const client = Array.isArray(o.client) ? (o.client as readonly Anthropic[])[n % (o.client as readonly Anthropic[]).length]! : (o.client as Anthropic);
    const p: Promise<void> = one(client, o.model, `${o.idPrefix}-${n}`, stream, o.t0).then((r) => {
      results.push(r);
      inFlight.delete(p);
    });
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  return results.sort((a, b) => a.startedAt - b.startedAt);
}
