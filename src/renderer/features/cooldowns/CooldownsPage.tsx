// Cooldown manager: every connection out of routing for a transient reason, the model lockouts
// and the terminal states on one page. Cooldowns can be cleared for one connection, a selection,
// all of a provider, or all; terminal states are shown and never cleared here. The cooldown rules
// are edited at the bottom.
import { useState } from 'react';
import { LoadState } from '../../components/LoadState';
import { DataTable, RowAction } from '../../components/DataTable';
import { Badge, Card, EmptyState, PageHeader } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useServerNow } from '../../hooks/useNow';
import { hrefOf } from '../../hooks/useRoute';
import { healthNow, heldTargets, outOfRouting, type HeldTarget } from '../../lib/connectionState';
import { HealthCountBadges } from '../../components/status';
import { formatAgo, formatRemaining } from '../../lib/format';
import { describeErrorType, TERMINAL_LABELS } from '../../lib/reasons';
import { isTerminalStatus } from '../../../shared/model';
import { OperatorRulesEditor, ProviderDefaultsEditor } from '../errorRules/RuleEditors';
import { useKnownProviders } from '../errorRules/ErrorRulesPage';
import { SettingRow } from '../settings/SettingRow';
import { settingOf } from '../../stores/settingsStore';

const RULE_KEYS = [
  'connectionCooldown.apikeyBaseMs',
  'connectionCooldown.oauthBaseMs',
  'connectionCooldown.maxBackoffSteps',
  'streamStallCooldown.enabled',
  'connectionCooldown.useUpstreamRetryHints',
];

/** Holds the cooldown and lockout tables do not list. */
const OTHER_KINDS = new Set<HeldTarget['kind']>(['paused', 'model_paused', 'key_hold', 'breaker_open', 'provider_skipped']);

const HOLD_WORDS: Partial<Record<HeldTarget['kind'], string>> = {
  paused: 'Queue paused',
  model_paused: 'Model queue paused',
  key_hold: 'Held after a failure',
  breaker_open: 'Breaker open',
  provider_skipped: 'Provider skipped',
};

function HoldAction({ hold: h, busy }: { hold: HeldTarget; busy: boolean }) {
  const store = useDashboard().resilience.getState();
  if (h.clearedBy === 'reset') {
    return (
      <td className="actions-col">
        <a className="btn btn-sm btn-ghost" href={hrefOf('breakers')}>
          Breakers
        </a>
      </td>
    );
  }
  if (h.clearedBy !== 'clear') return <td className="actions-col" />;
  return h.model !== null ? (
    <RowAction
      disabled={busy}
      onClick={() => void store.clearLockout({ provider: h.provider, connectionId: h.connectionId, connectionName: h.name, model: h.model! })}
      label={`Re-enable ${h.model} on ${h.name}`}
    >
      Re-enable
    </RowAction>
  ) : (
    <RowAction disabled={busy} onClick={() => void store.clear({ connectionIds: [h.connectionId] })} label={`Clear ${h.name}`}>
      Clear
    </RowAction>
  );
}

