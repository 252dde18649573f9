// The editors for the operator's error rules (settings.providerErrorRules) and per-provider
// defaults (settings.providerErrorDefaults): one row per rule, checked with the engine's schemas
// before anything is sent, saved through PATCH /api/settings as a whole list. Used by the Error
// rules page and by the Cooldown manager's "Error cooldown rules" card (R-CM-05/06).
import { useState } from 'react';
import { Badge } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import {
  CUSTOM_MAX_MINUTES,
  CUSTOM_MIN_MINUTES,
  defaultsFromRows,
  DURATION_CHOICES,
  emptyDefaultRow,
  emptyRuleRow,
  rowErrorFromMessage,
  rowsFromDefaults,
  rowsFromRules,
  rulesFromRows,
  type DefaultRow,
  type DurationInput,
  type RowErrors,
  type RuleRow,
} from '../../lib/errorRulesForm';
import { settingOf } from '../../stores/settingsStore';
import {
  ERROR_RULE_REASONS,
  ERROR_RULE_SCOPES,
  MAX_OPERATOR_RULES,
  type OperatorErrorRule,
  type ProviderErrorDefaults,
} from '../../../shared/settings';

const SCOPE_LABEL: Record<(typeof ERROR_RULE_SCOPES)[number], string> = {
  model: 'Model',
  connection: 'Connection',
  provider: 'Provider',
};

