// Words for a waited retry of the same target (request log): how long the attempt waited before
// sending the request again to the same connection and model, and why.
import type { AttemptEntry } from '../../shared/model';
import { formatMs } from './format';

export function describeRetry(a: AttemptEntry): string | null {
  const r = a.retry;
  if (!r) return null;
  const after = r.afterStatus !== null ? `a ${r.afterStatus}` : 'a failure';
  return r.why === 'hinted'
    ? `waited retry: sent again to the same model after ${formatMs(r.waitedMs)}, the wait the upstream asked for after ${after}`
    : `waited retry: sent again to the same model after ${formatMs(r.waitedMs)}, following ${after} that gave no retry time`;
}
