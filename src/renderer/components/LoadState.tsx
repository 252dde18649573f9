// What a page shows while its data is on the way: a spinner, or, when the read failed, what went
// wrong and a Retry that reads the topic again (the spinner comes back while it runs).
import { useDashboard, useSel } from '../hooks/dashboardContext';
import type { Topic } from '../stores/loadStatus';
import { EmptyState, Spinner } from './ui';

/** `what` completes "Loading …" and "Could not load …"; `topics` are the reads the page waits for. */
export function LoadState({ topics, what }: { topics: Topic | Topic[]; what: string }) {
  const d = useDashboard();
  const list = Array.isArray(topics) ? topics : [topics];
  const error = useSel(d.loads, (s) => list.map((t) => s.errors[t]).find((e) => e !== undefined) ?? null);
  if (error === null) return <Spinner label={`Loading ${what}`} />;
  return (
    <div role="alert" data-testid="load-error">
      <EmptyState
        title={`Could not load ${what}`}
        action={
          <button type="button" className="btn" onClick={() => list.forEach((t) => void d.reload(t))}>
            Retry
          </button>
        }
      >
        {error}
      </EmptyState>
    </div>
  );
}
