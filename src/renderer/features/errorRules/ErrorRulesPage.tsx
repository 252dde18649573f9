// Error rules: how Switchyard reads provider errors. A live tester (provider, status, body) runs
// the engine's real restatement and matcher against the saved rules and says which rule matched
// and what it would do; the operator's rules and per-provider defaults are edited below; the
// built-in restatements, rules and allowlists are listed read-only.
import { useEffect, useState } from 'react';
import { LoadState } from '../../components/LoadState';
import { DataTable } from '../../components/DataTable';
import { TechName } from '../../components/TechName';
import { Badge, Card, EmptyState, Field, Mono, PageHeader, Spinner } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { describeError } from '../../lib/errors';
import { formatDuration } from '../../lib/format';
import { describeErrorType } from '../../lib/reasons';
import { settingOf } from '../../stores/settingsStore';
import type { ErrorRuleTestResult, ErrorRulesView } from '../../../shared/model';
import { SettingRow } from '../settings/SettingRow';
import { OperatorRulesEditor, ProviderDatalist, ProviderDefaultsEditor } from './RuleEditors';

const SOURCE_LABEL: Record<ErrorRuleTestResult['matched']['source'], string> = {
  operator: 'Your rule',
  builtin: 'Built-in rule',
  default: 'Provider default',
  detector: 'Built-in detector',
  none: 'No rule',
};

/** Providers known to the dashboard: configured connections and every provider a rule names. */
export function useKnownProviders(extra: string[] = []): string[] {
  const d = useDashboard();
  const conns = useSel(d.connections, (s) => s.list);
  return [...new Set([...conns.map((c) => c.provider), ...extra])].sort();
}