export function CooldownsPage() {
  const d = useDashboard();
  const now = useServerNow();
  const loaded = useSel(d.resilience, (s) => s.loaded);
  const entries = useSel(d.resilience, (s) => s.cooldowns);
  const lockouts = useSel(d.resilience, (s) => s.lockouts);
  const selected = useSel(d.resilience, (s) => s.selected);
  const busy = useSel(d.resilience, (s) => s.busy);
  const settingsView = useSel(d.settings, (s) => s.view);
  const [provider, setProvider] = useState('');
  const store = d.resilience.getState();
  const out = outOfRouting(entries, lockouts, now);
  const coolingIds = out.cooling.map((c) => c.connectionId);
  const liveSelection = selected.filter((id) => coolingIds.includes(id));
  const providers = [...new Set([...out.cooling.map((c) => c.provider), ...out.lockouts.map((l) => l.provider)])].sort();
  const chosenProvider = providers.includes(provider) ? provider : (providers[0] ?? '');
  const allSelected = coolingIds.length > 0 && liveSelection.length === coolingIds.length;
  // The engine's health model: the same counts as the sidebar and the Connections page, and the
  // holds the cooldown list does not show (queue pauses, breaker holds), so nothing holds a
  // connection or a model unseen here.
  const model = healthNow(useSel(d.resilience, (s) => s.health), now);
  // A pause under a cooldown or lockout row is lifted by that row's button: not listed twice.
  const otherHolds = heldTargets(model, now).filter(
    (h) =>
      OTHER_KINDS.has(h.kind) &&
      !(h.kind === 'paused' && coolingIds.includes(h.connectionId)) &&
      !(h.kind === 'model_paused' && out.lockouts.some((l) => l.connectionId === h.connectionId && l.model === h.model)),
  );
  const nothingOut = out.cooling.length === 0 && out.lockouts.length === 0 && otherHolds.length === 0;
  const knownProviders = useKnownProviders();

  return (
    <div className="page">
      <PageHeader
        title="Cooldown manager"
        description="Connections out of routing for a transient reason come back by themselves when their time is up. Clear them here to send traffic to them now."
        actions={
          <>
            {providers.length > 0 && (
              <form
                className="provider-clear"
                onSubmit={(e) => {
                  e.preventDefault();
                  if (chosenProvider) void store.clear({ all: true, provider: chosenProvider });
                }}
              >
                <label htmlFor="clear-provider" className="sr-only">
                  Provider to clear
                </label>
                <select id="clear-provider" value={chosenProvider} onChange={(e) => setProvider(e.target.value)}>
                  {providers.map((p) => (
                    <option key={p} value={p}>
                      {p}
                    </option>
                  ))}
                </select>
                <button type="submit" className="btn" disabled={busy}>
                  Clear provider
                </button>
              </form>
            )}
            <button type="button" className="btn" disabled={busy || nothingOut} onClick={() => void store.clear({ all: true })}>
              Clear all
            </button>
          </>
        }
      />
      {!loaded ? (
        <LoadState topics="resilience" what="cooldowns" />
      ) : (
        <>
          {model && model.counts.total > 0 && (
            <div className="summary-row" aria-label="Connection states">
              <HealthCountBadges counts={model.counts} />
            </div>
          )}
          <Card
            title="Connections cooling down"
            actions={
              out.cooling.length > 0 && (
                <div className="toolbar">
                  <button
                    type="button"
                    className="btn btn-sm"
                    disabled={busy || liveSelection.length === 0}
                    onClick={() => void store.clear({ connectionIds: liveSelection })}
                  >
                    Clear selected{liveSelection.length ? ` (${liveSelection.length})` : ''}
                  </button>
                </div>
              )
            }
          >
            {out.cooling.length === 0 ? (
              <EmptyState title="Nothing is cooling down">Every enabled connection without a terminal state is in routing.</EmptyState>
            ) : (
              <DataTable
                label="Connections cooling down"
                columns={[
                  {
                    key: 'select',
                    className: 'check-col',
                    label: (
                      <input
                        type="checkbox"
                        aria-label="Select all cooling connections"
                        checked={allSelected}
                        onChange={(e) => store.setSelected(e.target.checked ? coolingIds : [])}
                      />
                    ),
                  },
                  'Connection',
                  'Provider',
                  'Back in',
                  'Reason',
                  'Backoff',
                ]}
                actions
              >
                {out.cooling.map((c) => (
                  <tr key={c.connectionId} data-testid="cooling-row">
                    <td className="check-col">
                      <input
                        type="checkbox"
                        aria-label={`Select ${c.name}`}
                        checked={liveSelection.includes(c.connectionId)}
                        onChange={() => store.toggleSelected(c.connectionId)}
                      />
                    </td>
                    <td>
                      <strong>{c.name}</strong>
                      {!c.enabled && <Badge tone="neutral">disabled</Badge>}
                    </td>
                    <td>
                      <code className="mono">{c.provider}</code> <span className="muted">{c.authClass}</span>
                    </td>
                    <td className="tabular">
                      <Badge tone="warn" dot>
                        {formatRemaining(c.remainingMs)}
                      </Badge>
                    </td>
                    <td className="reason-cell">
                      <div>{describeErrorType(c.lastErrorType) ?? 'Cooling down'}{c.errorCode ? <span className="muted"> · {c.errorCode}</span> : null}</div>
                      {c.lastError && <div className="muted small">{c.lastError}</div>}
                      {c.lastErrorAt && <div className="muted small">{formatAgo(c.lastErrorAt, now)}</div>}
                    </td>
                    <td className="tabular">{c.backoffLevel}</td>
                    <RowAction disabled={busy} onClick={() => void store.clear({ connectionIds: [c.connectionId] })} label={`Clear ${c.name}`}>
                      Clear
                    </RowAction>
                  </tr>
                ))}
              </DataTable>
            )}
          </Card>

          <Card title="Model lockouts" description="One model taken out of routing on one connection; the connection keeps serving its other models.">
            {out.lockouts.length === 0 ? (
              <EmptyState title="No model is locked out" />
            ) : (
              <DataTable label="Model lockouts" columns={['Model', 'Connection', 'Scope', 'Back in', 'Reason', 'Failures']} actions>
                {out.lockouts.map((l) => (
                  <tr key={`${l.connectionId}:${l.scope}:${l.model}`}>
                    <td>
                      <code className="mono">{l.model}</code>
                    </td>
                    <td>
                      {l.connectionName} <span className="muted">({l.provider})</span>
                    </td>
                    <td>{l.scope === 'family' ? 'models sharing its quota' : 'this model only'}</td>
                    <td>
                      <Badge tone="warn" dot>
                        {formatRemaining(l.expiresAt - now)}
                      </Badge>
                    </td>
                    <td>
                      {describeErrorType(l.reason) ?? l.reason}
                      {l.status !== null && <span className="muted"> · {l.status}</span>}
                    </td>
                    <td className="tabular">{l.failureCount}</td>
                    <RowAction disabled={busy} onClick={() => void store.clearLockout(l)} label={`Re-enable ${l.model} on ${l.connectionName}`}>
                      Re-enable
                    </RowAction>
                  </tr>
                ))}
              </DataTable>
            )}
          </Card>

          {otherHolds.length > 0 && (
            <Card title="Other holds" description="Queue pauses on the upstream's Retry-After and breaker holds. They lift by themselves at the time shown.">
              <DataTable label="Other holds" columns={['Connection', 'Model', 'What', 'Back in', 'Reason']} actions>
                {otherHolds.map((h) => (
                  <tr key={`${h.connectionId}:${h.kind}:${h.model ?? ''}`} data-testid="hold-row">
                    <td>
                      <strong>{h.name}</strong> <span className="muted">({h.provider})</span>
                    </td>
                    <td>{h.model ? <code className="mono">{h.model}</code> : 'every model'}</td>
                    <td>{HOLD_WORDS[h.kind] ?? h.kind}</td>
                    <td className="tabular">
                      <Badge tone="warn" dot>
                        {h.until === null ? 'when reset' : formatRemaining(h.until - now)}
                      </Badge>
                    </td>
                    <td className="reason-cell">{h.reason}</td>
                    <HoldAction hold={h} busy={busy} />
                  </tr>
                ))}
              </DataTable>
            </Card>
          )}

          <Card
            title="Terminal states"
            description="Not cooldowns: they last until the credentials or configuration change. They are shown here and never cleared."
          >
            {out.terminal.length === 0 ? (
              <EmptyState title="No connection is in a terminal state" />
            ) : (
              <DataTable label="Terminal states" columns={['Connection', 'Provider', 'State', 'Reason', 'Since']} actions>
                {out.terminal.map((t) => (
                  <tr key={t.connectionId}>
                    <td>
                      <strong>{t.name}</strong>
                    </td>
                    <td>
                      <code className="mono">{t.provider}</code>
                    </td>
                    <td>
                      <Badge tone="danger" dot>
                        {isTerminalStatus(t.status) ? TERMINAL_LABELS[t.status] : t.status}
                      </Badge>
                    </td>
                    <td>
                      {describeErrorType(t.lastErrorType) ?? '—'}
                      {t.lastError && <div className="muted small">{t.lastError}</div>}
                    </td>
                    <td>{t.lastErrorAt ? formatAgo(t.lastErrorAt, now) : '—'}</td>
                    <td className="actions-col">
                      <a className="btn btn-sm btn-ghost" href={hrefOf('connections')}>
                        Edit connection
                      </a>
                    </td>
                  </tr>
                ))}
              </DataTable>
            )}
          </Card>

          <Card title="Cooldown rules" description="How long a failing connection sits out. Repeated failures double the cooldown, up to the maximum number of steps.">
            {!settingsView ? (
              <LoadState topics="settings" what="rules" />
            ) : (
              <div className="setting-list">
                {RULE_KEYS.map((k) => settingOf(settingsView, k))
                  .filter((s) => s !== undefined)
                  .map((s) => (
                    <SettingRow key={s.key} setting={s} />
                  ))}
              </div>
            )}
          </Card>

          <Card
            title="Error cooldown rules"
            description={
              <>
                Your rules for provider errors (the first match wins) and the general per-provider defaults.{' '}
                <a className="plain-link" href={hrefOf('errorRules')}>
                  Test an error and see the built-in rules
                </a>
                .
              </>
            }
          >
            {!settingsView ? (
              <LoadState topics="settings" what="error rules" />
            ) : (
              <div className="stack">
                <h3 className="subhead">Rules</h3>
                <OperatorRulesEditor providers={knownProviders} />
                <h3 className="subhead">Per-provider defaults</h3>
                <ProviderDefaultsEditor providers={knownProviders} />
              </div>
            )}
          </Card>
        </>
      )}
    </div>
  );
}
