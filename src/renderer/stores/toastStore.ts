// Toasts: short notices for results and for errors that belong to no single field.
import { createStore } from 'zustand/vanilla';

export type ToastKind = 'success' | 'error' | 'info';

export interface Toast {
  id: number;
  kind: ToastKind;
  message: string;
}

export interface ToastState {
  items: Toast[];
  push(kind: ToastKind, message: string): number;
  dismiss(id: number): void;
}

/** At most this many toasts stay on screen; older ones drop off. */
export const MAX_TOASTS = 4;

export function createToastStore() {
  let seq = 0;
  return createStore<ToastState>()((set) => ({
    items: [],
    push(kind, message) {
      const id = ++seq;
      set((s) => {
        // The same message twice in a row (e.g. a double click) shows once.
        const last = s.items[s.items.length - 1];
        if (last && last.kind === kind && last.message === message) return s;
        return { items: [...s.items, { id, kind, message }].slice(-MAX_TOASTS) };
      });
      return id;
    },
    dismiss(id) {
      set((s) => ({ items: s.items.filter((t) => t.id !== id) }));
    },
  }));
}

export type ToastStore = ReturnType<typeof createToastStore>;
