// The credentials of a Claude subscription in the connection dialog, three ways in: "Sign in with
// Claude" (PKCE; the sign-in page opens in the system browser and comes back to a loopback callback,
// or the user pastes the code the page shows), "Import from Claude Code" (its credentials file on
// this computer), and "Paste tokens" (saved with the dialog's own button). A one-line notice says
// that the account's own terms apply.
import { useEffect, useRef, useState } from 'react';
import { Tabs } from '../../components/Tabs';
import { Field } from '../../components/ui';
import { useDashboard, useSel } from '../../hooks/dashboardContext';
import type { ConnectionForm } from '../../lib/connectionForm';
import { describeError } from '../../lib/errors';
import type { ClaudeTargetInput } from '../../stores/claudeStore';
import type { ClaudeLoginStart, ConnectionView } from '../../../shared/model';

export type ClaudeTab = 'signin' | 'import' | 'paste';

const TABS: { id: ClaudeTab; label: string }[] = [
  { id: 'signin', label: 'Sign in with Claude' },
  { id: 'import', label: 'Import from Claude Code' },
  { id: 'paste', label: 'Paste tokens' },
];

/** Where the credentials go: the connection being edited, or a new one from the form's fields. */
function targetOf(form: ConnectionForm, connection: ConnectionView | undefined): ClaudeTargetInput {
  if (connection) return { connectionId: connection.id };
  const t: ClaudeTargetInput = {};
  if (form.name.trim()) t.name = form.name.trim();
  if (form.provider.trim()) t.provider = form.provider.trim();
  if (form.baseUrl.trim()) t.baseUrl = form.baseUrl.trim();
  const p = Number(form.priority.trim());
  if (form.priority.trim() && Number.isInteger(p)) t.priority = p;
  return t;
}

const openInBrowser = (url: string) => void window.open(url, '_blank', 'noopener');