function RuleTester({ providers }: { providers: string[] }) {
  const d = useDashboard();
  const view = useSel(d.settings, (s) => s.view);
  // Re-run when the saved rules change, so the answer always reflects what the engine would do.
  const rulesVersion = JSON.stringify([settingOf(view, 'providerErrorRules')?.value, settingOf(view, 'providerErrorDefaults')?.value]);
  const [provider, setProvider] = useState(providers[0] ?? '');
  const [status, setStatus] = useState('429');
  const [body, setBody] = useState('');
  // Each answer is kept with the input it answers, so a stale one is never shown for new input.
  const [answer, setAnswer] = useState<{ key: string; result: ErrorRuleTestResult | null; error: string | null } | null>(null);
  const p = provider.trim();
  const s = Number(status);
  const invalid = !p ? 'none' : !Number.isInteger(s) || s < 400 || s > 599 ? 'Enter a status between 400 and 599.' : null;
  const key = JSON.stringify([p, s, body, rulesVersion]);

  useEffect(() => {
    if (invalid !== null) return;
    let cancelled = false;
    const t = setTimeout(() => {
      d.bridge
        .testErrorRule({ provider: p, status: s, body })
        .then((r) => !cancelled && setAnswer({ key, result: r, error: null }))
        .catch((err: unknown) => !cancelled && setAnswer({ key, result: null, error: describeError(err).message }));
    }, 250);
    return () => {
      cancelled = true;
      clearTimeout(t);
    };
  }, [d, p, s, body, key, invalid]);
  const current = answer?.key === key ? answer : null;
  const result = invalid === null ? (current?.result ?? null) : null;
  const error = invalid !== null && invalid !== 'none' ? invalid : (current?.error ?? null);
  const busy = invalid === null && current === null;

  return (
    <Card title="Test an error" description="Paste an error a provider sent. The answer comes from the engine's own matcher and your saved rules.">
      <div className="tester">
        <div className="tester-inputs">
          <ProviderDatalist id="tester-providers" providers={providers} />
          <Field label="Provider">{(p) => <input {...p} list="tester-providers" value={provider} onChange={(e) => setProvider(e.target.value)} placeholder="e.g. agentrouter" />}</Field>
          <Field label="Status">{(p) => <input {...p} inputMode="numeric" value={status} onChange={(e) => setStatus(e.target.value)} className="num-input" />}</Field>
          <Field label="Error body" className="grow">
            {(p) => <textarea {...p} rows={5} value={body} onChange={(e) => setBody(e.target.value)} placeholder='{"error":{"message":"用户额度不足"}}' spellCheck={false} />}
          </Field>
        </div>
        <div className="tester-result" aria-live="polite" data-testid="rule-test-result">
          {error ? (
            <div className="field-error" role="alert">
              {error}
            </div>
          ) : !result ? (
            busy ? <Spinner label="Testing" /> : <p className="muted">Name a provider to see what its error would do.</p>
          ) : (
            <>
              <div className="tester-headline">
                <Badge tone={result.matched.source === 'none' ? 'neutral' : result.matched.honored ? 'accent' : 'info'}>{SOURCE_LABEL[result.matched.source]}</Badge>
                {result.matched.id && <Mono>{result.matched.id}</Mono>}
                {result.matched.source === 'operator' && result.matched.index !== null && <span className="muted">rule {result.matched.index + 1}</span>}
                {!result.matched.honored && result.matched.source !== 'none' && <Badge tone="neutral">informational</Badge>}
              </div>
              <p className="tester-effect" data-testid="rule-test-effect">
                {result.effect}
              </p>
              <dl className="kv">
                <dt>Status</dt>
                <dd>
                  {result.restated ? (
                    <>
                      {result.restated.fromStatus} → <strong>{result.status}</strong>
                    </>
                  ) : (
                    result.status
                  )}
                </dd>
                <dt>Reason</dt>
                <dd>
                  {describeErrorType(result.reason)} <TechName name={result.reason} label="Show the reason's code" />
                </dd>
                <dt>Held against</dt>
                <dd>{result.scope}</dd>
                <dt>Fails over</dt>
                <dd>{result.failover ? 'yes' : 'no'}</dd>
                {result.cooldownMs !== null && (
                  <>
                    <dt>Cooldown</dt>
                    <dd>{formatDuration(result.cooldownMs)}</dd>
                  </>
                )}
                {result.clientRetryAfterMs !== null && (
                  <>
                    <dt>Client told</dt>
                    <dd>Retry-After {Math.ceil(result.clientRetryAfterMs / 1000)} s</dd>
                  </>
                )}
              </dl>
              {result.notes.length > 0 && (
                <ul className="tester-notes">
                  {result.notes.map((n) => (
                    <li key={n}>{n}</li>
                  ))}
                </ul>
              )}
            </>
          )}
        </div>
      </div>
    </Card>
  );
}

