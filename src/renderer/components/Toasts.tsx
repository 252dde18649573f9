// The toast region: results and errors that belong to no single field. Errors stay until
// dismissed; other toasts leave after a few seconds.
import { useEffect } from 'react';
import { useDashboard, useSel } from '../hooks/dashboardContext';
import type { Toast } from '../stores/toastStore';

function ToastItem({ t, onDismiss }: { t: Toast; onDismiss: (id: number) => void }) {
  useEffect(() => {
    if (t.kind === 'error') return;
    const timer = setTimeout(() => onDismiss(t.id), 5_000);
    return () => clearTimeout(timer);
  }, [t, onDismiss]);
  return (
    <div className={`toast toast-${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
      <span className="toast-message">{t.message}</span>
      <button type="button" className="btn btn-ghost btn-icon" aria-label="Dismiss" onClick={() => onDismiss(t.id)}>
        ×
      </button>
    </div>
  );
}

export function Toasts() {
  const d = useDashboard();
  const items = useSel(d.toasts, (s) => s.items);
  const dismiss = useSel(d.toasts, (s) => s.dismiss);
  return (
    <div className="toasts" aria-live="polite">
      {items.map((t) => (
        <ToastItem key={t.id} t={t} onDismiss={dismiss} />
      ))}
    </div>
  );
}
