// React access to the dashboard's stores: a context for the Dashboard and a typed selector hook.
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { StoreApi } from 'zustand/vanilla';
import type { Dashboard } from '../stores/dashboard';

export const DashboardContext = createContext<Dashboard | null>(null);

export function useDashboard(): Dashboard {
  const d = useContext(DashboardContext);
  if (!d) throw new Error('useDashboard outside DashboardContext');
  return d;
}

/** Selects from one of the dashboard's stores; re-renders when the selected value changes. */
export function useSel<S, U>(store: StoreApi<S>, select: (s: S) => U): U {
  return useStore(store, select);
}
