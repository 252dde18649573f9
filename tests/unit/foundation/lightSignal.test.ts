// The request's light abort signal (engine/lightSignal.ts) behaves as an AbortSignal does for what
// the engine and undici ask of one: state, reason, listeners called once, removal, and undici's
// own request() aborting on it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { LightAbortController } from '../../../src/main/engine/lightSignal';

describe('LightAbortController', () => {
  it('aborts once, with its reason, calling each listener once and not the removed ones', () => {
    const c = new LightAbortController();
    const calls: string[] = [];
    const a = () => calls.push('a');
    const b = () => calls.push('b');
    c.signal.addEventListener('abort', a, { once: true });
    c.signal.addEventListener('abort', b);
    c.signal.removeEventListener('abort', b);
    expect(c.signal.aborted).toBe(false);
    const why = new Error('client gone');
    c.abort(why);
    c.abort(new Error('again'));
    expect(c.signal.aborted).toBe(true);
    expect(c.signal.reason).toBe(why);
    expect(calls).toEqual(['a']);
    expect(() => c.signal.throwIfAborted()).toThrow('client gone');
    // A listener added after the abort is not called (as with an AbortSignal).
    c.signal.addEventListener('abort', a);
    expect(calls).toEqual(['a']);
  });

  it('gives an AbortError when aborted without a reason, and a throwing listener does not stop the others', async () => {
    const c = new LightAbortController();
    const calls: string[] = [];
    c.signal.addEventListener('abort', () => {
      throw new Error('listener failed');
    });
    c.signal.addEventListener('abort', () => calls.push('second'));
    const uncaught = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
    c.abort();
    expect(calls).toEqual(['second']);
    expect((c.signal.reason as DOMException).name).toBe('AbortError');
    expect(((await uncaught) as Error).message).toBe('listener failed');
  });

  it("aborts undici's request when aborted", async () => {
    const server = createServer(() => {
      // never answers
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const agent = new Agent();
    const c = new LightAbortController();
    try {
      const pending = agent.request({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, path: '/', method: 'GET', signal: c.signal });
      const reason = new Error('client closed the connection');
      setImmediate(() => c.abort(reason));
      await expect(pending).rejects.toBe(reason);
    } finally {
      await agent.close();
      server.closeAllConnections();
      server.close();
    }
  });
});
