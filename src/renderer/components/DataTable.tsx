// The data table every page draws: an aria-label naming the table, one header row (column titles,
// optionally a trailing Actions column whose title only a screen reader reads) and the rows the
// page gives. A full table scrolls sideways in its own wrapper; a compact one (inside a card or a
// log entry's details) does not. RowAction is the one-button cell at the end of a row.
import type { ReactNode } from 'react';

/** A column: its title, or a header cell with a class or tooltip (a checkbox, a hidden label). */
export interface ColumnSpec {
  key: string;
  label: ReactNode;
  className?: string;
  title?: string;
}

/** A falsy entry leaves a column out (one shown only under a setting or a strategy). */
export type Column = string | ColumnSpec | false | null | undefined;

export function DataTable({
  label,
  columns,
  actions = false,
  compact = false,
  className,
  children,
}: {
  label: string;
  columns: readonly Column[];
  /** A last column for the row's buttons, titled "Actions" for screen readers. */
  actions?: boolean;
  /** Tighter cells and no scrolling wrapper. */
  compact?: boolean;
  className?: string;
  children: ReactNode;
}) {
  const classes = ['table', compact ? 'table-compact' : null, className].filter(Boolean).join(' ');
  const table = (
    <table className={classes} aria-label={label}>
      <thead>
        <tr>
          {columns.map((c) =>
            !c ? null : typeof c === 'string' ? (
              <th key={c}>{c}</th>
            ) : (
              <th key={c.key} className={c.className} title={c.title}>
                {c.label}
              </th>
            ),
          )}
          {actions && (
            <th className="actions-col">
              <span className="sr-only">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
  return compact ? table : <div className="table-wrap">{table}</div>;
}

/** The Actions cell of a row with its one small button. */
export function RowAction({
  children,
  label,
  onClick,
  disabled,
  title,
  variant,
}: {
  children: ReactNode;
  /** The button's accessible name (it names the row: "Clear glm-1"). */
  label: string;
  onClick: () => void;
  disabled?: boolean;
  title?: string;
  /** Extra button classes ("btn-ghost", "btn-ghost danger-text"). */
  variant?: string;
}) {
  return (
    <td className="actions-col">
      <button type="button" className={`btn btn-sm${variant ? ` ${variant}` : ''}`} disabled={disabled} title={title} onClick={onClick} aria-label={label}>
        {children}
      </button>
    </td>
  );
}
