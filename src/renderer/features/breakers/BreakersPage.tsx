// Provider breakers: one row per provider with its state (read lazily: an OPEN breaker past its
// reset time shows HALF-OPEN), recent provider-wide failures against the degrade and open
// thresholds, when the next probe may go, the last failure, the optional provider cooldown, and
// reset (one provider or all). Below the table, what each state means and what counts as a failure.
import { Fragment } from 'react';
import { LoadState } from '../../components/LoadState';
import { DataTable, RowAction } from '../../components/DataTable';
import { BreakerBadge } from '../../components/status';
import { Card, EmptyState, PageHeader } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { hrefOf } from '../../hooks/useRoute';
import { breakerStateAt } from '../../lib/connectionState';
import { formatAgo, formatDuration, formatRemaining } from '../../lib/format';
import { settingOf } from '../../stores/settingsStore';
import type { AuthClass, BreakerState, BreakerView } from '../../../shared/model';

const PROFILE_LABELS: Record<AuthClass, string> = {
  apikey: 'API-key',
  oauth: 'OAuth',
  local: 'Local',
};

const STATE_HELP: Record<BreakerState, string> = {
  CLOSED: 'Normal: requests reach the provider.',
  DEGRADED:
    'Early warning: recent provider-wide failures passed the degrade mark. Requests still reach the provider. It goes back to CLOSED by itself once the provider answers well again or the failures are old enough to leave the window.',
  OPEN:
    'The provider is skipped: requests go to connections of other providers that serve the model, or get a 503 with a Retry-After when none can. Nothing is sent to it until its reset time is over.',
  HALF_OPEN:
    'The reset time is over: one probe request goes to the connection most likely to be healthy; meanwhile other requests go elsewhere or are told to retry in a second. A success on any connection of the provider closes the breaker; a failed probe opens it again for another reset time.',
};

const STATE_ORDER: readonly BreakerState[] = ['CLOSED', 'DEGRADED', 'OPEN', 'HALF_OPEN'];

function FailureMeter({ b }: { b: BreakerView }) {
  const max = Math.max(b.failureThreshold, b.failures, 1);
  const pct = Math.min(100, (b.failures / max) * 100);
  const degradePct = Math.min(100, (b.degradationThreshold / max) * 100);
  return (
    <div className="meter-wrap">
      <div
        className="meter"
        role="meter"
        aria-label={`${b.provider} recent failures`}
        aria-valuemin={0}
        aria-valuemax={b.failureThreshold}
        aria-valuenow={b.failures}
      >
        <div className={`meter-fill ${b.failures >= b.failureThreshold ? 'danger' : b.failures >= b.degradationThreshold ? 'warn' : 'ok'}`} style={{ width: `${pct}%` }} />
        <div className="meter-mark" style={{ left: `${degradePct}%` }} title={`DEGRADED at ${b.degradationThreshold}`} />
      </div>
      <span className="tabular small">
        {b.failures} of {b.failureThreshold} to open
        <span className="muted"> · DEGRADED at {b.degradationThreshold}</span>
      </span>
    </div>
  );
}

function nextProbe(b: BreakerView, state: BreakerState, now: number): string {
  if (state === 'OPEN' && b.halfOpenAt) return `in ${formatRemaining(b.halfOpenAt - now)}`;
  if (state === 'HALF_OPEN') return 'now: the next request tests it';
  return '—';
}

function lastFailure(b: BreakerView, now: number) {
  if (!b.lastFailureAt) return '—';
  return (
    <>
      {b.lastFailureStatus !== null ? `HTTP ${b.lastFailureStatus}` : 'network error or timeout'}{' '}
      <span className="muted">· {formatAgo(b.lastFailureAt, now)}</span>
    </>
  );
}

