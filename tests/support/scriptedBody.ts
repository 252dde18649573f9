// An upstream body the test drives by hand (the BodySource a real UpstreamExchange is): chunks,
// an end or an error, delivered to its reader as undici would, held until the reader attaches.
import type { BodySink, BodySource } from '../../src/main/engine/upstream/body';

export class ScriptedBody implements BodySource {
  private sink: BodySink | null = null;
  private held: (() => void)[] = [];
  private destroyed = false;

  attach(sink: BodySink): void {
    this.sink = sink;
    const held = this.held;
    this.held = [];
    for (const h of held) h();
  }

  private deliver(f: (s: BodySink) => void): void {
    if (this.sink) f(this.sink);
    else this.held.push(() => f(this.sink!));
  }

  write(chunk: string | Buffer): void {
    this.deliver((s) => s.data(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  }

  end(): void {
    this.deliver((s) => s.end());
  }

  fail(e: unknown): void {
    this.deliver((s) => s.error(e));
  }

  // The test delivers each chunk by hand: there is no socket to stop.
  pause(): void {}

  resume(): void {}

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    queueMicrotask(() => this.fail(new Error('upstream closed the stream')));
  }
}

/** A body already complete: the given chunks, then its end. */
export function bodyOf(...chunks: (string | Buffer)[]): ScriptedBody {
  const b = new ScriptedBody();
  for (const c of chunks) b.write(c);
  b.end();
  return b;
}
