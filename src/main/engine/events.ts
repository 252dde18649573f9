// Typed push events. Producers either emit a payload directly or "touch" a coalesced topic whose
// snapshot is built at most once per interval, so a burst of state changes becomes one push.
import { EVENT_NAMES, type EventListener, type EventName, type EventPayload } from '../../shared/contract';
import type { CancelTimer, Clock } from './clock';

export class EventBus {
  private readonly listeners = new Map<EventName, Set<(p: unknown) => void>>();

  on<E extends EventName>(name: E, fn: EventListener<E>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(fn as (p: unknown) => void);
    return () => set!.delete(fn as (p: unknown) => void);
  }

  /** Subscribes to every event (used by the IPC and SSE forwarders). */
  onAny(fn: (name: EventName, payload: unknown) => void): () => void {
    const offs = EVENT_NAMES.map((n) =>
      this.on(n, (p) => fn(n, p)),
    );
    return () => offs.forEach((o) => o());
  }

  hasListeners(name: EventName): boolean {
    return (this.listeners.get(name)?.size ?? 0) > 0;
  }

  emit<E extends EventName>(name: E, payload: EventPayload<E>): void {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const fn of [...set]) {
      try {
        fn(payload);
      } catch {
        // a failing listener never breaks the producer
      }
    }
  }
}

/** Emits `build()` under `name` at most once per `intervalMs` after any number of touches. */
export class CoalescedTopic<E extends EventName> {
  private cancel: CancelTimer | null = null;

  constructor(
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly name: E,
    private readonly build: () => EventPayload<E>,
    private readonly intervalMs = 100,
  ) {}

  touch(): void {
    if (this.cancel || !this.bus.hasListeners(this.name)) return;
    this.cancel = this.clock.setTimer(() => {
      this.cancel = null;
      this.bus.emit(this.name, this.build());
    }, this.intervalMs);
  }

  /** Emits now (cancelling a pending coalesced emit). */
  flush(): void {
    this.cancel?.();
    this.cancel = null;
    if (this.bus.hasListeners(this.name)) this.bus.emit(this.name, this.build());
  }

  dispose(): void {
    this.cancel?.();
    this.cancel = null;
  }
}
