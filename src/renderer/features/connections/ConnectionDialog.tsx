// The add / edit connection form: kind-specific fields and hints from KIND_INFO, limits and
// per-model concurrency, cooling and queue behaviour, the Claude options (stored in
// providerSpecificData), and advanced timeouts and queue overrides. Errors from the form's own
// checks and from the engine appear next to the field they name.
import { useState, type ReactNode } from 'react';
import { DialogFooter, Modal } from '../../components/Modal';
import { Field, FormSection, Switch } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useFormSave } from '../../hooks/useFormSave';
import {
  buildCreateInput,
  buildUpdateInput,
  emptyForm,
  errorFor,
  formFromConnection,
  hasClaudeOptions,
  isFormField,
  withKind,
  withPreset,
  type ConnectionForm,
  type FormErrors,
} from '../../lib/connectionForm';
import { describeError } from '../../lib/errors';
import { AUTH_CLASSES, CLAUDE_KIND, CONNECTION_KINDS, KIND_INFO, type AuthClass, type ConnectionView } from '../../../shared/model';
import { ClaudeCredentials, type ClaudeTab } from './ClaudeCredentials';
import { ProtectionControl } from './ProtectionControl';
import { PROVIDER_PRESETS, presetById } from '../../../shared/providerPresets';
import { protocolName } from '../../../shared/wireProtocols';

const AUTH_LABELS: Record<AuthClass, string> = {
  apikey: 'API key',
  oauth: 'OAuth (subscription)',
  local: 'Local',
};

const ADVANCED_FIELDS = [
  'timeouts.',
  'rateLimitOverrides.maxWaitMs',
  'rateLimitOverrides.executionMaxWaitMs',
  'rateLimitOverrides.requestsPerMinute',
  'rateLimitOverrides.minTimeMs',
];

/** "Check egress IP": asks the probe URL through this connection's saved route now. */
function EgressCheck({ connectionId }: { connectionId: string }) {
  const d = useDashboard();
  const [state, setState] = useState<{ busy: boolean; text: string | null; ok: boolean }>({ busy: false, text: null, ok: true });
  return (
    <div className="inline-form">
      <button
        type="button"
        className="btn btn-sm"
        disabled={state.busy}
        onClick={async () => {
          setState({ busy: true, text: null, ok: true });
          try {
            const r = await d.bridge.probeEgressIp({ id: connectionId });
            setState({ busy: false, ok: r.ip !== null, text: r.ip ? `Leaves through ${r.ip}` : (r.error ?? 'no IP') });
          } catch (err) {
            setState({ busy: false, ok: false, text: describeError(err).message });
          }
        }}
      >
        Check egress IP
      </button>
      {state.text && (
        <span className={state.ok ? 'ok-text small' : 'danger-text small'} role="status" data-testid="egress-result">
          {state.text}
        </span>
      )}
      <span className="hint">Uses the saved proxy and the egress probe URL (Error rules page).</span>
    </div>
  );
}

