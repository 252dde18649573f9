// A dialog form's save: the button waits while it runs, success closes the dialog, an engine error
// naming one of the form's fields goes next to that field and any other above the buttons.
import { useState } from 'react';
import { describeError, messageForField } from '../lib/errors';

export function useFormSave({
  isField,
  showFieldErrors,
  onSaved,
}: {
  /** Whether the form has an input for a field the engine named. */
  isField: (field: string) => boolean;
  showFieldErrors: (errors: Record<string, string>) => void;
  onSaved: () => void;
}) {
  const [saving, setSaving] = useState(false);
  const [formError, setFormError] = useState<string | null>(null);
  const run = async (save: () => Promise<unknown>) => {
    setSaving(true);
    try {
      await save();
      onSaved();
    } catch (e) {
      const u = describeError(e);
      if (u.field && isField(u.field)) showFieldErrors({ [u.field]: messageForField(u) });
      else setFormError(u.message);
    } finally {
      setSaving(false);
    }
  };
  return { saving, formError, setFormError, run };
}
