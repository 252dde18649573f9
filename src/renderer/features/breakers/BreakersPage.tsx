// Provider breakers: state per provider (read lazily: an OPEN breaker past its reset time shows
// HALF_OPEN), failures against the degrade and open thresholds, time to half-open, the window
// gate, and reset (one provider or all).
import { BreakerBadge } from '../../components/status';
import { Card, EmptyState, PageHeader, Spinner } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { hrefOf } from '../../hooks/useRoute';
import { breakerStateAt } from '../../lib/connectionState';
import { formatAgo, formatDuration, formatRemaining } from '../../lib/format';
import type { BreakerView } from '../../../shared/model';

function FailureMeter({ b }: { b: BreakerView }) {
  const max = Math.max(b.failureThreshold, b.failures, 1);
  const pct = Math.min(100, (b.failures / max) * 100);
  const degradePct = Math.min(100, (b.degradationThreshold / max) * 100);
  return (
    <div className="meter-wrap">
      <div
        className="meter"
        role="meter"
        aria-label={`${b.provider} failures`}
        aria-valuemin={0}
        aria-valuemax={b.failureThreshold}
        aria-valuenow={b.failures}
      >
        <div className={`meter-fill ${b.failures >= b.failureThreshold ? 'danger' : b.failures >= b.degradationThreshold ? 'warn' : 'ok'}`} style={{ width: `${pct}%` }} />
        <div className="meter-mark" style={{ left: `${degradePct}%` }} title={`degrades at ${b.degradationThreshold}`} />
      </div>
      <span className="tabular small">
        {b.failures} / {b.failureThreshold}
        <span className="muted"> · degrades at {b.degradationThreshold}</span>
      </span>
    </div>
  );
}

export function BreakersPage() {
  const d = useDashboard();
  const now = useServerNow();
  const loaded = useSel(d.resilience, (s) => s.loaded);
  const breakers = useSel(d.resilience, (s) => s.breakers);
  const busy = useSel(d.resilience, (s) => s.busy);
  const connections = useSel(d.connections, (s) => s.list);
  const store = d.resilience.getState();
  const quietProviders = [...new Set(connections.map((c) => c.provider))].filter((p) => !breakers.some((b) => b.provider === p)).sort();

  return (
    <div className="page">
      <PageHeader
        title="Provider breakers"
        description="A breaker takes a whole provider out of routing after repeated provider-level failures (408, 500, 502, 503, 504). Rate limits and bad keys never trip it; they cool single connections instead."
        actions={
          <button type="button" className="btn" disabled={busy || breakers.length === 0} onClick={() => void store.resetBreakers()}>
            Reset all
          </button>
        }
      />
      {!loaded ? (
        <Spinner label="Loading breakers" />
      ) : breakers.length === 0 ? (
        <EmptyState title="No provider has failed">
          Breakers appear here once a provider reports a provider-level failure. Every provider is <strong>CLOSED</strong>: traffic flows normally.
        </EmptyState>
      ) : (
        <Card>
          <div className="table-wrap">
            <table className="table" aria-label="Provider breakers">
              <thead>
                <tr>
                  <th>Provider</th>
                  <th>State</th>
                  <th>Failures</th>
                  <th>Half-open in</th>
                  <th>Last failure</th>
                  <th>Window gate</th>
                  <th className="actions-col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {breakers.map((b) => {
                  const state = breakerStateAt(b, now);
                  return (
                    <tr key={b.provider} data-testid="breaker-row">
                      <td>
                        <strong>{b.provider}</strong>
                        <div className="muted small">{b.profile} profile · reset {formatDuration(b.resetTimeoutMs)}</div>
                      </td>
                      <td>
                        <BreakerBadge state={state} />
                      </td>
                      <td>
                        <FailureMeter b={b} />
                      </td>
                      <td className="tabular">
                        {state === 'OPEN' && b.halfOpenAt ? formatRemaining(b.halfOpenAt - now) : state === 'HALF_OPEN' ? 'probe allowed' : '—'}
                      </td>
                      <td>
                        {b.lastFailureAt ? (
                          <>
                            {b.lastFailureStatus ?? 'transport'} <span className="muted">· {formatAgo(b.lastFailureAt, now)}</span>
                          </>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td className="tabular">
                        {b.providerCooldownUntil && b.providerCooldownUntil > now ? `skipped ${formatRemaining(b.providerCooldownUntil - now)}` : '—'}
                      </td>
                      <td className="actions-col">
                        <button
                          type="button"
                          className="btn btn-sm"
                          disabled={busy}
                          onClick={() => void store.resetBreakers(b.provider)}
                          aria-label={`Reset ${b.provider} breaker`}
                        >
                          Reset
                        </button>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        </Card>
      )}
      {loaded && quietProviders.length > 0 && breakers.length > 0 && (
        <p className="muted">
          No failures recorded for {quietProviders.join(', ')}. Thresholds per profile are in <a href={hrefOf('settings')}>Resilience settings</a>.
        </p>
      )}
    </div>
  );
}
