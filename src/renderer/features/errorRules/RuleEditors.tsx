// The editors for the operator's error rules (settings.providerErrorRules) and per-provider
// defaults (settings.providerErrorDefaults): one row per rule, checked with the engine's schemas
// before anything is sent, saved through PATCH /api/settings as a whole list. Used by the Error
// rules page and by the Cooldown manager's "Error cooldown rules" card (R-CM-05/06).
import { useState, type ReactNode } from 'react';
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
  type DurationInput,
  type RowErrors,
  type RuleRow,
} from '../../lib/errorRulesForm';
import { describeErrorType } from '../../lib/reasons';
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

type SettingKey = 'providerErrorRules' | 'providerErrorDefaults';
type Built<T> = { ok: true; value: T } | { ok: false; errors: RowErrors };

/**
 * One of the two lists as a draft: unedited, the rows follow the saved setting (pushes included);
 * an edit starts a draft, Save checks it with the engine's schema and writes the setting as a whole,
 * and an engine error naming an item is mapped back to its row.
 */
function useRuleDraft<R, T>(key: SettingKey, fromStored: () => R[], providerOf: (r: R) => string, build: (rows: R[]) => Built<T>) {
  const d = useDashboard();
  const [draft, setDraft] = useState<R[] | null>(null);
  const rows = draft ?? fromStored();
  const [errors, setErrors] = useState<RowErrors>({});
  const [notice, setNotice] = useState<string | null>(null);
  const [serverErrors, setServerErrors] = useState<RowErrors>({});
  const [general, setGeneral] = useState<string | null>(null);
  const saving = useSel(d.settings, (s) => !!s.saving[key]);
  const clearOutcome = () => (setNotice(null), setServerErrors({}), setGeneral(null));
  const setRows = (fn: (rs: R[]) => R[]) => setDraft((dr) => fn(dr ?? fromStored()));
  const write = async (value: T) => {
    setNotice(null);
    setGeneral(null);
    setServerErrors({});
    const ok = await d.settings.getState().save(key, value);
    if (ok) {
      setNotice('Saved');
      return;
    }
    const message = d.settings.getState().errors[key] ?? 'could not be saved';
    const providers = rows.map(providerOf);
    const row = rowErrorFromMessage(message.replace(/^.*?(?=provider(ErrorRules|ErrorDefaults))/, ''), (p) => providers.indexOf(p));
    if (row) setServerErrors({ [row.key]: row.message });
    else setGeneral(message);
  };
  return {
    rows,
    dirty: draft !== null,
    setRows,
    setErrors,
    saving,
    notice,
    general,
    /** The form's own errors and the engine's, by "<row>.<field>". */
    errors: { ...errors, ...serverErrors },
    edit: (i: number, patch: Partial<R>) => {
      setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
      setErrors({});
      clearOutcome();
    },
    save: async () => {
      const built = build(rows);
      if (!built.ok) return setErrors(built.errors);
      await write(built.value);
      if (!d.settings.getState().errors[key]) setDraft(null);
    },
    discard: () => {
      setDraft(null);
      setErrors({});
      clearOutcome();
    },
  };
}

/** What the toolbar needs of a draft. */
interface DraftState {
  dirty: boolean;
  saving: boolean;
  notice: string | null;
  general: string | null;
  save: () => Promise<void>;
  discard: () => void;
}

/** The providers a provider input suggests. */
export function ProviderDatalist({ id, providers }: { id: string; providers: string[] }) {
  return (
    <datalist id={id}>
      {providers.map((p) => (
        <option key={p} value={p} />
      ))}
    </datalist>
  );
}

/** The editor's frame: the rows (or what an empty list means) and the toolbar under them. */
function RuleList({
  label,
  listId,
  providers,
  empty,
  children,
  toolbar,
}: {
  label: string;
  listId: string;
  providers: string[];
  empty: ReactNode | null;
  children: ReactNode;
  toolbar: ReactNode;
}) {
  return (
    <div className="rule-editor" aria-label={label} role="group">
      <ProviderDatalist id={listId} providers={providers} />
      {empty ? <p className="muted">{empty}</p> : <ol className="rule-rows">{children}</ol>}
      <div className="toolbar">{toolbar}</div>
    </div>
  );
}

/** Save, Discard and what the last save said, after the editor's own buttons. */
function DraftActions({ draft, saveLabel, children }: { draft: DraftState; saveLabel: string; children?: ReactNode }) {
  return (
    <>
      <button type="button" className="btn btn-sm btn-primary" disabled={!draft.dirty || draft.saving} onClick={() => void draft.save()}>
        {saveLabel}
      </button>
      {draft.dirty && (
        <button type="button" className="btn btn-sm btn-ghost" onClick={draft.discard}>
          Discard changes
        </button>
      )}
      {draft.notice && !draft.dirty && <span className="ok-text small" role="status">{draft.notice}</span>}
      {draft.general && (
        <span className="field-error" role="alert">
          {draft.general}
        </span>
      )}
      {children}
    </>
  );
}

function ProviderField({ listId, value, onChange, errors, k }: { listId: string; value: string; onChange: (v: string) => void; errors: RowErrors; k: string }) {
  return (
    <label className="rule-field">
      <span>Provider</span>
      <input list={listId} aria-label="Provider" value={value} onChange={(e) => onChange(e.target.value)} aria-invalid={errors[k] ? true : undefined} />
      <RowError errors={errors} k={k} />
    </label>
  );
}

function CooldownField({
  caption,
  withDefault,
  value,
  onChange,
  errors,
  k,
}: {
  caption: string;
  withDefault: boolean;
  value: DurationInput;
  onChange: (d: DurationInput) => void;
  errors: RowErrors;
  k: string;
}) {
  return (
    <div className="rule-field">
      <span>{caption}</span>
      <DurationPicker label="Cooldown" withDefault={withDefault} value={value} onChange={onChange} error={errors[k]} />
      <RowError errors={errors} k={k} />
    </div>
  );
}

