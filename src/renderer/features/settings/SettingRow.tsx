// One setting: its plain label and description (the key one click away), its value (editable),
// where that value comes from (default, saved here, an environment variable, a command-line
// option) and what it overrides, the allowed range in words, and a way back to the default.
// Typed input is checked as it is typed: a refused value shows why and cannot be sent; "Saved"
// shows only for the value that was saved and goes as soon as the field changes. A failed save
// keeps what was typed, with the error.
import { useId, useState, type KeyboardEvent, type ReactNode } from 'react';
import { MUTED_SETTING, NotificationMutes } from '../../components/NotificationFeed';
import { TechName } from '../../components/TechName';
import { Badge, Switch, type Tone } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { describeUnitValue, formatRange, UNIT_LABEL } from '../../lib/format';
import { checkDraft, isTextSetting, settingText } from '../../lib/settingInput';
import { flatValues } from '../../stores/settingsStore';
import type { SettingView } from '../../../shared/model';
import type { SettingSource } from '../../../shared/settings';
import { managedOwner } from '../../stores/teamStore';
import { ManagedByTeam } from '../team/ManagedByTeam';

function show(s: SettingView, v: unknown): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  if (s.type === 'enum') return s.options?.find((o) => o.value === v)?.label ?? String(v);
  if (typeof v === 'string') return v === '' ? 'empty' : v;
  if (typeof v === 'object') return Array.isArray(v) && v.length === 0 ? 'none' : JSON.stringify(v);
  const words = describeUnitValue(v, s.unit);
  const unit = s.unit ? UNIT_LABEL[s.unit] : '';
  return `${String(v)}${unit ? ` ${unit}` : ''}${words ? ` (${words})` : ''}`;
}

export const SOURCE_LABEL: Record<SettingSource, string> = {
  default: 'Default',
  persisted: 'Saved',
  env: 'Environment',
  cli: 'Command line',
  connection: 'Connection',
};
const SOURCE_TONE: Record<SettingSource, Tone> = { default: 'neutral', persisted: 'accent', env: 'info', cli: 'warn', connection: 'info' };

/**
 * A name or literal the user needs to type (an environment variable, a flag, a scope list): shown
 * as written, marked like a revealed technical name so the jargon check leaves it alone.
 */
const Typed = ({ children }: { children: string }) => (
  <code className="mono" data-tech-name>
    {children}
  </code>
);

const isEmptyList = (v: unknown) => Array.isArray(v) && v.length === 0;

/** Where the value comes from, in a sentence, and what it overrides. */
function SourceLine({ s }: { s: SettingView }) {
  const saved = s.persisted !== null && s.persisted !== undefined;
  const envSet = s.envValue !== null && s.envValue !== undefined && s.envName;
  let text: ReactNode = null;
  switch (s.source) {
    case 'default':
      break;
    case 'persisted':
      text = envSet ? (
        <>
          Saved here; it wins over the environment variable <Typed>{s.envName!}</Typed> ({show(s, s.envValue)}).
        </>
      ) : (
        'Saved here.'
      );
      break;
    case 'env':
      text = (
        <>
          Set by the environment variable <Typed>{s.envName ?? s.env[0] ?? ''}</Typed>
          {saved ? <>, which wins over the value saved here ({show(s, s.persisted)})</> : null}.
          {s.envOverridesPersisted && !saved ? ' While it is set, a value saved here does not apply.' : null}
        </>
      );
      break;
    case 'cli':
      text = (
        <>
          Set with <Typed>{s.cliFlag ?? 'a command-line option'}</Typed> when Switchyard was started, for this run only
          {saved ? <>; it overrides the value saved here ({show(s, s.persisted)})</> : null}
          {envSet ? <> and the environment variable <Typed>{s.envName!}</Typed></> : null}.
        </>
      );
      break;
    case 'connection':
      text = 'Set on the connection.';
      break;
  }
  return (
    <span className="setting-source" data-testid="setting-source">
      <Badge tone={SOURCE_TONE[s.source]} title="Where this value comes from">
        {SOURCE_LABEL[s.source]}
      </Badge>
      <span className="setting-source-text">{text}</span>
    </span>
  );
}

