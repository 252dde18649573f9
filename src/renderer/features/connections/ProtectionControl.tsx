// Rate-limit protection as three choices (issue 22): Automatic, On, Off, with what the engine does
// now written beside it, read from its admission view. The choice is the stored mode; the line under
// it is the effective state, so the control never shows one thing while the engine does another.
import { useId } from 'react';
import type { AdmissionView, AuthClass, RateLimitProtectionMode } from '../../../shared/model';

const CHOICES: { mode: RateLimitProtectionMode; label: string; hint: string }[] = [
  { mode: 'auto', label: 'Automatic', hint: 'Switchyard decides: on for connections that use an API key, while that rule is on in Settings' },
  { mode: 'on', label: 'On', hint: 'Always send this connection’s requests through its rate-limit queue' },
  { mode: 'off', label: 'Off', hint: 'Never queue this connection’s requests, even when the automatic rule would' },
];

export const protectionModeLabel = (mode: RateLimitProtectionMode): string => CHOICES.find((c) => c.mode === mode)?.label ?? mode;

/** The effective state in words: what the engine does now, and why. */
export function effectiveProtection(
  mode: RateLimitProtectionMode,
  view: Pick<AdmissionView, 'protected' | 'protectionMode'> | undefined,
  authClass: AuthClass,
): string {
  if (mode === 'on') return 'Protected now: switched on';
  if (mode === 'off') return 'Not protected now: switched off';
  // A view from before the change (the engine's next update is on its way) says nothing about automatic.
  if (!view || view.protectionMode !== mode) return authClass === 'apikey' ? 'Automatic: protected while this connection is enabled' : 'Automatic: not protected';
  if (view.protected) return 'Protected now: on automatically (API-key connection)';
  return authClass === 'apikey' ? 'Not protected now: the automatic rule is off in Settings' : 'Not protected now: automatic protection covers API-key connections only';
}

export function ProtectionControl({
  mode,
  view,
  authClass,
  disabled,
  onChange,
  compact,
}: {
  mode: RateLimitProtectionMode;
  view: Pick<AdmissionView, 'protected' | 'protectionMode'> | undefined;
  authClass: AuthClass;
  disabled?: boolean;
  onChange: (mode: RateLimitProtectionMode) => void;
  compact?: boolean;
}) {
  const id = useId();
  return (
    <div className={`protection${compact ? ' compact' : ''}`}>
      <div role="radiogroup" aria-labelledby={`${id}-l`} aria-describedby={`${id}-s`} className="segmented">
        <span id={`${id}-l`} className="protection-label">
          Rate-limit protection
        </span>
        {CHOICES.map((c) => (
          <label key={c.mode} className={`segment${mode === c.mode ? ' active' : ''}`} title={c.hint}>
            <input
              type="radio"
              name={`${id}-mode`}
              value={c.mode}
              checked={mode === c.mode}
              disabled={disabled}
              onChange={() => onChange(c.mode)}
            />
            {c.label}
          </label>
        ))}
      </div>
      <span id={`${id}-s`} className="hint" data-testid="protection-effective">
        {effectiveProtection(mode, view, authClass)}
      </span>
    </div>
  );
}