export function ClaudeCredentials({
  form,
  set,
  connection,
  tab,
  onTab,
  pasteError,
  check,
  onDone,
}: {
  form: ConnectionForm;
  set: <K extends keyof ConnectionForm>(k: K, v: ConnectionForm[K]) => void;
  connection?: ConnectionView;
  tab: ClaudeTab;
  onTab: (t: ClaudeTab) => void;
  pasteError?: string;
  /** Checks the rest of the form before a new account is made (false: its errors are shown). */
  check: () => boolean;
  /** The account is stored (signed in or imported). */
  onDone: (connectionId: string) => void;
}) {
  const d = useDashboard();
  const store = d.claude.getState();
  const [login, setLogin] = useState<ClaudeLoginStart | null>(null);
  const [code, setCode] = useState('');
  const [error, setError] = useState<{ message: string; field?: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const state = useSel(d.claude, (s) => (login ? s.logins[login.loginId] : undefined));
  const link = useSel(d.app, (s) => s.link);
  /** The sign-in still open here (cancelled when the dialog closes halfway). */
  const openLogin = useRef<string | null>(null);
  const unwatch = useRef<(() => void) | null>(null);
  const failed = state?.status === 'failed' ? { message: state.error?.message ?? 'The sign-in did not finish.' } : null;
  const active = login && !failed ? login : null;

  // After a dropped live link the outcome's push may be lost: ask once.
  useEffect(() => {
    if (link === 'open' && openLogin.current) void d.claude.getState().checkLogin(openLogin.current);
  }, [link, d]);
  // A dialog closed halfway stops its sign-in (the loopback listener goes away).
  useEffect(
    () => () => {
      unwatch.current?.();
      if (openLogin.current) void d.claude.getState().cancelLogin(openLogin.current);
    },
    [d],
  );

  /** Follows one sign-in's pushes until it is done. */
  const watch = (loginId: string) => {
    unwatch.current?.();
    const off = d.claude.subscribe((s) => {
      const v = s.logins[loginId];
      if (v?.status === 'done' && v.connectionId) {
        off();
        openLogin.current = null;
        onDone(v.connectionId);
      } else if (!v || v.status === 'failed') {
        off();
        openLogin.current = null;
      }
    });
    unwatch.current = off;
  };

  /** Runs one step of the sign-in or import; the buttons wait, and its error is shown. */
  const step = async (run: () => Promise<void>) => {
    setBusy(true);
    try {
      await run();
    } catch (e) {
      const u = describeError(e);
      setError({ message: u.message, field: u.field });
    } finally {
      setBusy(false);
    }
  };

  const start = async (mode: 'loopback' | 'paste') => {
    setError(null);
    if (!check()) return;
    await step(async () => {
      if (openLogin.current) void store.cancelLogin(openLogin.current);
      setCode('');
      const s = await store.startLogin({ ...targetOf(form, connection), mode }, openInBrowser);
      openLogin.current = s.loginId;
      watch(s.loginId);
      setLogin(s);
    });
  };

  const finish = async () => {
    if (!active) return;
    if (!code.trim()) return setError({ message: 'paste the code the sign-in page shows', field: 'code' });
    setError(null);
    await step(async () => {
      const c = await store.completeLogin(active.loginId, code.trim());
      unwatch.current?.();
      openLogin.current = null;
      onDone(c.id);
    });
  };

  const doImport = async () => {
    setError(null);
    if (!check()) return;
    await step(async () => {
      const c = await store.importCredentials(targetOf(form, connection));
      onDone(c.id);
    });
  };

  // A code error sits next to the code input; any other (or the sign-in's own failure) below the panel.
  const boxError = error ? (error.field !== 'code' ? error : null) : failed;
  const errorBox = boxError && (
    <div className="form-error claude-error" role="alert">
      {boxError.message}
    </div>
  );

  return (
    <div className="claude-credentials">
      <p className="claude-terms callout callout-info" data-testid="claude-terms">
        Your Claude plan's own terms of use apply to how you use this account through Switchyard.
      </p>
      <Tabs label="How to connect the Claude account" tabs={TABS} value={tab} onChange={onTab}>
        {tab === 'signin' && (
          <div className="claude-panel">
            {!active ? (
              <>
                <p className="hint">
                  Opens Claude's sign-in page in your browser. Approve there, and Switchyard receives the account on this computer.
                </p>
                <div className="claude-actions">
                  <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void start('loopback')}>
                    {connection ? 'Sign in again' : 'Sign in with Claude'}
                  </button>
                  <button type="button" className="btn btn-ghost btn-sm" disabled={busy} onClick={() => void start('paste')}>
                    Browser on another device? Use a code instead
                  </button>
                </div>
              </>
            ) : (
              <>
                <p className="hint" aria-live="polite">
                  {active.mode === 'loopback'
                    ? 'Waiting for you to approve in the browser… If the page shows a code instead, paste it below.'
                    : 'Approve in the browser, then paste the code the page shows.'}{' '}
                  <a href={active.authorizeUrl} target="_blank" rel="noopener noreferrer">
                    Open the sign-in page
                  </a>
                </p>
                <div className="claude-code-row">
                  <Field label="Code from the sign-in page" error={error?.field === 'code' ? error.message : undefined}>
                    {(p) => (
                      <input
                        {...p}
                        value={code}
                        autoComplete="off"
                        spellCheck={false}
                        placeholder="code#state"
                        onChange={(e) => setCode(e.target.value)}
                        onKeyDown={(e) => {
                          if (e.key === 'Enter') {
                            e.preventDefault();
                            void finish();
                          }
                        }}
                      />
                    )}
                  </Field>
                  <button type="button" className="btn" disabled={busy} onClick={() => void finish()}>
                    Finish sign-in
                  </button>
                  <button
                    type="button"
                    className="btn btn-ghost btn-sm"
                    onClick={() => {
                      void store.cancelLogin(active.loginId);
                      unwatch.current?.();
                      openLogin.current = null;
                      setLogin(null);
                      setError(null);
                    }}
                  >
                    Cancel sign-in
                  </button>
                </div>
              </>
            )}
            {errorBox}
          </div>
        )}
        {tab === 'import' && (
          <div className="claude-panel">
            <p className="hint">
              Uses the account Claude Code is signed in with on this computer (<code className="mono">~/.claude/.credentials.json</code>). On macOS Claude
              Code keeps it in the Keychain: sign in or paste instead.
            </p>
            <div className="claude-actions">
              <button type="button" className="btn btn-primary" disabled={busy} onClick={() => void doImport()}>
                Import from Claude Code
              </button>
            </div>
            {errorBox}
          </div>
        )}
        {tab === 'paste' && (
          <div className="claude-panel form-grid">
            <Field
              label="Access token"
              error={pasteError}
              hint={
                connection?.secret.set
                  ? `Saved token ${connection.secret.masked ?? ''}. Leave empty to keep it.`
                  : "An OAuth access token (e.g. from claude setup-token), or the whole JSON of Claude Code's credentials file. Stored encrypted."
              }
            >
              {(p) => <input {...p} type="password" value={form.secret} autoComplete="off" onChange={(e) => set('secret', e.target.value)} />}
            </Field>
            <Field label="Refresh token" hint="Optional: without it the token cannot be renewed when it expires.">
              {(p) => <input {...p} type="password" value={form.claudeRefreshToken} autoComplete="off" onChange={(e) => set('claudeRefreshToken', e.target.value)} />}
            </Field>
            <Field label="Expires at" hint="Optional: an ISO date or epoch milliseconds.">
              {(p) => <input {...p} value={form.claudeExpiresAt} autoComplete="off" spellCheck={false} placeholder="2026-12-31T12:00:00Z" onChange={(e) => set('claudeExpiresAt', e.target.value)} />}
            </Field>
          </div>
        )}
      </Tabs>
    </div>
  );
}