/** The technical names behind the row: the key, and the environment variables that can set it. */
function technicalName(s: SettingView): string {
  return s.env.length ? `${s.key} · environment: ${s.env.join(', ')}` : s.key;
}

export function commandLineWords(s: SettingView): string {
  const f = s.cliFlag ?? 'a command-line option';
  return `This value was given on the command line (${f}) when Switchyard was started, so it cannot be changed here. Start Switchyard without ${f} to change it here.`;
}

export function managedWords(owner: string): string {
  return `The team manages this setting (published by ${owner}), so it cannot be changed here. Change it on ${owner}'s Switchyard.`;
}

export function SettingRow({ setting: s, technicalMatch = false }: { setting: SettingView; technicalMatch?: boolean }) {
  const d = useDashboard();
  const id = useId();
  const storeError = useSel(d.settings, (st) => st.errors[s.key]);
  const notice = useSel(d.settings, (st) => st.notices[s.key]);
  const saving = useSel(d.settings, (st) => !!st.saving[s.key]);
  const view = useSel(d.settings, (st) => st.view);
  const [draft, setDraft] = useState<string | null>(null);
  const [triedLocked, setTriedLocked] = useState(false);
  const store = d.settings.getState();
  // Team mode: a setting the team's publisher owns is read-only on a follower.
  const owner = useSel(d.team, (st) => managedOwner(st.view, 'settings', s.key));
  const locked = s.source === 'cli' || owner !== null;
  const current = settingText(s);
  const text = draft ?? current;
  const dirty = draft !== null && draft !== current;
  const check = dirty ? checkDraft(s, text, flatValues(view)) : null;
  const liveError = check && !check.ok ? check.message : null;
  const error = liveError ?? storeError ?? (triedLocked && locked ? (owner ? managedWords(owner) : commandLineWords(s)) : undefined);
  const range = formatRange(s.min, s.max, s.unit);
  const words = s.type !== 'json' && !dirty ? describeUnitValue(s.value, s.unit) : null;
  const describedBy = [`${id}-desc`, `${id}-meta`, error ? `${id}-err` : null].filter(Boolean).join(' ');
  const textual = isTextSetting(s);

  const edit = (v: string) => {
    setDraft(v);
    // What was saved, or refused by the engine, no longer describes the field.
    store.clearError(s.key);
  };
  const cancel = () => {
    setDraft(null);
    store.clearError(s.key);
  };
  const save = async () => {
    if (!dirty || liveError) return;
    if (await store.saveText(s.key, text)) setDraft(null);
  };
  const lockedKey = (e: KeyboardEvent) => {
    if (locked && e.key !== 'Tab' && e.key !== 'Shift' && !e.metaKey && !e.ctrlKey) setTriedLocked(true);
  };

  const labelText = s.type === 'boolean' ? null : (
    <label htmlFor={id} className="setting-label">
      {s.label}
    </label>
  );

  return (
    <div className={`setting-row${error ? ' has-error' : ''}`} data-setting={s.key} data-source={s.source}>
      <div className="setting-main">
        <div className="setting-title">
          {s.type === 'boolean' ? (
            <Switch label={s.label} checked={s.value === true} disabled={saving || locked} onChange={(v) => void store.save(s.key, v)} />
          ) : (
            labelText
          )}
          <TechName name={technicalName(s)} />
        </div>
        <p id={`${id}-desc`} className="hint">
          {s.description}
        </p>
        <div id={`${id}-meta`} className="setting-meta">
          {owner ? <ManagedByTeam owner={owner} /> : <SourceLine s={s} />}
          {range && <span className="meta-item">Allowed: {range}</span>}
          <span className="meta-item">
            Default: {(textual && s.default !== '') || (s.type === 'json' && !isEmptyList(s.default)) ? <Typed>{textual ? String(s.default) : show(s, s.default)}</Typed> : show(s, s.default)}
          </span>
          {s.type === 'json' && !textual && s.shape && s.key !== MUTED_SETTING && <span className="meta-item">Expected: <Typed>{s.shape}</Typed></span>}
          {s.restartRequired && <span className="meta-item warn-text">Applies after a restart.</span>}
          {s.envRejected && (
            <span className="meta-item warn-text">
              The environment variable <Typed>{s.envRejected}</Typed> is set but could not be read, so it is ignored.
            </span>
          )}
          {technicalMatch && <span className="meta-item">Matches its technical name.</span>}
        </div>
      </div>
      <div className="setting-control">
        {s.type === 'enum' && (
          <select
            id={id}
            value={String(s.value)}
            disabled={saving || locked}
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
        {s.key === MUTED_SETTING && <NotificationMutes value={s.value} disabled={saving || locked} onChange={(v) => void store.save(s.key, v)} />}
        {s.type !== 'boolean' && s.type !== 'enum' && s.key !== MUTED_SETTING && (
          <form
            className="setting-form"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              void save();
            }}
          >
            <div className="input-unit">
              {s.type === 'json' && !textual ? (
                <textarea
                  id={id}
                  rows={Math.min(8, Math.max(2, text.split('\n').length))}
                  value={text}
                  spellCheck={false}
                  readOnly={locked}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={describedBy}
                  onChange={(e) => edit(e.target.value)}
                  onKeyDown={(e) => {
                    lockedKey(e);
                    if (e.key === 'Escape') cancel();
                  }}
                />
              ) : (
                <input
                  id={id}
                  type="text"
                  inputMode={textual ? undefined : 'numeric'}
                  value={text}
                  readOnly={locked}
                  spellCheck={false}
                  placeholder={s.type === 'int?' ? 'none' : textual && s.default === '' ? 'empty' : undefined}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={describedBy}
                  onChange={(e) => edit(e.target.value)}
                  onPaste={() => locked && setTriedLocked(true)}
                  onKeyDown={(e) => {
                    lockedKey(e);
                    if (e.key === 'Escape') cancel();
                  }}
                />
              )}
              {s.unit && UNIT_LABEL[s.unit] && s.type !== 'json' && <span className="unit">{UNIT_LABEL[s.unit]}</span>}
            </div>
            {words && <span className="hint">{words}</span>}
            {dirty && check?.ok && typeof check.value === 'number' && describeUnitValue(check.value, s.unit) && (
              <span className="hint">{describeUnitValue(check.value, s.unit)}</span>
            )}
            {dirty && (
              <div className="setting-buttons">
                <button type="submit" className="btn btn-sm btn-primary" disabled={saving || !!liveError} aria-label={`Save ${s.label}`}>
                  Save
                </button>
                <button type="button" className="btn btn-sm btn-ghost" onClick={cancel}>
                  Cancel
                </button>
              </div>
            )}
          </form>
        )}
        {s.source === 'persisted' && !dirty && !owner && (
          <button type="button" className="btn btn-sm btn-ghost" disabled={saving} onClick={() => void store.reset(s.key)} aria-label={`Reset ${s.label}`}>
            {s.envValue !== null && s.envValue !== undefined ? 'Use the environment value' : 'Reset to default'}
          </button>
        )}
        {s.source === 'env' && s.persisted !== null && s.persisted !== undefined && !dirty && !owner && (
          <button type="button" className="btn btn-sm btn-ghost" disabled={saving} onClick={() => void store.reset(s.key)} aria-label={`Remove the saved value of ${s.label}`}>
            Remove the saved value
          </button>
        )}
        {locked && !triedLocked && (
          <p className="hint">{owner ? 'Cannot be changed here: the team manages it.' : 'Cannot be changed here while it is set on the command line.'}</p>
        )}
        {error && (
          <div id={`${id}-err`} className="field-error" role="alert">
            {error}
          </div>
        )}
        {!error && !dirty && notice && (
          <div className="setting-notice" role="status">
            {notice}
          </div>
        )}
      </div>
    </div>
  );
}
