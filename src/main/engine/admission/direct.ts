// Placeholder admission used until the admission layer lands: no queue, no caps; it only counts
// in-flight attempts per connection so the dashboard can show them.
import type { AdmissionView } from '../../../shared/model';
import type { ConnectionRegistry } from '../connections/registry';
import type { AdmissionLease, AdmissionPort } from './port';

export function directAdmission(registry: ConnectionRegistry): AdmissionPort {
  const inFlight = new Map<string, number>();
  const listeners = new Set<() => void>();
  const never = new AbortController().signal;
  const changed = () => listeners.forEach((fn) => fn());
  return {
    async acquire(target): Promise<AdmissionLease> {
      const id = target.conn.id;
      inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
      changed();
      let released = false;
      return {
        queuedMs: 0,
        signal: never,
        release() {
          if (released) return;
          released = true;
          inFlight.set(id, Math.max(0, (inFlight.get(id) ?? 1) - 1));
          changed();
        },
      };
    },
    observe() {},
    views(): AdmissionView[] {
      return registry.all().map((c) => ({
        connectionId: c.id,
        protected: false,
        protectionSource: 'off',
        queued: 0,
        inFlight: inFlight.get(c.id) ?? 0,
        pausedUntil: null,
        maxConcurrent: c.maxConcurrent,
        models: [],
      }));
    },
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async close() {},
  };
}
