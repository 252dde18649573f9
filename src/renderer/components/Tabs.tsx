// Accessible tabs: a tablist with arrow-key movement and one tab panel.
import { useId, useRef, type ReactNode } from 'react';

export function Tabs<T extends string>({
  label,
  tabs,
  value,
  onChange,
  children,
}: {
  label: string;
  tabs: { id: T; label: string }[];
  value: T;
  onChange: (id: T) => void;
  children: ReactNode;
}) {
  const base = useId();
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  const index = Math.max(0, tabs.findIndex((t) => t.id === value));
  const move = (to: number) => {
    const i = (to + tabs.length) % tabs.length;
    onChange(tabs[i]!.id);
    refs.current[i]?.focus();
  };
  return (
    <div className="tabs">
      <div role="tablist" aria-label={label} className="tablist">
        {tabs.map((t, i) => (
          <button
            key={t.id}
            ref={(el) => {
              refs.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`${base}-t-${t.id}`}
            aria-selected={t.id === value}
            aria-controls={`${base}-p`}
            tabIndex={t.id === value ? 0 : -1}
            className={`tab${t.id === value ? ' active' : ''}`}
            onClick={() => onChange(t.id)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowRight') move(index + 1);
              else if (e.key === 'ArrowLeft') move(index - 1);
              else if (e.key === 'Home') move(0);
              else if (e.key === 'End') move(tabs.length - 1);
              else return;
              e.preventDefault();
            }}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-p`} aria-labelledby={`${base}-t-${value}`} className="tabpanel">
        {children}
      </div>
    </div>
  );
}
