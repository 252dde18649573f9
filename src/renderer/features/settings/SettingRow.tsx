// One setting: its value (editable), its source (default / env / saved), range, unit and env
// names, and a way back to the default. Bad input stays in the field with the reason and nothing
// is saved.
import { useId, useState } from 'react';
import { SourceBadge } from '../../components/status';
import { Switch } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { describeUnitValue, formatRange, UNIT_LABEL } from '../../lib/format';
import { settingText } from '../../lib/settingInput';
import type { SettingView } from '../../../shared/model';

function show(s: SettingView, v: unknown): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  if (s.type === 'enum') return s.options?.find((o) => o.value === v)?.label ?? String(v);
  if (typeof v === 'object') return JSON.stringify(v);
  const words = describeUnitValue(v, s.unit);
  const unit = s.unit ? UNIT_LABEL[s.unit] : '';
  return `${String(v)}${unit ? ` ${unit}` : ''}${words ? ` (${words})` : ''}`;
}

export function SettingRow({ setting: s }: { setting: SettingView }) {
  const d = useDashboard();
  const id = useId();
  const error = useSel(d.settings, (st) => st.errors[s.key]);
  const notice = useSel(d.settings, (st) => st.notices[s.key]);
  const saving = useSel(d.settings, (st) => !!st.saving[s.key]);
  const [draft, setDraft] = useState<string | null>(null);
  const store = d.settings.getState();
  const current = settingText(s);
  const text = draft ?? current;
  const dirty = draft !== null && draft !== current;
  const range = formatRange(s.min, s.max, s.unit);
  const words = s.type !== 'json' && !dirty ? describeUnitValue(s.value, s.unit) : null;
  const describedBy = [`${id}-desc`, error ? `${id}-err` : null].filter(Boolean).join(' ');

  const save = async () => {
    if (!dirty) return;
    if (await store.saveText(s.key, text)) setDraft(null);
  };

  return (
    <div className={`setting-row${error ? ' has-error' : ''}`} data-setting={s.key}>
      <div className="setting-main">
        {s.type === 'boolean' ? (
          <Switch label={s.label} checked={s.value === true} disabled={saving} onChange={(v) => void store.save(s.key, v)} />
        ) : s.type === 'enum' ? (
          <label htmlFor={id} className="setting-label">
            {s.label}
          </label>
        ) : (
          <label htmlFor={id} className="setting-label">
            {s.label}
          </label>
        )}
        <p id={`${id}-desc`} className="hint">
          {s.description}
        </p>
        <div className="setting-meta">
          <SourceBadge source={s.source} />
          {range && <span className="meta-item">range {range}</span>}
          <span className="meta-item">default {show(s, s.default)}</span>
          {s.env.length > 0 && (
            <span className="meta-item" title={s.env.join(', ')}>
              env <code className="mono">{s.env[0]}</code>
              {s.envValue !== null && s.envValue !== undefined && <> = {show(s, s.envValue)}</>}
            </span>
          )}
          {s.envOverridesPersisted && <span className="meta-item warn-text">the env value wins over a saved one</span>}
          {s.restartRequired && <span className="meta-item warn-text">applies after a restart</span>}
          {s.cliFlag && (
            <span className="meta-item warn-text">
              set by <code className="mono">{s.cliFlag}</code> for this run; start without it to change it here
            </span>
          )}
        </div>
      </div>
      <div className="setting-control">
        {s.type === 'enum' && (
          <select
            id={id}
            value={String(s.value)}
            disabled={saving}
            aria-describedby={describedBy}
            onChange={(e) => void store.save(s.key, e.target.value)}
          >
            {(s.options ?? []).map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
        )}
        {s.type !== 'boolean' && s.type !== 'enum' && (
          <form
            className="setting-form"
            onSubmit={(e) => {
              e.preventDefault();
              void save();
            }}
          >
            <div className="input-unit">
              {s.type === 'json' ? (
                <textarea
                  id={id}
                  rows={Math.min(8, Math.max(2, text.split('\n').length))}
                  value={text}
                  spellCheck={false}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={describedBy}
                  onChange={(e) => {
                    setDraft(e.target.value);
                    if (error) store.clearError(s.key);
                  }}
                  onKeyDown={(e) => {
                    if (e.key === 'Escape') setDraft(null);
                  }}
                />
              ) : (
                <input
                  id={id}
                  inputMode="numeric"
                  value={text}
                  readOnly={s.cliFlag !== null}
                  placeholder={s.type === 'int?' ? 'none' : undefined}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={describedBy}
                  onChange={(e) => {
                    setDraft(e.target.value);
                    if (error) store.clearError(s.key);
                  }}
                  onKeyDown={(e) => {
                    if (e.key === 'Escape') {
                      setDraft(null);
                      store.clearError(s.key);
                    }
                  }}
                />
              )}
              {s.unit && UNIT_LABEL[s.unit] && s.type !== 'json' && <span className="unit">{UNIT_LABEL[s.unit]}</span>}
            </div>
            {words && <span className="hint">{words}</span>}
            {dirty && (
              <div className="setting-buttons">
                <button type="submit" className="btn btn-sm btn-primary" disabled={saving} aria-label={`Save ${s.label}`}>
                  Save
                </button>
                <button
                  type="button"
                  className="btn btn-sm btn-ghost"
                  onClick={() => {
                    setDraft(null);
                    store.clearError(s.key);
                  }}
                >
                  Cancel
                </button>
              </div>
            )}
          </form>
        )}
        {s.source === 'persisted' && !dirty && (
          <button type="button" className="btn btn-sm btn-ghost" disabled={saving} onClick={() => void store.reset(s.key)} aria-label={`Reset ${s.label}`}>
            {s.envValue !== null && s.envValue !== undefined ? 'Use env value' : 'Reset to default'}
          </button>
        )}
        {error && (
          <div id={`${id}-err`} className="field-error" role="alert">
            {error}
          </div>
        )}
        {!error && notice && (
          <div className="setting-notice" role="status">
            {notice}
          </div>
        )}
      </div>
    </div>
  );
}
