// What the Sessions and Leases pages read from the sessions store: their list (read when the page
// opens, and again on Refresh: pins and leases slide with every request, so they are not pushed),
// whether a read is running, and the ids with a forget or release in flight.
import { useEffect } from 'react';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import type { SessionsState } from '../../stores/sessionsStore';

type List = 'sessions' | 'leases';

const readList = (s: SessionsState, which: List) => (which === 'sessions' ? s.loadSessions() : s.loadLeases());

export function useSessionsList<K extends List>(which: K) {
  const d = useDashboard();
  const view = useSel(d.sessions, (s): SessionsState[K] => s[which]);
  const loading = useSel(d.sessions, (s) => s.loading);
  const pending = useSel(d.sessions, (s) => s.pending);
  useEffect(() => {
    void readList(d.sessions.getState(), which);
  }, [d, which]);
  return { view, loading, pending, store: d.sessions.getState(), refresh: () => void readList(d.sessions.getState(), which) };
}