function ReasonField({ value, onChange }: { value: RuleRow['reason']; onChange: (v: RuleRow['reason']) => void }) {
  return (
    <label className="rule-field">
      <span>Reason</span>
      <select aria-label="Reason" value={value} onChange={(e) => onChange(e.target.value as RuleRow['reason'])}>
        <option value="">from the status</option>
        {ERROR_RULE_REASONS.map((x) => (
          <option key={x} value={x}>
            {describeErrorType(x)}
          </option>
        ))}
      </select>
    </label>
  );
}

function ScopeField({ value, onChange }: { value: RuleRow['scope']; onChange: (v: RuleRow['scope']) => void }) {
  return (
    <label className="rule-field">
      <span>Holds</span>
      <select aria-label="Scope" value={value} onChange={(e) => onChange(e.target.value as RuleRow['scope'])}>
        {ERROR_RULE_SCOPES.map((x) => (
          <option key={x} value={x}>
            {SCOPE_LABEL[x]}
          </option>
        ))}
      </select>
    </label>
  );
}

export function OperatorRulesEditor({ providers }: { providers: string[] }) {
  const d = useDashboard();
  const view = useSel(d.settings, (s) => s.view);
  const stored = (settingOf(view, 'providerErrorRules')?.value ?? []) as OperatorErrorRule[];
  const draft = useRuleDraft('providerErrorRules', () => rowsFromRules(stored), (r) => r.provider, rulesFromRows);
  const { rows, setRows, edit, errors: all } = draft;
  const move = (i: number, by: number) => {
    setRows((rs) => {
      const next = [...rs];
      const [r] = next.splice(i, 1);
      next.splice(i + by, 0, r!);
      return next;
    });
  };
  const listId = 'provider-list';

  return (
    <RuleList
      label="Operator error rules"
      listId={listId}
      providers={providers}
      empty={rows.length === 0 ? "No rules yet. A rule matches a provider's errors by status and/or a piece of their text; the first match wins." : null}
      toolbar={
        <>
          <button type="button" className="btn btn-sm" disabled={rows.length >= MAX_OPERATOR_RULES} onClick={() => setRows((rs) => [...rs, emptyRuleRow()])}>
            Add rule
          </button>
          <DraftActions draft={draft} saveLabel="Save rules">
            <span className="muted small">
              {rows.length} of {MAX_OPERATOR_RULES}
            </span>
          </DraftActions>
        </>
      }
    >
      {rows.map((r, i) => (
        <li key={i} className="rule-row" aria-label={`Rule ${i + 1}`}>
          <div className="rule-fields">
            <ProviderField listId={listId} value={r.provider} onChange={(provider) => edit(i, { provider })} errors={all} k={`${i}.provider`} />
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
            <ReasonField value={r.reason} onChange={(reason) => edit(i, { reason })} />
            <ScopeField value={r.scope} onChange={(scope) => edit(i, { scope })} />
            <CooldownField caption="Cooldown" withDefault value={r.duration} onChange={(duration) => edit(i, { duration })} errors={all} k={`${i}.cooldownMs`} />
          </div>
          <div className="row-actions">
            {r.status.trim() === '400' && <Badge tone="warn" title="Rules never apply to an HTTP 400: it is an error in the request, not in the provider">never fires</Badge>}
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
                draft.setErrors({});
              }}
              aria-label={`Remove rule ${i + 1}`}
            >
              Remove
            </button>
          </div>
        </li>
      ))}
    </RuleList>
  );
}

export function ProviderDefaultsEditor({ providers }: { providers: string[] }) {
  const d = useDashboard();
  const view = useSel(d.settings, (s) => s.view);
  const stored = (settingOf(view, 'providerErrorDefaults')?.value ?? {}) as ProviderErrorDefaults;
  const draft = useRuleDraft('providerErrorDefaults', () => rowsFromDefaults(stored), (r) => r.provider.trim(), defaultsFromRows);
  const { rows, setRows, edit, errors: all } = draft;
  const listId = 'provider-list-defaults';

  return (
    <RuleList
      label="Per-provider error defaults"
      listId={listId}
      providers={providers}
      empty={rows.length === 0 ? "No defaults. A default sets how long a provider's 402, 403, 408, 429 and 5xx errors hold when no rule matched." : null}
      toolbar={
        <>
          <button type="button" className="btn btn-sm" onClick={() => setRows((rs) => [...rs, emptyDefaultRow()])}>
            Add default
          </button>
          <DraftActions draft={draft} saveLabel="Save defaults" />
        </>
      }
    >
      {rows.map((r, i) => (
        <li key={i} className="rule-row" aria-label={`Default ${i + 1}`}>
          <div className="rule-fields">
            <ProviderField listId={listId} value={r.provider} onChange={(provider) => edit(i, { provider })} errors={all} k={`${i}.provider`} />
            <CooldownField
              caption="Cooldown (or the upstream's hint if longer)"
              withDefault={false}
              value={r.duration}
              onChange={(duration) => edit(i, { duration })}
              errors={all}
              k={`${i}.cooldownMs`}
            />
            <ScopeField value={r.scope} onChange={(scope) => edit(i, { scope })} />
            <ReasonField value={r.reason} onChange={(reason) => edit(i, { reason })} />
          </div>
          <div className="row-actions">
            <button type="button" className="btn btn-sm btn-ghost" onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))} aria-label={`Remove default ${i + 1}`}>
              Remove
            </button>
          </div>
        </li>
      ))}
    </RuleList>
  );
}
