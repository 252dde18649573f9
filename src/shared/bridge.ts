// Pieces of the Bridge shared by the preload, the renderer's adapters and the engine: the IPC
// envelope and the error the renderer sees for a failed call.
import type { EventListener, EventName, MethodName, OutputOf } from './contract';

export type Envelope<T = unknown> =
  | { ok: true; value: T }
  | { ok: false; error: { code: string; message: string; field?: string } };

/** window.api as the preload exposes it: methods answer envelopes (errors keep code and field). */
export type PreloadApi = {
  [M in MethodName]: (input?: unknown) => Promise<Envelope<OutputOf<M>>>;
} & {
  on<E extends EventName>(event: E, listener: EventListener<E>): () => void;
};

export class BridgeError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'BridgeError';
  }
}

export function unwrap<T>(env: Envelope<T>): T {
  if (env.ok) return env.value;
  throw new BridgeError(env.error.code, env.error.message, env.error.field);
}
