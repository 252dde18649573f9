// The engine's "now" for countdowns, redrawn once a second from local time plus the measured
// offset to the engine's clock. A local ticker only: it never calls the engine.
import { useEffect, useState } from 'react';
import { useDashboard, useSel } from './dashboardContext';

export function useServerNow(tickMs = 1_000): number {
  const d = useDashboard();
  const offset = useSel(d.app, (s) => s.clockOffsetMs);
  const [local, setLocal] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setLocal(Date.now()), tickMs);
    return () => clearInterval(t);
  }, [tickMs]);
  return local + offset;
}
