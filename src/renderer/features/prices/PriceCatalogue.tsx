// Prices: what each model costs per million tokens (input, output, and prompt-cache reads and
// writes where the provider prices them apart), with the day each price dates from and whether it
// is built in or edited here. An edited price overrides the built-in one and prices every request
// that finishes after it; a reset brings the built-in price back. The request log's cost and the
// Overview's totals come from this list, and so do the combos that pick the cheapest model.
import { useState } from 'react';
import { DataTable } from '../../components/DataTable';
import { LoadState } from '../../components/LoadState';
import { Badge, Card, EmptyState, Field, PageHeader } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import { hrefOf } from '../../hooks/useRoute';
import type { PriceEntry } from '../../../shared/usage';
import { checkPriceDraft, draftOf, EMPTY_DRAFT, type PriceDraft } from '../../stores/pricesStore';

const usd = (n: number | null, input: number) =>
  n === null ? <span className="muted" title="Not priced apart: the input price applies">{`$${input}`}</span> : `$${n}`;

function PriceForm({ initial, editing, onDone }: { initial: PriceDraft; editing: boolean; onDone: () => void }) {
  const d = useDashboard();
  const [draft, setDraft] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const busy = useSel(d.prices, (s) => !!s.pending[draft.model.trim()]);
  const field = (k: keyof PriceDraft) => (e: React.ChangeEvent<HTMLInputElement>) => {
    setDraft({ ...draft, [k]: e.target.value });
    setError(null);
  };
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    const checked = checkPriceDraft(draft);
    if (!checked.ok) return setError(checked.message);
    const problem = await d.prices.getState().save(draft);
    if (problem) setError(problem);
    else onDone();
  };
  return (
    <form className="price-form" onSubmit={submit} noValidate aria-label={editing ? `Edit the price of ${draft.model}` : 'Add a price'} data-testid="price-form">
      <div className="form-grid">
        <Field label="Model, or the start of its name" required hint="A name like gpt-4o also prices gpt-4o-2024-08-06.">
          {(p) => <input {...p} value={draft.model} onChange={field('model')} readOnly={editing} name="model" autoComplete="off" />}
        </Field>
        <Field label="Input ($ per million tokens)" required>
          {(p) => <input {...p} value={draft.input} onChange={field('input')} name="input" inputMode="decimal" />}
        </Field>
        <Field label="Output ($ per million tokens)" required>
          {(p) => <input {...p} value={draft.output} onChange={field('output')} name="output" inputMode="decimal" />}
        </Field>
        <Field label="Cache read ($ per million)" hint="Empty: the input price.">
          {(p) => <input {...p} value={draft.cacheRead} onChange={field('cacheRead')} name="cacheRead" inputMode="decimal" />}
        </Field>
        <Field label="Cache write ($ per million)" hint="Empty: the input price.">
          {(p) => <input {...p} value={draft.cacheWrite} onChange={field('cacheWrite')} name="cacheWrite" inputMode="decimal" />}
        </Field>
        <Field label="Price as of" hint="Year-month-day; empty: today.">
          {(p) => <input {...p} value={draft.asOf} onChange={field('asOf')} name="asOf" placeholder="2025-10-01" />}
        </Field>
      </div>
      {error && (
        <div className="field-error" role="alert" data-testid="price-error">
          {error}
        </div>
      )}
      <div className="form-actions">
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save price'}
        </button>
        <button type="button" className="btn btn-ghost" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function sourceOf(e: PriceEntry) {
  if (e.fromSetting) return <Badge tone="neutral" title="From the Model prices setting">from settings</Badge>;
  return e.source === 'edited' ? <Badge tone="info">edited</Badge> : <span className="muted">built in</span>;
}

export function PriceCatalogue() {
  const d = useDashboard();
  const view = useSel(d.prices, (s) => s.view);
  const pending = useSel(d.prices, (s) => s.pending);
  const [form, setForm] = useState<{ draft: PriceDraft; editing: boolean } | null>(null);
  const [filter, setFilter] = useState('');
  const rows = view ? view.entries.filter((e) => e.model.toLowerCase().includes(filter.trim().toLowerCase())) : [];

  return (
    <div className="page">
      <PageHeader
        title="Prices"
        description={
          <>
            What each model costs, in US dollars per million tokens. The request log shows each request&apos;s cost from these prices, worked out when the
            request finished. Tokens read from or written to a provider&apos;s prompt cache are priced at their own rate, and counted once. See the{' '}
            <a href={hrefOf('logs')}>Request log</a>.
          </>
        }
        actions={
          <button type="button" className="btn btn-primary" onClick={() => setForm({ draft: EMPTY_DRAFT, editing: false })} data-testid="price-add">
            Add a price
          </button>
        }
      />
      {form && (
        <Card title={form.editing ? `Edit the price of ${form.draft.model}` : 'Add a price'}>
          <PriceForm key={`${form.draft.model}-${form.editing}`} initial={form.draft} editing={form.editing} onDone={() => setForm(null)} />
        </Card>
      )}
      {view === null ? (
        <LoadState topics="prices" what="prices" />
      ) : (
        <Card
          title="Model prices"
          actions={
            <input
              type="search"
              aria-label="Find a model"
              placeholder="Find a model"
              value={filter}
              onChange={(e) => setFilter(e.target.value)}
              className="input-small"
            />
          }
        >
          {rows.length === 0 ? (
            <EmptyState title={filter ? 'No model matches' : 'No prices'}>Add a price for a model, or for the start of its name.</EmptyState>
          ) : (
            <DataTable label="Model prices" columns={['Model', 'Input', 'Output', 'Cache read', 'Cache write', 'As of', 'Source']} actions>
              {rows.map((e) => (
                <tr key={e.model} data-testid="price-row" data-model={e.model}>
                  <td>
                    <strong>{e.model}</strong>
                  </td>
                  <td className="tabular">${e.price.input}</td>
                  <td className="tabular">${e.price.output}</td>
                  <td className="tabular">{usd(e.price.cacheRead, e.price.input)}</td>
                  <td className="tabular">{usd(e.price.cacheWrite, e.price.input)}</td>
                  <td className="tabular">{e.asOf || <span className="muted">unknown</span>}</td>
                  <td>{sourceOf(e)}</td>
                  <td className="actions-col">
                    <button
                      type="button"
                      className="btn btn-sm btn-ghost"
                      aria-label={`Edit the price of ${e.model}`}
                      onClick={() => setForm({ draft: draftOf(e), editing: true })}
                    >
                      Edit
                    </button>
                    {e.source === 'edited' && !e.fromSetting && (
                      <button
                        type="button"
                        className="btn btn-sm btn-ghost"
                        disabled={pending[e.model]}
                        onClick={() => void d.prices.getState().reset(e.model)}
                        aria-label={`Reset the price of ${e.model}`}
                      >
                        Reset
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </Card>
      )}
    </div>
  );
}
