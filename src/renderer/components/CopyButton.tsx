// A copy button that says "Copied" for a moment. The text can be fetched on demand (e.g. a key
// that is revealed only when copied).
import { useEffect, useState } from 'react';
import { copyText } from '../lib/clipboard';

export function CopyButton({
  text,
  getText,
  label = 'Copy',
  ariaLabel,
  className = 'btn btn-sm',
}: {
  text?: string;
  getText?: () => Promise<string | null>;
  label?: string;
  ariaLabel?: string;
  className?: string;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const t = setTimeout(() => setState('idle'), 1_600);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button
      type="button"
      className={className}
      aria-label={ariaLabel}
      onClick={async () => {
        const value = text ?? (getText ? await getText() : null);
        if (value === null || value === undefined) return;
        setState((await copyText(value)) ? 'copied' : 'failed');
      }}
    >
      <span aria-live="polite">{state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : label}</span>
    </button>
  );
}

export function CodeBlock({
  code,
  where,
  title,
  copyText: copy,
}: {
  code: string;
  where?: string;
  title?: string;
  /** What the copy button copies when it differs from what is shown (e.g. the real key). */
  copyText?: () => Promise<string | null>;
}) {
  return (
    <figure className="code-block">
      <figcaption>
        <span className="code-title">{title}</span>
        {where && <span className="code-where">{where}</span>}
        <CopyButton text={copy ? undefined : code} getText={copy} ariaLabel={`Copy ${title ?? 'snippet'}${where ? ` (${where})` : ''}`} className="btn btn-sm btn-ghost" />
      </figcaption>
      <pre>
        <code>{code}</code>
      </pre>
    </figure>
  );
}
