// Shared helpers for the Claude account tests: config pointed at the fake, scripted HTTP, and a
// driver that advances the fake clock until a promise settles.
import type { ClaudeOAuthConfig } from '../../../src/main/engine/claude/claudeConfig';
import type { HttpFn, HttpRequest, HttpResponse } from '../../../src/main/engine/claude/http';
import type { FakeClock } from '../../support/fakeClock';
import type { FakeClaudeAuth } from '../../support/fakeClaudeAuth';

export function configFor(fake: FakeClaudeAuth, over: Partial<ClaudeOAuthConfig> = {}): ClaudeOAuthConfig {
  return {
    authorizeUrl: fake.authorizeUrl,
    tokenUrl: fake.tokenUrl,
    pasteRedirectUri: fake.pasteRedirectUri,
    clientId: fake.clientId,
    scopes: 'org:create_api_key user:profile user:inference',
    apiBaseUrl: fake.apiBase,
    refreshMarginMs: 5 * 60_000,
    ...over,
  };
}

/** An HttpFn answering from a list (or a function), recording each request. */
export function scriptedHttp(answer: (req: HttpRequest, n: number) => HttpResponse | Promise<HttpResponse>): HttpFn & { calls: HttpRequest[] } {
  const calls: HttpRequest[] = [];
  const fn = (async (req: HttpRequest) => {
    calls.push(req);
    return answer(req, calls.length);
  }) as HttpFn & { calls: HttpRequest[] };
  fn.calls = calls;
  return fn;
}

export const json = (status: number, body: unknown): HttpResponse => ({ status, headers: { 'content-type': 'application/json' }, text: JSON.stringify(body) });

export const flush = () => new Promise<void>((r) => setImmediate(r));

/**
 * Runs the fake clock forward in steps until `p` settles (or `maxMs` of fake time passed). Timers
 * fire at their exact due time, so code under test sees exact delays.
 */
export async function drive<T>(clock: FakeClock, p: Promise<T>, opts: { stepMs?: number; maxMs?: number } = {}): Promise<T> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  const step = opts.stepMs ?? 250;
  const max = opts.maxMs ?? 24 * 3_600_000;
  for (let t = 0; t <= max; t += step) {
    for (let i = 0; i < 5; i++) await flush();
    if (settled) return p;
    clock.advance(step);
  }
  throw new Error('drive: the promise did not settle in the time allowed');
}

/** Waits (on I/O turns, never on a timer) until `cond` holds; gives up after many turns. */
export async function until(cond: () => boolean, turns = 10_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flush();
  }
  throw new Error('until: condition never held');
}
