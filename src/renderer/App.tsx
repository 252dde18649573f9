import { useEffect, useMemo, useState } from 'react';
import type { Bridge } from '../shared/contract';
import type { HealthView } from '../shared/model';
import { connectBridge, saveToken, takeToken, type BridgeStatus } from './bridge';

export function App() {
  const [token, setToken] = useState<string | null>(() => takeToken(window.location, window.localStorage, window.history));
  const [status, setStatus] = useState<BridgeStatus>('connecting');
  const bridge = useMemo<Bridge | null>(() => connectBridge(token, setStatus), [token]);
  const [health, setHealth] = useState<HealthView | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!bridge) return;
    bridge.getHealth().then(setHealth, (e: Error) => setError(e.message));
    return bridge.on('health', setHealth);
  }, [bridge]);

  if (!bridge || status === 'unauthorized') {
    return <TokenGate onToken={(t) => (saveToken(window.localStorage, t), setToken(t))} rejected={status === 'unauthorized'} />;
  }
  return (
    <main className="shell">
      <h1>Switchyard</h1>
      {error && <p role="alert">{error}</p>}
      {health && (
        <section aria-label="Health" className="card">
          <div data-testid="health-status">Status: {health.status}</div>
          <div>Version {health.version}</div>
          <div data-testid="proxy-url">Proxy: {health.proxy.url ?? 'not listening'}</div>
        </section>
      )}
    </main>
  );
}

function TokenGate({ onToken, rejected }: { onToken: (t: string) => void; rejected: boolean }) {
  const [value, setValue] = useState('');
  return (
    <main className="shell">
      <h1>Switchyard</h1>
      <form
        className="card"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) onToken(value.trim());
        }}
      >
        <p>{rejected ? 'That management token was not accepted.' : 'Enter the management token to open the dashboard.'}</p>
        <p className="muted">It is printed by "npm run serve" and stored in the data folder as management-token.</p>
        <input aria-label="Management token" value={value} onChange={(e) => setValue(e.target.value)} />
        <button type="submit">Open</button>
      </form>
    </main>
  );
}
