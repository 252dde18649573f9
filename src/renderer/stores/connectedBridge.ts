// The dashboard's Bridge as the stores and pages see it: there from the first render, before the
// live link is built. React runs a page's effects before its parent's, so on a direct load or a
// reload a page asks for its data before the dashboard has connected; through this Bridge that
// call waits for the connection instead of throwing. A subscription made through it follows every
// connection (the strict-mode remount and each start after a stop build a fresh Bridge).
import { METHOD_NAMES, type Bridge, type EventName } from '../../shared/contract';

export interface ConnectedBridge {
  /** The stable Bridge: calls wait until a connection is attached. */
  readonly bridge: Bridge;
  /** The connection now in use, or null before start and after stop. */
  readonly current: Bridge | null;
  /** Resolves once a connection is attached (at once when one is). */
  ready(): Promise<void>;
  /** Uses `b` from now on: waiting calls go to it, subscriptions move to it. */
  attach(b: Bridge): void;
  /** Drops the connection (its subscriptions end); later calls wait for the next one. */
  detach(): void;
}

interface Subscription {
  event: EventName;
  fn: (p: unknown) => void;
  off: (() => void) | null;
}

export function createConnectedBridge(): ConnectedBridge {
  let current: Bridge | null = null;
  let waiters: ((b: Bridge) => void)[] = [];
  const subs = new Set<Subscription>();
  const connected = (): Promise<Bridge> => (current ? Promise.resolve(current) : new Promise<Bridge>((resolve) => waiters.push(resolve)));
  const subscribe = (s: Subscription) => {
    s.off = current ? current.on(s.event, s.fn as never) : null;
  };

  const api: Record<string, unknown> = {};
  for (const name of METHOD_NAMES) {
    // Connected: the call goes straight through (no extra turn); before: it waits.
    const call = (b: Bridge, input?: unknown) => (b[name] as (i?: unknown) => Promise<unknown>)(input);
    api[name] = (input?: unknown) => (current ? call(current, input) : connected().then((b) => call(b, input)));
  }
  api.on = (event: EventName, fn: (p: unknown) => void) => {
    const s: Subscription = { event, fn, off: null };
    subs.add(s);
    subscribe(s);
    return () => {
      subs.delete(s);
      s.off?.();
      s.off = null;
    };
  };

  const detach = () => {
    subs.forEach((s) => {
      s.off?.();
      s.off = null;
    });
    current = null;
  };

  return {
    bridge: api as unknown as Bridge,
    get current() {
      return current;
    },
    ready: async () => {
      await connected();
    },
    attach(b) {
      if (current) detach();
      current = b;
      subs.forEach(subscribe);
      const w = waiters;
      waiters = [];
      w.forEach((resolve) => resolve(b));
    },
    detach,
  };
}
