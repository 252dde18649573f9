// A request's abort signal without EventTarget. Creating an AbortController and adding and removing
// an 'abort' listener cost microseconds each on Node 20, paid on every request and streamed
// attempt (issue 25's profiles). What the engine and undici do with a signal is the subset here:
// read `aborted` and `reason`, add and remove 'abort' listeners (undici: addEventListener with
// `{ once: true }`), and abort it. Anything that needs a real AbortSignal (fetch, AbortSignal.any)
// must not be given one of these; nothing in the request path does.

type Listener = (event: { type: 'abort'; target: unknown }) => void;

export class LightAbortController {
  readonly signal: AbortSignal;
  private readonly s: LightSignal;

  constructor() {
    this.s = new LightSignal();
    this.signal = this.s as unknown as AbortSignal;
  }

  abort(reason?: unknown): void {
    this.s.abort(reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason);
  }
}

class LightSignal {
  aborted = false;
  reason: unknown = undefined;
  onabort: Listener | null = null;
  private listeners: Listener[] | null = null;

  addEventListener(type: string, fn: Listener | null): void {
    if (type !== 'abort' || !fn || this.aborted) return;
    (this.listeners ??= []).push(fn);
  }

  removeEventListener(type: string, fn: Listener | null): void {
    if (type !== 'abort' || !this.listeners) return;
    const i = this.listeners.indexOf(fn!);
    if (i >= 0) this.listeners.splice(i, 1);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const ls = this.listeners;
    this.listeners = null;
    const event = { type: 'abort' as const, target: this };
    this.onabort?.(event);
    // Listeners run once (as with `{ once: true }`, which is how every listener here is added);
    // one that throws does not keep the others from running.
    if (ls) {
      for (const fn of ls) {
        try {
          fn(event);
        } catch (err) {
          queueMicrotask(() => {
            throw err;
          });
        }
      }
    }
  }
}
