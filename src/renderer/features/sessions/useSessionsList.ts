// What the Sessions and Leases pages read from the sessions store: their list (read on start and
// after a reconnect, then kept current by the engine's pushes) and the ids with a forget or release
// in flight.
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import type { SessionsState } from '../../stores/sessionsStore';

type List = 'sessions' | 'leases';

export function useSessionsList<K extends List>(which: K) {
  const d = useDashboard();
  const view = useSel(d.sessions, (s): SessionsState[K] => s[which]);
  const pending = useSel(d.sessions, (s) => s.pending);
  return { view, pending, store: d.sessions.getState() };
}
