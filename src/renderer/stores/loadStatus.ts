// Which of the dashboard's topics failed their last read, and why: a page with nothing to show
// yet puts that error in place of its spinner, with a retry. A read clears its topic's error when
// it starts (the spinner comes back while it runs); pushes never touch this.
import { createStore } from 'zustand/vanilla';

/** The topics the dashboard reads on start and after the live link comes back. */
export const TOPICS = ['app', 'connections', 'resilience', 'admission', 'settings', 'logs', 'keys', 'combos', 'claude', 'sessions', 'leases', 'notifications', 'usage', 'prices', 'team'] as const;
export type Topic = (typeof TOPICS)[number];

export interface LoadStatusState {
  /** The message of each topic's failed read (absent: none failed, or a retry is running). */
  errors: Partial<Record<Topic, string>>;
  fail(topic: Topic, message: string): void;
  clear(topic: Topic): void;
}

export function createLoadStatus() {
  return createStore<LoadStatusState>()((set, get) => ({
    errors: {},
    fail(topic, message) {
      set((s) => ({ errors: { ...s.errors, [topic]: message } }));
    },
    clear(topic) {
      if (!(topic in get().errors)) return;
      set((s) => {
        const errors = { ...s.errors };
        delete errors[topic];
        return { errors };
      });
    },
  }));
}

export type LoadStatusStore = ReturnType<typeof createLoadStatus>;