export function BreakersPage() {
  const d = useDashboard();
  const now = useServerNow();
  const loaded = useSel(d.resilience, (s) => s.loaded);
  const breakers = useSel(d.resilience, (s) => s.breakers);
  const busy = useSel(d.resilience, (s) => s.busy);
  const connections = useSel(d.connections, (s) => s.list);
  const gateOn = useSel(d.settings, (s) => settingOf(s.view, 'providerCooldown.enabled')?.value === true);
  const store = d.resilience.getState();
  const quietProviders = [...new Set(connections.map((c) => c.provider))].filter((p) => !breakers.some((b) => b.provider === p)).sort();

  return (
    <div className="page">
      <PageHeader
        title="Provider breakers"
        description={
          <>
            Each provider has one breaker. When the provider as a whole is failing, its breaker opens and routing skips it until a probe gets through.
            A single bad key does not trip it: that connection is taken out of routing on its own, in the <a href={hrefOf('cooldowns')}>Cooldown manager</a>.
          </>
        }
        actions={
          <button
            type="button"
            className="btn"
            disabled={busy || breakers.length === 0}
            title="Close every breaker and forget its failures"
            onClick={() => void store.resetBreakers()}
          >
            Reset all
          </button>
        }
      />
      {!loaded ? (
        <LoadState topics="resilience" what="breakers" />
      ) : breakers.length === 0 ? (
        <EmptyState title="No providers yet">
          A provider gets its breaker with its first connection. Add one on the <a href={hrefOf('connections')}>Connections</a> page.
        </EmptyState>
      ) : (
        <Card>
          <DataTable
            label="Provider breakers"
            columns={[
              'Provider',
              'State',
              'Recent failures',
              'Next probe',
              'Last failure',
              gateOn && { key: 'Provider cooldown', label: 'Provider cooldown', title: 'Resilience settings → Provider cooldown window gate' },
            ]}
            actions
          >
            {breakers.map((b) => {
              const state = breakerStateAt(b, now);
              return (
                <tr key={b.provider} data-testid="breaker-row">
                  <td>
                    <strong>{b.provider}</strong>
                    <div className="muted small">
                      {PROFILE_LABELS[b.profile]} thresholds · probes after {formatDuration(b.resetTimeoutMs)} open
                    </div>
                  </td>
                  <td>
                    <BreakerBadge state={state} />
                  </td>
                  <td>
                    <FailureMeter b={b} />
                  </td>
                  <td className="tabular">{nextProbe(b, state, now)}</td>
                  <td>{lastFailure(b, now)}</td>
                  {gateOn && (
                    <td className="tabular">
                      {b.providerCooldownUntil && b.providerCooldownUntil > now ? `skipped for ${formatRemaining(b.providerCooldownUntil - now)}` : '—'}
                    </td>
                  )}
                  <RowAction
                    disabled={busy}
                    title="Close this breaker and forget its failures"
                    onClick={() => void store.resetBreakers(b.provider)}
                    label={`Reset ${b.provider} breaker`}
                  >
                    Reset
                  </RowAction>
                </tr>
              );
            })}
          </DataTable>
        </Card>
      )}
      {loaded && quietProviders.length > 0 && breakers.length > 0 && (
        <p className="muted">No breaker reported yet for {quietProviders.join(', ')}: it starts CLOSED.</p>
      )}
      {loaded && (
        <Card title="How a breaker decides">
          <dl className="kv">
            {STATE_ORDER.map((s) => (
              <Fragment key={s}>
                <dt>
                  <BreakerBadge state={s} />
                </dt>
                <dd>{STATE_HELP[s]}</dd>
              </Fragment>
            ))}
          </dl>
          <div className="stack">
            <p className="hint">
              <strong>What counts:</strong> HTTP 408, 500, 502, 503 and 504 answers, timeouts and refused or dropped connections, counted over a sliding
              window. The breaker opens when the count reaches the open threshold and failures are a large share of the provider&apos;s recent calls.
              Only provider-wide evidence counts: failures on more than one connection, or on the provider&apos;s only connection. Rate limits (429),
              rejected keys (401, 403) and stalled streams never trip it; they cool down the one connection or model instead.
            </p>
            <p className="hint">
              Thresholds and reset times per auth class (API key, OAuth, Local) are in <a href={hrefOf('settings')}>Resilience settings</a>. Reset closes a
              breaker at once and forgets its failures.
              {!gateOn && ' The optional provider cooldown (window gate) is off.'}
            </p>
          </div>
        </Card>
      )}
    </div>
  );
}
