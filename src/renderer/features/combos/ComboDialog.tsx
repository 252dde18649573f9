// The create / edit combo form: a name (what agents send as the model), a strategy explained in
// words, the ordered targets (drag to reorder, or the move buttons; provider, model, an optional
// pinned connection and a weight each), and the combo's options. Errors from the form's own
// checks and from the engine appear next to the field they name.
import { useId, useState, type DragEvent } from 'react';
import { DialogFooter, Modal } from '../../components/Modal';
import { Field, FormSection, Switch } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { useFormSave } from '../../hooks/useFormSave';
import {
  buildComboInput,
  comboErrorFor,
  emptyComboForm,
  emptyTarget,
  formFromCombo,
  isComboField,
  moveTarget,
  type ComboForm,
  type ComboFormErrors,
  type TargetRow,
} from '../../lib/comboForm';
import { STRATEGY_INFO } from '../../lib/comboStrategies';
import { COMBO_STRATEGIES, type ComboStrategy, type ComboView, type ConnectionView } from '../../../shared/model';

export function ComboDialog({ combo, onClose }: { combo?: ComboView; onClose: () => void }) {
  const d = useDashboard();
  const connections = useSel(d.connections, (s) => s.list);
  const providers = [...new Set(connections.map((c) => c.provider))].sort();
  const [form, setForm] = useState<ComboForm>(() => (combo ? formFromCombo(combo) : emptyComboForm(providers[0] ?? '')));
  const [errors, setErrors] = useState<ComboFormErrors>({});
  const { saving, formError, setFormError, run } = useFormSave({ isField: isComboField, showFieldErrors: setErrors, onSaved: onClose });
  const [dragFrom, setDragFrom] = useState<number | null>(null);
  const listId = useId();
  const info = STRATEGY_INFO[form.strategy];

  const setTargets = (fn: (t: TargetRow[]) => TargetRow[]) => {
    setForm((f) => ({ ...f, targets: fn(f.targets) }));
    // Row errors are keyed by position; after a reorder they would point at the wrong row.
    setErrors((e) => Object.fromEntries(Object.entries(e).filter(([k]) => !k.startsWith('targets'))));
  };
  const setRow = (i: number, patch: Partial<TargetRow>) => setTargets((ts) => ts.map((t, j) => (j === i ? { ...t, ...patch } : t)));
  const err = (field: string) => comboErrorFor(errors, field);

  const submit = async () => {
    setFormError(null);
    const built = buildComboInput(form);
    if (!built.ok) return setErrors(built.errors);
    setErrors({});
    await run(() => {
      const store = d.combos.getState();
      return combo ? store.save(combo.id, built.input) : store.create(built.input);
    });
  };

  const onDrop = (to: number) => (e: DragEvent) => {
    e.preventDefault();
    const from = dragFrom ?? Number(e.dataTransfer.getData('text/plain'));
    setDragFrom(null);
    if (Number.isInteger(from)) setTargets((ts) => moveTarget(ts, from, to));
  };

  return (
    <Modal
      wide
      title={combo ? `Edit ${combo.name}` : 'New combo'}
      description="A combo is a named pool of models on your connections. Agents ask for it by name, like a model; Switchyard picks the target by the strategy and fails over down the list."
      onClose={onClose}
      footer={
        <DialogFooter error={formError} onCancel={onClose}>
          <button type="button" className="btn btn-primary" disabled={saving} onClick={() => void submit()}>
            {saving ? 'Saving…' : combo ? 'Save combo' : 'Create combo'}
          </button>
        </DialogFooter>
      }
    >
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <div className="form-grid">
          <Field label="Name" required error={err('name')} hint='Agents send this as the model (or "combo/" + the name).'>
            {(p) => (
              <input {...p} value={form.name} autoComplete="off" spellCheck={false} placeholder="e.g. sonnet" onChange={(e) => setForm((f) => ({ ...f, name: e.target.value }))} />
            )}
          </Field>
          <Field label="Strategy" error={err('strategy')} hint={info.explain}>
            {(p) => (
              <select {...p} value={form.strategy} onChange={(e) => setForm((f) => ({ ...f, strategy: e.target.value as ComboStrategy }))}>
                {COMBO_STRATEGIES.map((s) => (
                  <option key={s} value={s}>
                    {STRATEGY_INFO[s].label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>

        <FormSection
          title="Targets, in order"
          hint={
            <>
              Drag a target (or use its arrows) to reorder. A target is a provider&apos;s model, on any of its connections or one pinned connection.
              {info.usesWeights ? ' The weight is its share of the traffic.' : ' Weights matter for the weighted and quota-weighted strategies.'}
            </>
          }
        >
          {err('targets') && (
            <div className="field-error" role="alert">
              {err('targets')}
            </div>
          )}
          <ol className="combo-targets" aria-label="Targets" id={listId}>
            {form.targets.map((t, i) => (
              <TargetEditor
                key={t.uid}
                row={t}
                index={i}
                count={form.targets.length}
                providers={providers}
                connections={connections}
                errors={errors}
                dragging={dragFrom === i}
                onChange={(patch) => setRow(i, patch)}
                onMove={(to) => setTargets((ts) => moveTarget(ts, i, to))}
                onRemove={() => setTargets((ts) => ts.filter((_, j) => j !== i))}
                onDragStart={(e) => {
                  setDragFrom(i);
                  e.dataTransfer.effectAllowed = 'move';
                  e.dataTransfer.setData('text/plain', String(i));
                }}
                onDragEnd={() => setDragFrom(null)}
                onDrop={onDrop(i)}
              />
            ))}
          </ol>
          <button type="button" className="btn btn-sm" onClick={() => setTargets((ts) => [...ts, emptyTarget(providers[0] ?? '')])}>
            Add target
          </button>
        </FormSection>

        <FormSection title="Options">
          <Switch
            label="Never wait in this combo"
            checked={form.noWaits}
            onChange={(v) => setForm((f) => ({ ...f, noWaits: v }))}
            description="By default, when every target is held back by a short cooldown, the request waits for the first to lift (Resilience settings → Combos). On: answer 429/503 at once instead."
          />
          <div className="form-grid">
            <Field label="Target timeout (ms)" error={err('options.targetTimeoutMs')} hint="Time each target has to start answering before the next is tried. Empty: the connection's own timeout.">
              {(p) => (
                <input {...p} inputMode="numeric" value={form.targetTimeoutMs} placeholder="e.g. 20000" onChange={(e) => setForm((f) => ({ ...f, targetTimeoutMs: e.target.value }))} />
              )}
            </Field>
            {form.strategy === 'reset-window' && (
              <Field label="Reset window (minutes)" error={err('options.resetWindowMs')} hint="A target whose quota resets sooner than this goes first. Empty: 15.">
                {(p) => (
                  <input {...p} inputMode="numeric" value={form.resetWindowMinutes} onChange={(e) => setForm((f) => ({ ...f, resetWindowMinutes: e.target.value }))} />
                )}
              </Field>
            )}
          </div>
        </FormSection>
      </form>
    </Modal>
  );
}

function TargetEditor({
  row,
  index,
  count,
  providers,
  connections,
  errors,
  dragging,
  onChange,
  onMove,
  onRemove,
  onDragStart,
  onDragEnd,
  onDrop,
}: {
  row: TargetRow;
  index: number;
  count: number;
  providers: string[];
  connections: ConnectionView[];
  errors: ComboFormErrors;
  dragging: boolean;
  onChange: (patch: Partial<TargetRow>) => void;
  onMove: (to: number) => void;
  onRemove: () => void;
  onDragStart: (e: DragEvent) => void;
  onDragEnd: () => void;
  onDrop: (e: DragEvent) => void;
}) {
  const n = index + 1;
  const ofProvider = connections.filter((c) => c.provider === row.provider);
  const models = [...new Set(ofProvider.flatMap((c) => c.models))].sort();
  const datalist = `models-${row.uid}`;
  const rowError = errors[`targets.${index}`];
  return (
    <li
      className={`combo-target-row${dragging ? ' dragging' : ''}`}
      draggable
      aria-label={`Target ${n}`}
      data-testid="combo-target-row"
      onDragStart={onDragStart}
      onDragEnd={onDragEnd}
      onDragOver={(e) => {
        e.preventDefault();
        e.dataTransfer.dropEffect = 'move';
      }}
      onDrop={onDrop}
    >
      <span className="drag-handle" aria-hidden="true" title="Drag to reorder">
        ⋮⋮
      </span>
      <span className="target-pos tabular">{n}</span>
      <Field label="Provider" error={errors[`targets.${index}.provider`]}>
        {(p) => (
          <select {...p} value={row.provider} onChange={(e) => onChange({ provider: e.target.value, connectionId: '' })}>
            {!row.provider && <option value="">Choose…</option>}
            {providers.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Model" error={errors[`targets.${index}.model`]}>
        {(p) => (
          <>
            <input {...p} list={datalist} value={row.model} autoComplete="off" spellCheck={false} placeholder="model id" onChange={(e) => onChange({ model: e.target.value })} />
            <datalist id={datalist}>
              {models.map((m) => (
                <option key={m} value={m} />
              ))}
            </datalist>
          </>
        )}
      </Field>
      <Field label="Connection" error={errors[`targets.${index}.connectionId`]}>
        {(p) => (
          <select {...p} value={row.connectionId} onChange={(e) => onChange({ connectionId: e.target.value })}>
            <option value="">Any {row.provider || 'provider'} connection</option>
            {ofProvider.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Weight" error={errors[`targets.${index}.weight`]} className="weight-field">
        {(p) => <input {...p} inputMode="numeric" value={row.weight} onChange={(e) => onChange({ weight: e.target.value })} />}
      </Field>
      <div className="row-actions">
        <button type="button" className="btn btn-ghost btn-icon" aria-label={`Move target ${n} up`} disabled={index === 0} onClick={() => onMove(index - 1)}>
          ↑
        </button>
        <button type="button" className="btn btn-ghost btn-icon" aria-label={`Move target ${n} down`} disabled={index === count - 1} onClick={() => onMove(index + 1)}>
          ↓
        </button>
        <button type="button" className="btn btn-ghost btn-icon" aria-label={`Remove target ${n}`} onClick={onRemove}>
          ×
        </button>
      </div>
      {rowError && (
        <div className="field-error target-error" role="alert">
          {rowError}
        </div>
      )}
    </li>
  );
}