export function DurationPicker({
  value,
  onChange,
  label,
  withDefault,
  error,
}: {
  value: DurationInput;
  onChange: (d: DurationInput) => void;
  label: string;
  withDefault: boolean;
  error?: string;
}) {
  return (
    <div className="duration-picker">
      <select aria-label={label} value={value.choice} onChange={(e) => onChange({ ...value, choice: e.target.value as DurationInput['choice'] })}>
        {DURATION_CHOICES.filter((c) => withDefault || c.value !== 'default').map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
      {value.choice === 'custom' && (
        <label className="inline-label">
          <input
            type="text"
            inputMode="numeric"
            className="num-input"
            aria-label={`${label}: custom minutes`}
            aria-invalid={error ? true : undefined}
            value={value.customMinutes}
            placeholder={`${CUSTOM_MIN_MINUTES}-${CUSTOM_MAX_MINUTES}`}
            onChange={(e) => onChange({ ...value, customMinutes: e.target.value })}
          />
          <span className="muted">min</span>
        </label>
      )}
    </div>
  );
}

function RowError({ errors, k }: { errors: RowErrors; k: string }) {
  const e = errors[k];
  return e ? (
    <div className="field-error" role="alert">
      {e}
    </div>
  ) : null;
}

/** Saves one of the two settings; maps an engine error naming an item back to its row. */
function useSave<T>(key: 'providerErrorRules' | 'providerErrorDefaults', providers: () => string[]) {
  const d = useDashboard();
  const [notice, setNotice] = useState<string | null>(null);
  const [serverErrors, setServerErrors] = useState<RowErrors>({});
  const [general, setGeneral] = useState<string | null>(null);
  const saving = useSel(d.settings, (s) => !!s.saving[key]);
  const save = async (value: T) => {
    setNotice(null);
    setGeneral(null);
    setServerErrors({});
    const ok = await d.settings.getState().save(key, value);
    if (ok) {
      setNotice('Saved');
      return;
    }
    const message = d.settings.getState().errors[key] ?? 'could not be saved';
    const row = rowErrorFromMessage(message.replace(/^.*?(?=provider(ErrorRules|ErrorDefaults))/, ''), (p) => providers().indexOf(p));
    if (row) setServerErrors({ [row.key]: row.message });
    else setGeneral(message);
  };
  return { save, saving, notice, serverErrors, general, clear: () => (setNotice(null), setServerErrors({}), setGeneral(null)) };
}

export function OperatorRulesEditor({ providers }: { providers: string[] }) {
  const d = useDashboard();
  const view = useSel(d.settings, (s) => s.view);
  const stored = (settingOf(view, 'providerErrorRules')?.value ?? []) as OperatorErrorRule[];
  // Unedited, the rows follow the saved rules (pushes included); an edit starts a draft.
  const [draft, setDraft] = useState<RuleRow[] | null>(null);
  const rows = draft ?? rowsFromRules(stored);
  const dirty = draft !== null;
  const setRows = (fn: (rs: RuleRow[]) => RuleRow[]) => setDraft((d) => fn(d ?? rowsFromRules(stored)));
  const [errors, setErrors] = useState<RowErrors>({});
  const s = useSave<OperatorErrorRule[]>('providerErrorRules', () => rows.map((r) => r.provider));

  const edit = (i: number, patch: Partial<RuleRow>) => {
    setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
    setErrors({});
    s.clear();
  };
  const move = (i: number, by: number) => {
    setRows((rs) => {
      const next = [...rs];
      const [r] = next.splice(i, 1);
      next.splice(i + by, 0, r!);
      return next;
    });
  };
  const all = { ...errors, ...s.serverErrors };
  const listId = 'provider-list';

  return (
    <div className="rule-editor" aria-label="Operator error rules" role="group">
      <datalist id={listId}>
        {providers.map((p) => (
          <option key={p} value={p} />
        ))}
      </datalist>
      {rows.length === 0 ? (
        <p className="muted">No rules yet. A rule matches a provider's errors by status and/or a piece of their text; the first match wins.</p>
      ) : (
        <ol className="rule-rows">
          {rows.map((r, i) => (
            <li key={i} className="rule-row" aria-label={`Rule ${i + 1}`}>
              <div className="rule-fields">
                <label className="rule-field">
                  <span>Provider</span>
                  <input list={listId} aria-label="Provider" value={r.provider} onChange={(e) => edit(i, { provider: e.target.value })} aria-invalid={all[`${i}.provider`] ? true : undefined} />
                  <RowError errors={all} k={`${i}.provider`} />
                </label>
                <label className="rule-field narrow">
                  <span>Status</span>
                  <input aria-label="Status" inputMode="numeric" placeholder="any" value={r.status} onChange={(e) => edit(i, { status: e.target.value })} aria-invalid={all[`${i}.status`] ? true : undefined} />
                  <RowError errors={all} k={`${i}.status`} />
                </label>
                <label className="rule-field wide">
                  <span>Error text contains</span>
                  <input aria-label="Error text contains" placeholder="any text (case-insensitive, not a pattern)" value={r.match} onChange={(e) => edit(i, { match: e.target.value })} aria-invalid={all[`${i}.match`] ? true : undefined} />
                  <RowError errors={all} k={`${i}.match`} />
                </label>
                <label className="rule-field">
                  <span>Reason</span>
                  <select aria-label="Reason" value={r.reason} onChange={(e) => edit(i, { reason: e.target.value as RuleRow['reason'] })}>
                    <option value="">from the status</option>
                    {ERROR_RULE_REASONS.map((x) => (
                      <option key={x} value={x}>
                        {x}
                      </option>
                    ))}
                  </select>
                </label>
                <label className="rule-field">
                  <span>Holds</span>
                  <select aria-label="Scope" value={r.scope} onChange={(e) => edit(i, { scope: e.target.value as RuleRow['scope'] })}>
                    {ERROR_RULE_SCOPES.map((x) => (
                      <option key={x} value={x}>
                        {SCOPE_LABEL[x]}
                      </option>
                    ))}
                  </select>
                </label>
                <div className="rule-field">
                  <span>Cooldown</span>
                  <DurationPicker label="Cooldown" withDefault value={r.duration} onChange={(duration) => edit(i, { duration })} error={all[`${i}.cooldownMs`]} />
                  <RowError errors={all} k={`${i}.cooldownMs`} />
                </div>
              </div>
              <div className="row-actions">
                {r.status.trim() === '400' && <Badge tone="warn" title="HTTP 400 is never checked against rules (a known gap)">never fires</Badge>}
                <button type="button" className="btn btn-sm btn-ghost" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move rule ${i + 1} up`}>
                  ↑
                </button>
                <button type="button" className="btn btn-sm btn-ghost" disabled={i === rows.length - 1} onClick={() => move(i, 1)} aria-label={`Move rule ${i + 1} down`}>
                  ↓
                </button>
                <button
                  type="button"
                  className="btn btn-sm btn-ghost"
                  onClick={() => {
                    setRows((rs) => rs.filter((_, j) => j !== i));
                    setErrors({});
                  }}
                  aria-label={`Remove rule ${i + 1}`}
                >
                  Remove
                </button>
              </div>
            </li>
          ))}
        </ol>
      )}
      <div className="toolbar">
        <button
          type="button"
          className="btn btn-sm"
          disabled={rows.length >= MAX_OPERATOR_RULES}
          onClick={() => setRows((rs) => [...rs, emptyRuleRow()])}
        >
          Add rule
        </button>
        <button
          type="button"
          className="btn btn-sm btn-primary"
          disabled={!dirty || s.saving}
          onClick={async () => {
            const built = rulesFromRows(rows);
            if (!built.ok) return setErrors(built.errors);
            await s.save(built.value);
            if (!d.settings.getState().errors.providerErrorRules) setDraft(null);
          }}
        >
          Save rules
        </button>
        {dirty && (
          <button
            type="button"
            className="btn btn-sm btn-ghost"
            onClick={() => {
              setDraft(null);
              setErrors({});
              s.clear();
            }}
          >
            Discard changes
          </button>
        )}
        {s.notice && !dirty && <span className="ok-text small" role="status">{s.notice}</span>}
        {s.general && (
          <span className="field-error" role="alert">
            {s.general}
          </span>
        )}
        <span className="muted small">
          {rows.length} of {MAX_OPERATOR_RULES}
        </span>
      </div>
    </div>
  );
}

export function ProviderDefaultsEditor({ providers }: { providers: string[] }) {
  const d = useDashboard();
  const view = useSel(d.settings, (s) => s.view);
  const stored = (settingOf(view, 'providerErrorDefaults')?.value ?? {}) as ProviderErrorDefaults;
  const [draft, setDraft] = useState<DefaultRow[] | null>(null);
  const rows = draft ?? rowsFromDefaults(stored);
  const dirty = draft !== null;
  const setRows = (fn: (rs: DefaultRow[]) => DefaultRow[]) => setDraft((d) => fn(d ?? rowsFromDefaults(stored)));
  const [errors, setErrors] = useState<RowErrors>({});
  const s = useSave<ProviderErrorDefaults>('providerErrorDefaults', () => rows.map((r) => r.provider.trim()));
  const edit = (i: number, patch: Partial<DefaultRow>) => {
    setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
    setErrors({});
    s.clear();
  };
  const all = { ...errors, ...s.serverErrors };
  const listId = 'provider-list-defaults';

  return (
    <div className="rule-editor" aria-label="Per-provider error defaults" role="group">
      <datalist id={listId}>
        {providers.map((p) => (
          <option key={p} value={p} />
        ))}
      </datalist>
      {rows.length === 0 ? (
        <p className="muted">No defaults. A default sets how long a provider's 402, 403, 408, 429 and 5xx errors hold when no rule matched.</p>
      ) : (
        <ol className="rule-rows">
          {rows.map((r, i) => (
            <li key={i} className="rule-row" aria-label={`Default ${i + 1}`}>
              <div className="rule-fields">
                <label className="rule-field">
                  <span>Provider</span>
                  <input list={listId} aria-label="Provider" value={r.provider} onChange={(e) => edit(i, { provider: e.target.value })} aria-invalid={all[`${i}.provider`] ? true : undefined} />
                  <RowError errors={all} k={`${i}.provider`} />
                </label>
                <div className="rule-field">
                  <span>Cooldown (or the upstream's hint if longer)</span>
                  <DurationPicker label="Cooldown" withDefault={false} value={r.duration} onChange={(duration) => edit(i, { duration })} error={all[`${i}.cooldownMs`]} />
                  <RowError errors={all} k={`${i}.cooldownMs`} />
                </div>
                <label className="rule-field">
                  <span>Holds</span>
                  <select aria-label="Scope" value={r.scope} onChange={(e) => edit(i, { scope: e.target.value as DefaultRow['scope'] })}>
                    {ERROR_RULE_SCOPES.map((x) => (
                      <option key={x} value={x}>
                        {SCOPE_LABEL[x]}
                      </option>
                    ))}
                  </select>
                </label>
                <label className="rule-field">
                  <span>Reason</span>
                  <select aria-label="Reason" value={r.reason} onChange={(e) => edit(i, { reason: e.target.value as DefaultRow['reason'] })}>
                    <option value="">from the status</option>
                    {ERROR_RULE_REASONS.map((x) => (
                      <option key={x} value={x}>
                        {x}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              <div className="row-actions">
                <button
                  type="button"
                  className="btn btn-sm btn-ghost"
                  onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}
                  aria-label={`Remove default ${i + 1}`}
                >
                  Remove
                </button>
              </div>
            </li>
          ))}
        </ol>
      )}
      <div className="toolbar">
        <button
          type="button"
          className="btn btn-sm"
          onClick={() => setRows((rs) => [...rs, emptyDefaultRow()])}
        >
          Add default
        </button>
        <button
          type="button"
          className="btn btn-sm btn-primary"
          disabled={!dirty || s.saving}
          onClick={async () => {
            const built = defaultsFromRows(rows);
            if (!built.ok) return setErrors(built.errors);
            await s.save(built.value);
            if (!d.settings.getState().errors.providerErrorDefaults) setDraft(null);
          }}
        >
          Save defaults
        </button>
        {dirty && (
          <button
            type="button"
            className="btn btn-sm btn-ghost"
            onClick={() => {
              setDraft(null);
              setErrors({});
              s.clear();
            }}
          >
            Discard changes
          </button>
        )}
        {s.notice && !dirty && <span className="ok-text small" role="status">{s.notice}</span>}
        {s.general && (
          <span className="field-error" role="alert">
            {s.general}
          </span>
        )}
      </div>
    </div>
  );
}