export function ConnectionDialog({
  connection,
  onClose,
  claudeTab: initialClaudeTab,
}: {
  connection?: ConnectionView;
  onClose: () => void;
  /** Claude subscription: which way in to show first ("Sign in again" opens on the sign-in). */
  claudeTab?: ClaudeTab;
}) {
  const d = useDashboard();
  const editing = !!connection;
  const [claudeTab, setClaudeTab] = useState<ClaudeTab>(initialClaudeTab ?? (connection ? 'paste' : 'signin'));
  const [form, setForm] = useState<ConnectionForm>(() => (connection ? formFromConnection(connection) : emptyForm()));
  const [errors, setErrors] = useState<FormErrors>({});
  const { saving, formError, setFormError, run } = useFormSave({ isField: isFormField, showFieldErrors: (e) => showErrors(e), onSaved: onClose });
  const [advancedOpen, setAdvancedOpen] = useState(false);
  const [presetId, setPresetId] = useState('');
  const preset = presetById(presetId);
  const admissionView = useSel(d.admission, (s) => (connection ? s.byConnection[connection.id] : undefined));
  const info = KIND_INFO[form.kind];
  const claude = form.kind === CLAUDE_KIND;
  // A new Claude account is stored by the sign-in or the import itself; the dialog's own button saves pasted tokens.
  const showSubmit = !(claude && !editing && claudeTab !== 'paste');
  /** Before a sign-in or import makes a new account, the rest of the form must be valid (it is applied after). */
  const checkClaudeForm = (): boolean => {
    if (editing) return true;
    const r = buildCreateInput({ ...form, secret: 'placeholder-token', claudeRefreshToken: '', claudeExpiresAt: '' });
    if (r.ok) return true;
    showErrors(r.errors);
    return false;
  };
  const claudeDone = async (id: string) => {
    const store = d.connections.getState();
    if (!editing) {
      // The sign-in stored the account with its name, provider, base URL and priority; the rest of
      // the form (models, limits, the Claude options, ...) is saved onto it now.
      try {
        const created = await d.bridge.getConnection({ id });
        const built = buildUpdateInput({ ...form, secret: '', claudeRefreshToken: '', claudeExpiresAt: '' }, created);
        if (built.ok && (Object.keys(built.input).length > 0 || form.protectionMode !== created.rateLimitProtectionMode)) {
          await store.save(id, built.input, form.protectionMode);
        }
      } catch (e) {
        d.toasts.getState().push('error', `The account was added, but its other settings were not saved: ${describeError(e).message}`);
      }
    }
    const c = store.list.find((x) => x.id === id);
    d.toasts.getState().push('success', editing ? `Signed in again: ${connection.name}` : `Added ${c?.name ?? (form.name.trim() || 'the Claude account')}`);
    onClose();
  };
  const set = <K extends keyof ConnectionForm>(k: K, v: ConnectionForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
  };
  const err = (field: string) => errorFor(errors, field);
  const text = (k: keyof ConnectionForm, field: string, label: string, o: { hint?: ReactNode; placeholder?: string; type?: string; required?: boolean; inputMode?: 'numeric' } = {}) => (
    <Field label={label} hint={o.hint} error={err(field)} required={o.required}>
      {(p) => (
        <input
          {...p}
          type={o.type ?? 'text'}
          inputMode={o.inputMode}
          placeholder={o.placeholder}
          value={form[k] as string}
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => set(k, e.target.value as never)}
        />
      )}
    </Field>
  );

  const showErrors = (e: FormErrors) => {
    setErrors(e);
    if (Object.keys(e).some((k) => ADVANCED_FIELDS.some((a) => k.startsWith(a)))) setAdvancedOpen(true);
    if (e.secret && form.kind === CLAUDE_KIND) setClaudeTab('paste');
  };

  const submit = async () => {
    setFormError(null);
    const store = d.connections.getState();
    let save: () => Promise<unknown>;
    if (connection) {
      // Only what the user changed since the dialog opened, merged into the connection as stored now.
      const latest = store.list.find((c) => c.id === connection.id) ?? connection;
      const built = buildUpdateInput(form, connection, latest);
      if (!built.ok) return showErrors(built.errors);
      save = () => store.save(connection.id, built.input, form.protectionMode);
    } else {
      const built = buildCreateInput(form);
      if (!built.ok) return showErrors(built.errors);
      save = () => store.create(built.input);
    }
    setErrors({});
    await run(save);
  };

  const modelRows = form.modelConcurrency;
  return (
    <Modal
      wide
      title={editing ? `Edit ${connection.name}` : 'Add connection'}
      description={editing ? undefined : 'A connection is one account or API key of a provider. Several connections of one provider share its breaker but cool down separately.'}
      onClose={onClose}
      footer={
        <DialogFooter error={formError} onCancel={onClose}>
          {showSubmit && (
            <button type="submit" form="connection-form" className="btn btn-primary" disabled={saving}>
              {editing ? 'Save changes' : 'Add connection'}
            </button>
          )}
        </DialogFooter>
      }
    >
      <form
        id="connection-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <FormSection title="Connection">
          {!editing && (
            <div className="form-grid">
              <Field
                label="Start from a preset"
                className="preset-field"
                hint={
                  preset ? (
                    <>
                      {preset.note}{' '}
                      <a href={preset.keyUrl} target="_blank" rel="noreferrer">
                        {preset.keyRequired ? `Get a ${preset.name} API key` : `Get ${preset.name}`}
                      </a>
                    </>
                  ) : (
                    'Pick a provider to fill in the form, or choose Other and fill it in yourself.'
                  )
                }
              >
                {(p) => (
                  <select
                    {...p}
                    value={presetId}
                    onChange={(e) => {
                      const next = presetById(e.target.value);
                      setPresetId(e.target.value);
                      if (next) {
                        setForm((f) => withPreset(f, next));
                        setErrors({});
                      }
                    }}
                  >
                    <option value="">Other (fill in yourself)</option>
                    {PROVIDER_PRESETS.map((x) => (
                      <option key={x.id} value={x.id}>
                        {x.name}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            </div>
          )}
          <div className="form-grid">
            <Field label="Kind" hint={`Speaks the ${protocolName(info.protocol)} protocol.`} error={err('kind')}>
              {(p) => (
                <select {...p} value={form.kind} onChange={(e) => setForm((f) => withKind(f, e.target.value as ConnectionForm['kind']))}>
                  {CONNECTION_KINDS.map((k) => (
                    <option key={k} value={k}>
                      {KIND_INFO[k].label}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {text('name', 'name', 'Name', { placeholder: 'e.g. Work Anthropic key', required: true })}
            {text('provider', 'provider', 'Provider', {
              placeholder: info.defaultProvider ?? 'e.g. glm',
              required: !info.defaultProvider,
              hint: info.defaultProvider
                ? `Defaults to "${info.defaultProvider}". Connections of one provider share a circuit breaker.`
                : 'A short id such as "glm" or "deepseek". Connections of one provider share a circuit breaker.',
            })}
            <Field label="Auth class" hint="Selects breaker thresholds and base cooldowns." error={err('authClass')}>
              {(p) => (
                <select {...p} value={form.authClass} onChange={(e) => set('authClass', e.target.value as AuthClass)}>
                  {AUTH_CLASSES.map((a) => (
                    <option key={a} value={a}>
                      {AUTH_LABELS[a]}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {text('baseUrl', 'baseUrl', 'Base URL', {
              placeholder: info.defaultBaseUrl ?? 'https://…',
              required: !info.defaultBaseUrl,
              hint: info.defaultBaseUrl
                ? `Leave empty for ${info.baseUrlHint.startsWith(info.defaultBaseUrl) ? info.baseUrlHint : info.defaultBaseUrl}.`
                : info.baseUrlHint,
            })}
            {!claude && (
              <Field
                label="API key"
                required={info.secretRequired && !connection?.secret.set}
                error={err('secret')}
                hint={
                  editing && connection.secret.set
                    ? `Saved key ${connection.secret.masked ?? ''}. Leave empty to keep it.`
                    : info.secretRequired
                      ? 'Stored encrypted; never shown again in full.'
                      : 'Optional for this kind. Stored encrypted.'
                }
              >
                {(p) => (
                  <input
                    {...p}
                    type="password"
                    value={form.secret}
                    autoComplete="off"
                    disabled={form.removeSecret}
                    onChange={(e) => set('secret', e.target.value)}
                  />
                )}
              </Field>
            )}
          </div>
          {claude && (
            <ClaudeCredentials
              form={form}
              set={set}
              connection={connection}
              tab={claudeTab}
              onTab={setClaudeTab}
              pasteError={err('secret')}
              check={checkClaudeForm}
              onDone={(id) => void claudeDone(id)}
            />
          )}
          {editing && connection.secret.set && !info.secretRequired && (
            <Switch compact label="Remove the saved key" checked={form.removeSecret} onChange={(v) => setForm((f) => ({ ...f, removeSecret: v, secret: v ? '' : f.secret }))} />
          )}
        </FormSection>

        <FormSection title="Routing">
          <div className="form-grid">
            {text('priority', 'priority', 'Priority', {
              inputMode: 'numeric',
              hint: 'Lower goes first (0–1000). Equal priorities take turns.',
            })}
            <Field
              label="Models"
              error={err('models')}
              hint={form.passthroughModels ? 'Optional: models this connection is known to serve (one per line). Others are passed through.' : 'One per line or comma-separated.'}
            >
              {(p) => <textarea {...p} rows={3} value={form.models} spellCheck={false} onChange={(e) => set('models', e.target.value)} />}
            </Field>
          </div>
          <Switch
            label="Accept any model (pass through)"
            description="Requests for models no connection lists come here too."
            checked={form.passthroughModels}
            onChange={(v) => set('passthroughModels', v)}
          />
          {info.protocol === 'openai' && (
            <Switch
              label="Serves the Responses API (/responses)"
              description="Codex CLI and other Responses clients are sent here natively. Off: their requests are translated to Chat Completions, which every OpenAI-compatible server has."
              checked={form.servesResponses}
              onChange={(v) => set('servesResponses', v)}
            />
          )}
          <Switch label="Enabled" description="Disabled connections are skipped by routing." checked={form.enabled} onChange={(v) => set('enabled', v)} />
        </FormSection>

        <FormSection title="Limits" hint="Subscription accounts often allow only a few requests at once; going over causes 429s and cooldowns.">
          <div className="form-grid">
            {text('maxConcurrent', 'maxConcurrent', 'Max concurrent requests', {
              inputMode: 'numeric',
              placeholder: 'no limit',
              hint: "The account's real concurrency (e.g. 1 for GLM, 2 for MiniMax). Extra requests wait their turn; one that waits longer than the concurrency wait timeout goes ahead anyway. Empty: no limit.",
            })}
            {text('strictMaxConcurrent', 'rateLimitOverrides.maxConcurrent', 'Strict cap, all models', {
              inputMode: 'numeric',
              placeholder: 'no cap',
              hint: 'Never more than this many at once. An extra request waits for a slot; if none frees in time it moves to the next connection or the request fails as "too busy". Empty: no cap.',
            })}
          </div>
          <div className="subfield">
            <div className="subfield-label" id="model-caps-label">
              Per-model concurrency
            </div>
            {err('rateLimitOverrides.modelConcurrency') && !modelRows.some((_, i) => errors[`rateLimitOverrides.modelConcurrency.${i}`]) && (
              <div className="field-error" role="alert">
                {err('rateLimitOverrides.modelConcurrency')}
              </div>
            )}
            {modelRows.length === 0 && <p className="hint">No per-model caps. A cap counts requests for one exact upstream model id (e.g. glm-5).</p>}
            {modelRows.map((row, i) => (
              <div className="model-cap-row" key={i}>
                <Field label={`Model ${i + 1}`} error={errors[`rateLimitOverrides.modelConcurrency.${i}`]}>
                  {(p) => (
                    <input
                      {...p}
                      value={row.model}
                      spellCheck={false}
                      onChange={(e) => set('modelConcurrency', modelRows.map((r, j) => (j === i ? { ...r, model: e.target.value } : r)))}
                    />
                  )}
                </Field>
                <Field label={`Max at once for model ${i + 1}`}>
                  {(p) => (
                    <input
                      {...p}
                      inputMode="numeric"
                      value={row.cap}
                      onChange={(e) => set('modelConcurrency', modelRows.map((r, j) => (j === i ? { ...r, cap: e.target.value } : r)))}
                    />
                  )}
                </Field>
                <button
                  type="button"
                  className="btn btn-ghost btn-sm"
                  aria-label={`Remove model cap ${i + 1}`}
                  onClick={() => set('modelConcurrency', modelRows.filter((_, j) => j !== i))}
                >
                  Remove
                </button>
              </div>
            ))}
            <button type="button" className="btn btn-sm" onClick={() => set('modelConcurrency', [...modelRows, { model: '', cap: '1' }])}>
              Add model cap
            </button>
          </div>
        </FormSection>

        <FormSection title="Network">
          <div className="form-grid">
            {text('outboundProxy', 'outboundProxy', 'Outbound proxy', {
              placeholder: 'direct (no proxy)',
              hint: 'Send this connection\'s requests through an HTTP(S) or SOCKS5 proxy, e.g. socks5://user:pass@127.0.0.1:1080 or http://proxy.local:3128. Credentials are stored encrypted and shown masked. Empty: direct.',
            })}
          </div>
          {editing && <EgressCheck connectionId={connection.id} />}
        </FormSection>

        <FormSection title="Resilience">
          <ProtectionControl
            mode={form.protectionMode}
            view={editing && form.protectionMode === connection.rateLimitProtectionMode ? admissionView : undefined}
            authClass={form.authClass}
            onChange={(m) => set('protectionMode', m)}
          />
          <p className="hint">Protection queues and spaces this connection's requests instead of bursting upstream.</p>
          <Switch
            label="Never cool this connection down"
            description="Failures still fail over to the next connection, but this one stays in routing."
            checked={form.disableCooling}
            onChange={(v) => set('disableCooling', v)}
          />
          <div className="form-grid">
            {text('rateLimitResetSeconds', 'providerSpecificData.rotationOverrides.rateLimitResetSeconds', 'Rate-limit cooldown override (s)', {
              inputMode: 'numeric',
              placeholder: 'automatic',
              hint: 'Used for a 429 without a retry hint (1–21600 s). Empty: automatic.',
            })}
          </div>
        </FormSection>

        {hasClaudeOptions(form.kind) && (
          <FormSection title="Claude" hint="How this subscription account behaves at its usage limits.">
            <Switch
              label="Low-priority lane on the 5-hour limit"
              description="On the usage-limit 429, accept Anthropic's slow lane and keep going on this account."
              checked={form.lowPriorityMode}
              onChange={(v) => set('lowPriorityMode', v)}
            />
            <Switch
              label="Automatic session-limit reset"
              description="Try the once-a-week limit reset before the slow lane."
              checked={form.autoLimitReset}
              onChange={(v) => set('autoLimitReset', v)}
            />
            <div className="form-grid">
              {text('organizationUUID', 'providerSpecificData.organizationUUID', 'Organization UUID', { hint: 'Optional: when empty, the one named at sign-in or by the account profile is used.' })}
            </div>
          </FormSection>
        )}

        <details className="advanced" open={advancedOpen} onToggle={(e) => setAdvancedOpen(e.currentTarget.open)}>
          <summary>Advanced: timeouts and queue overrides</summary>
          <div className="form-grid">
            {text('connectMs', 'timeouts.connectMs', 'Connect timeout (ms)', { inputMode: 'numeric', placeholder: 'global setting', hint: '100–600000' })}
            {text('headersMs', 'timeouts.headersMs', 'Response headers timeout (ms)', { inputMode: 'numeric', placeholder: 'global setting', hint: '1000–86400000' })}
            {text('idleMs', 'timeouts.idleMs', 'Stream idle timeout (ms)', { inputMode: 'numeric', placeholder: 'global setting', hint: '1000–3600000' })}
            {text('firstOutputMs', 'timeouts.firstOutputMs', 'Time to first output (ms)', { inputMode: 'numeric', placeholder: 'global setting', hint: '0 (off)–3600000; thinking counts as output' })}
            {text('contentStallMs', 'timeouts.contentStallMs', 'Content stall timeout (ms)', { inputMode: 'numeric', placeholder: 'global setting', hint: '0 (off)–3600000; heartbeats do not count' })}
            {text('attemptDeadlineMs', 'timeouts.attemptDeadlineMs', 'Hard attempt deadline (ms)', { inputMode: 'numeric', placeholder: 'global setting', hint: '0 (off)–86400000' })}
            {text('maxWaitMs', 'rateLimitOverrides.maxWaitMs', 'Queue wait limit (ms)', { inputMode: 'numeric', placeholder: 'global setting' })}
            {text('executionMaxWaitMs', 'rateLimitOverrides.executionMaxWaitMs', 'Execution wait limit (ms)', { inputMode: 'numeric', placeholder: 'global setting' })}
            {text('requestsPerMinute', 'rateLimitOverrides.requestsPerMinute', 'Requests per minute', { inputMode: 'numeric', placeholder: 'no limit' })}
            {text('minTimeMs', 'rateLimitOverrides.minTimeMs', 'Minimum spacing (ms)', { inputMode: 'numeric', placeholder: 'none' })}
          </div>
        </details>
      </form>
    </Modal>
  );
}
