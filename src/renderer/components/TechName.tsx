// The technical name behind a plain-language label, one click away: a small circled "i" button (drawn in CSS, so no font needs the ⓘ glyph) that
// reveals the name (a setting key, an error code, a requirement id) in monospace. Closed, the name
// is not rendered at all, so what a user reads by default stays plain (tests/e2e/jargon.ts).
import { useState } from 'react';

export function TechName({ name, label = 'Show the technical name' }: { name: string; label?: string }) {
  const [open, setOpen] = useState(false);
  return (
    <span className="tech-name">
      <button
        type="button"
        className="tech-name-toggle"
        aria-expanded={open}
        aria-label={open ? 'Hide the technical name' : label}
        title={open ? 'Hide the technical name' : label}
        onClick={(e) => {
          e.stopPropagation();
          setOpen((v) => !v);
        }}
      >
        i
      </button>
      {open && (
        <code className="mono tech-name-value" data-tech-name>
          {name}
        </code>
      )}
    </span>
  );
}