function BuiltInRules({ view }: { view: ErrorRulesView }) {
  return (
    <Card title="Built-in rules" description="Shipped with Switchyard; read-only. Your rules are checked before them.">
      <h3 className="subhead">Status restatements</h3>
      <p className="muted small">A gateway that reports a temporary quota with the wrong status gets it corrected before anything reads it.</p>
      <DataTable label="Status restatements" columns={['Rule', 'Provider', 'Restates', 'When the text has', 'Unless it has', 'Client told']}>
        {view.restatements.map((r) => (
          <tr key={r.id}>
            <td>
              <Mono>{r.id}</Mono>
            </td>
            <td>
              <Mono>{r.provider}</Mono>
            </td>
            <td>
              {r.fromStatuses.join(', ')} → {r.toStatus}
            </td>
            <td>{r.textMarkers.join(' · ')}</td>
            <td>{r.excludeMarkers.join(' · ') || '—'}</td>
            <td>{r.defaultRetryAfterMs !== null ? `${r.defaultRetryAfterMs / 1000} s` : '—'}</td>
          </tr>
        ))}
      </DataTable>
      <h3 className="subhead">Classification rules</h3>
      <DataTable label="Built-in error rules" columns={['Rule', 'Providers', 'Matches', 'Reason', 'Holds', 'What it is for']}>
        {view.builtIn.map((r) => (
          <tr key={r.id}>
            <td>
              <Mono>{r.id}</Mono>
            </td>
            <td>{r.providers.join(', ')}</td>
            <td>
              {[r.statuses ? `status ${r.statuses.join('/')}` : null, r.textMarkers ? `text ${r.textMarkers.join(' · ')}` : null, r.codes ? `code ${r.codes.join(', ')}` : null]
                .filter(Boolean)
                .join('; ')}
            </td>
            <td>
              {describeErrorType(r.reason)} <TechName name={r.reason} label="Show the reason's code" />
            </td>
            <td>
              {r.scope}
              {r.baseCooldownMs !== null && <span className="muted"> · {formatDuration(r.baseCooldownMs)}</span>}
            </td>
            <td className="small">{r.note}</td>
          </tr>
        ))}
      </DataTable>
      <dl className="kv allowlists">
        <dt>See the full error text</dt>
        <dd>{view.fullTextProviders.join(', ')} (others: only the error's code and type)</dd>
        <dt>Scope acted on</dt>
        <dd>{view.honorsScopeProviders.join(', ')} (others: informational)</dd>
        <dt>Egress-bucketed (cooled by shared IP)</dt>
        <dd>{view.egressBucketedProviders.join(', ')}</dd>
        <dt>Bypass both lists (your rules or defaults)</dt>
        <dd>{view.operatorProviders.length ? view.operatorProviders.join(', ') : '—'}</dd>
      </dl>
    </Card>
  );
}

export function ErrorRulesPage() {
  const d = useDashboard();
  const settingsView = useSel(d.settings, (s) => s.view);
  const [view, setView] = useState<ErrorRulesView | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  /** Bumped by Retry: reads the built-in rules again. */
  const [attempt, setAttempt] = useState(0);
  const rulesVersion = JSON.stringify([settingOf(settingsView, 'providerErrorRules')?.value, settingOf(settingsView, 'providerErrorDefaults')?.value]);
  useEffect(() => {
    let cancelled = false;
    d.bridge
      .listErrorRules()
      .then((v) => !cancelled && setView(v))
      .catch((err: unknown) => !cancelled && setLoadError(describeError(err).message));
    return () => {
      cancelled = true;
    };
  }, [d, rulesVersion, attempt]);
  const providers = useKnownProviders([...(view?.builtIn.flatMap((r) => r.providers) ?? []), ...(view?.restatements.map((r) => r.provider) ?? [])]);
  const probe = settingOf(settingsView, 'egress.probeUrl');

  return (
    <div className="page">
      <PageHeader
        title="Error rules"
        description="How provider errors are read: which status they really mean, what they are held against (a model, a connection or the whole provider) and for how long."
      />
      <RuleTester providers={providers} />
      <Card
        title="Your rules"
        description="Checked first, in order; the first match wins. A rule matches a status, a piece of the error text (case-insensitive, never a pattern), or both. The built-in detectors for bans, spent credits, per-request denials and concurrency limits keep their own phrases, and HTTP 400 is never checked."
      >
        {!settingsView ? <LoadState topics="settings" what="rules" /> : <OperatorRulesEditor providers={providers} />}
      </Card>
      <Card
        title="Per-provider defaults"
        description="For a provider's 402, 403, 408, 429 and 5xx errors that no rule matched: the longer of this and the upstream's retry hint. Never for request errors (400, 404, 409, 413, 422) or a 401, never shortening a longer cooldown, never replacing a terminal state."
      >
        {!settingsView ? <LoadState topics="settings" what="defaults" /> : <ProviderDefaultsEditor providers={providers} />}
      </Card>
      {probe && (
        <Card title="Egress IP" description="Connections of an IP-bucketed provider that leave through the same IP are cooled together. The IP comes from this probe.">
          <div className="setting-list">
            <SettingRow setting={probe} />
          </div>
        </Card>
      )}
      {loadError && !view ? (
        <div role="alert" data-testid="load-error">
          <EmptyState
            title="Could not load the built-in rules"
            action={
              <button type="button" className="btn" onClick={() => {
                  setLoadError(null);
                  setAttempt((n) => n + 1);
                }}>
                Retry
              </button>
            }
          >
            {loadError}
          </EmptyState>
        </div>
      ) : !view ? (
        <Spinner label="Loading built-in rules" />
      ) : (
        <BuiltInRules view={view} />
      )}
    </div>
  );
}
