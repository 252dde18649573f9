// The dashboard's root: in a browser it is opened by the management token, held in a session
// cookie the page cannot read (a `?token=` link is exchanged for it by the server; otherwise the
// token gate asks and exchanges a pasted token); in the desktop app the preload's Bridge needs none.
// Then the sidebar layout with one page per route.
import { useEffect, useState } from 'react';
import { Sidebar } from './components/Sidebar';
import { Toasts } from './components/Toasts';
import { closeSession, connectBridge, forgetLegacyToken, openSession } from './bridge';
import { AgentPage } from './features/agent/AgentPage';
import { AppPage } from './features/app/AppPage';
import { BreakersPage } from './features/breakers/BreakersPage';
import { CombosPage } from './features/combos/CombosPage';
import { ConnectionsPage } from './features/connections/ConnectionsPage';
import { CooldownsPage } from './features/cooldowns/CooldownsPage';
import { LeasesPage } from './features/leases/LeasesPage';
import { PriceCatalogue } from './features/prices/PriceCatalogue';
import { ErrorRulesPage } from './features/errorRules/ErrorRulesPage';
import { LogsPage } from './features/logs/LogsPage';
import { OverviewPage } from './features/overview/OverviewPage';
import { SessionsPage } from './features/sessions/SessionsPage';
import { SettingsPage } from './features/settings/SettingsPage';
import { TeamPage } from './features/team/TeamPage';
import { DashboardContext } from './hooks/dashboardContext';
import { landingPage, useRoute, type PageId } from './hooks/useRoute';
import { Spinner } from './components/ui';
import { useSel } from './hooks/dashboardContext';
import { createDashboard } from './stores/dashboard';

const TITLES: Record<PageId, string> = {
  overview: 'Overview',
  agent: 'Connect your agent',
  connections: 'Connections',
  combos: 'Combos',
  cooldowns: 'Cooldown manager',
  breakers: 'Provider breakers',
  errorRules: 'Error rules',
  settings: 'Resilience settings',
  prices: 'Prices',
  logs: 'Request log',
  sessions: 'Sessions',
  leases: 'Leases',
  team: 'Team',
  app: 'App & token',
};

/** In a browser: the gate is shown once the engine refused the session (or none was open). */
type Gate = { open: false } | { open: true; rejected: boolean };

export function App() {
  const desktop = typeof window !== 'undefined' && !!window.api;
  const [gate, setGate] = useState<Gate>({ open: false });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (!desktop) forgetLegacyToken(window.localStorage);
  }, [desktop]);

  if (!desktop && gate.open) {
    return (
      <TokenGate
        rejected={gate.rejected}
        onToken={async (t) => {
          const r = await openSession(t);
          if (r === 'ok') {
            setGate({ open: false });
            setAttempt((n) => n + 1);
          } else setGate({ open: true, rejected: true });
        }}
      />
    );
  }
  return (
    <Connected
      key={attempt}
      onUnauthorized={() => setGate({ open: true, rejected: false })}
      onForgetToken={
        desktop
          ? undefined
          : () => {
              void closeSession().then(() => setGate({ open: true, rejected: false }));
            }
      }
    />
  );
}

function Connected({ onUnauthorized, onForgetToken }: { onUnauthorized: () => void; onForgetToken?: () => void }) {
  const [dash] = useState(() =>
    createDashboard({
      connect: (onStatus) => connectBridge(onStatus),
      onUnauthorized,
    }),
  );
  useEffect(() => {
    void dash.start();
    return () => dash.stop();
  }, [dash]);
  const landing = useSel(dash.connections, (s) => s.list.length);
  const loaded = useSel(dash.connections, (s) => s.loaded);
  const failed = useSel(dash.loads, (s) => s.errors.connections !== undefined);
  const page = useRoute(landingPage({ loaded, count: landing, failed }));
  useEffect(() => {
    document.title = page ? `${TITLES[page]} · Switchyard` : 'Switchyard';
  }, [page]);

  return (
    <DashboardContext.Provider value={dash}>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <div className="layout">
        <Sidebar page={page} />
        <main className="content" id="main" tabIndex={-1}>
          {page === null && <Spinner label="Loading the dashboard" />}
          {page === 'overview' && <OverviewPage />}
          {page === 'agent' && <AgentPage />}
          {page === 'connections' && <ConnectionsPage />}
          {page === 'combos' && <CombosPage />}
          {page === 'cooldowns' && <CooldownsPage />}
          {page === 'breakers' && <BreakersPage />}
          {page === 'errorRules' && <ErrorRulesPage />}
          {page === 'settings' && <SettingsPage />}
          {page === 'prices' && <PriceCatalogue />}
          {page === 'logs' && <LogsPage />}
          {page === 'sessions' && <SessionsPage />}
          {page === 'leases' && <LeasesPage />}
          {page === 'team' && <TeamPage />}
          {page === 'app' && <AppPage onForgetToken={onForgetToken} />}
        </main>
      </div>
      <Toasts />
    </DashboardContext.Provider>
  );
}

function TokenGate({ onToken, rejected }: { onToken: (t: string) => Promise<void>; rejected: boolean }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  return (
    <main className="gate">
      <form
        className="gate-card"
        onSubmit={(e) => {
          e.preventDefault();
          const t = value.trim();
          if (!t) setError('Paste the management token first.');
          else void onToken(t);
        }}
      >
        <div className="brand gate-brand">
          <span className="brand-mark" aria-hidden="true">
            ⇄
          </span>
          <span className="brand-name">Switchyard</span>
        </div>
        <h1>Open the dashboard</h1>
        {rejected ? (
          <p className="callout callout-danger" role="alert">
            That management token was not accepted. It may have been mistyped or replaced.
          </p>
        ) : (
          <p>Enter the management token to open the dashboard.</p>
        )}
        <label htmlFor="gate-token">Management token</label>
        <input
          id="gate-token"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={value}
          aria-invalid={error ? true : undefined}
          aria-describedby="gate-hint"
          onChange={(e) => {
            setValue(e.target.value);
            setError(null);
          }}
        />
        {error && (
          <div className="field-error" role="alert">
            {error}
          </div>
        )}
        <p id="gate-hint" className="hint">
          <code className="mono">npm run serve -- --dashboard-link</code> prints a link that opens the dashboard. The token is also stored in the data
          folder as <code className="mono">management-token</code>.
        </p>
        <button type="submit" className="btn btn-primary">
          Open
        </button>
      </form>
    </main>
  );
}
