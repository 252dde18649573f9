// A chaos upstream for the resilience suites: the fake upstream on 127.0.0.1 (Anthropic shape),
// answering each call with a fault chosen by a plan from the call's key, its time since `begin()`
// and its order. Faults are real: latency (timers), connection resets (socket destroyed), hangs
// (no answer until the proxy's headers timeout gives up), 503s, 429s with and without
// Retry-After, a stall before the first body byte, a stall after two stream events that carry no
// output yet, and a stall in the middle of a stream's text. Every
// call is recorded with its fault, the client request it belongs to (the body's
// `metadata.user_id`) and when it arrived and ended, which is what the chaos suite measures.
import {
  anthropicMessage,
  anthropicStream,
  FakeUpstream,
  type RecordedRequest,
  type ScriptedResponse,
} from './fakeUpstream';

export const FAULTS = [
  'ok',
  'slow',
  'status_503',
  'status_429',
  'status_429_retry_after',
  'reset',
  'hang',
  'stall_first_byte',
  'stall_mid_stream',
  'stall_after_two_chunks',
] as const;
export type Fault = (typeof FAULTS)[number];

export interface ChaosContext {
  key: string;
  /** Milliseconds since begin(). */
  t: number;
  /** Order of this call among all calls since begin(), from 0. */
  seq: number;
  /** Order of this call among this key's calls since begin(), from 0. */
  keyCall: number;
  stream: boolean;
}

export type ChaosPlan = (c: ChaosContext) => Fault;

export interface ChaosCall {
  seq: number;
  key: string;
  /** The fault actually served (a stream stall on a non-streamed call is a first-byte stall). */
  fault: Fault;
  stream: boolean;
  /** The client request this call serves (`metadata.user_id`), if it said. */
  requestId: string | null;
  /** Milliseconds since begin() when the call arrived. */
  arrivedAt: number;
  /** Milliseconds since begin() when its response ended or its connection closed; null while open. */
  readonly finishedAt: number | null;
}

/** Latency of a healthy answer, and of a slow (but healthy) one, in ms. */
export const OK_LATENCY_MS: readonly [number, number] = [5, 40];
export const SLOW_LATENCY_MS: readonly [number, number] = [120, 300];
/** The Retry-After a `status_429_retry_after` carries, in seconds. */
export const RETRY_AFTER_SECONDS = 1;

/** mulberry32: a small seeded PRNG, so schedules and jitter repeat run after run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const error = (status: number, type: string, message: string, headers: Record<string, string> = {}): ScriptedResponse => ({
  status,
  headers,
  json: { type: 'error', error: { type, message } },
});

export class ChaosUpstream {
  readonly fake: FakeUpstream;
  readonly calls: ChaosCall[] = [];
  private plan: ChaosPlan | null = null;
  private t0 = 0;
  private keyCalls = new Map<string, number>();
  private random: () => number = seededRandom(1);

  private constructor(fake: FakeUpstream) {
    this.fake = fake;
    fake.script({ path: '/v1/messages' }, [(rec) => this.respond(rec)]);
  }

  static async start(): Promise<ChaosUpstream> {
    return new ChaosUpstream(await FakeUpstream.start());
  }

  get anthropicUrl(): string {
    return this.fake.anthropicUrl;
  }

  /** Starts a run: time 0 is now, calls are numbered from 0, and `plan` picks every answer. */
  begin(plan: ChaosPlan, seed = 1): void {
    this.plan = plan;
    this.t0 = Date.now();
    this.calls.length = 0;
    this.keyCalls.clear();
    this.random = seededRandom(seed);
  }

  /** Milliseconds since begin(). */
  now(): number {
    return Date.now() - this.t0;
  }

  close(): Promise<void> {
    return this.fake.close();
  }

  private jitter([lo, hi]: readonly [number, number]): number {
    return Math.round(lo + this.random() * (hi - lo));
  }

  private respond(rec: RecordedRequest): ScriptedResponse {
    const key = rec.key ?? '';
    const stream = rec.body?.stream === true;
    const keyCall = this.keyCalls.get(key) ?? 0;
    this.keyCalls.set(key, keyCall + 1);
    const ctx: ChaosContext = { key, t: rec.receivedAt - this.t0, seq: this.calls.length, keyCall, stream };
    let fault = this.plan ? this.plan(ctx) : 'ok';
    if ((fault === 'stall_mid_stream' || fault === 'stall_after_two_chunks') && !stream) fault = 'stall_first_byte';
    const meta = rec.body?.metadata as { user_id?: unknown } | undefined;
    const t0 = this.t0;
    this.calls.push({
      seq: ctx.seq,
      key,
      fault,
      stream,
      requestId: typeof meta?.user_id === 'string' ? meta.user_id : null,
      arrivedAt: ctx.t,
      get finishedAt() {
        return rec.finishedAt === null ? null : rec.finishedAt - t0;
      },
    });
    return this.answer(fault, rec.model ?? 'unknown', stream);
  }

  private answer(fault: Fault, model: string, stream: boolean): ScriptedResponse {
    const healthy = (delayMs: number): ScriptedResponse =>
      stream ? { delayMs, chunks: anthropicStream(model) } : { delayMs, json: anthropicMessage(model) };
    switch (fault) {
      case 'ok':
        return healthy(this.jitter(OK_LATENCY_MS));
      case 'slow':
        return healthy(this.jitter(SLOW_LATENCY_MS));
      case 'status_503':
        return error(503, 'api_error', 'Service Unavailable');
      case 'status_429':
        return error(429, 'rate_limit_error', 'Number of requests has exceeded your rate limit');
      case 'status_429_retry_after':
        return error(429, 'rate_limit_error', 'Number of requests has exceeded your rate limit', {
          'retry-after': String(RETRY_AFTER_SECONDS),
        });
      case 'reset':
        return { destroy: true };
      case 'hang':
        return { hang: true };
      case 'stall_first_byte':
        return { stallAfterHeaders: true };
      case 'stall_mid_stream':
        // message_start, content_block_start and one text delta reach the client; then silence.
        return { chunks: anthropicStream(model, ['Partial answer, then the upstream goes quiet']).slice(0, 3), afterChunks: 'stall' };
      case 'stall_after_two_chunks':
        // message_start and content_block_start, no output yet (the answer is not committed); then silence.
        return { chunks: anthropicStream(model).slice(0, 2), afterChunks: 'stall' };
    }
  }
}
